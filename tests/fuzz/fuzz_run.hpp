// Running generated programs: the CPU checks (interpreter, passes, lowering, ptxas) and the
// GPU comparison with the interpreter, each giving a reproduction when a seed fails.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "program_gen.hpp"
#include "tessel/jit/device.hpp"

namespace fuzz {

// The command that re-runs one seed (printing its program): the CPU checks or the GPU one.
std::string rerun_command(uint64_t seed, bool gpu);

// How many programs used each op kind, and how many outputs were exact / within a bound.
struct Coverage {
  std::map<std::string, int> ops;
  int exact_outputs = 0, bounded_outputs = 0, programs = 0;
  void add(const Program& p);
  std::string str() const;
};

struct CpuResult {
  uint64_t seed = 0;
  std::string failure;  // "" when every check passed; else what failed and the reproduction
  double s_generate = 0, s_interp = 0, s_passes = 0, s_lower = 0, s_ptxas = 0;
};

// Generates the program of `seed`, verifies it, checks that the printer and parser round-trip
// it, runs it on the interpreter, runs the JIT's passes and the interpreter again (every
// written byte must agree: the passes keep the meaning), lowers it for each arch and, when
// `ptxas` is a path, assembles the PTX with it. Thread-safe.
CpuResult check_on_cpu(uint64_t seed, const std::vector<std::string>& archs, const std::string& ptxas,
                       Coverage* coverage = nullptr);

// One program made ready for the GPU on a worker thread: generated, run on the interpreter,
// compiled for the device (one compile, the seed's num_warps and programs_per_cta).
struct GpuCase {
  uint64_t seed = 0;
  Program program;
  std::vector<std::vector<std::byte>> before, interp;
  std::shared_ptr<const tessel::ir::Function> fin;
  std::shared_ptr<tessel::jit::Executable> exe;
  std::string failure;  // a failure before the launch (generator, interpreter, compile)
};
GpuCase prepare_gpu_case(uint64_t seed, tessel::jit::Device& dev);

// Launches a prepared case on the GPU and compares every written buffer with the interpreter's
// (exact, or within the model's bound); "" when they agree, else the report: the differing
// buffers and elements, the program reduced to the stores of the first differing buffer (when
// that still differs), the launch and the re-run command. Calls on one thread at a time.
std::string run_gpu_case(GpuCase& c, tessel::jit::Device& dev);

}  // namespace fuzz
