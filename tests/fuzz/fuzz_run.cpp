// Running generated programs on the CPU (interpreter, passes, lowering, ptxas) and on the GPU
// against the interpreter, with reproductions for failing seeds (see fuzz_run.hpp).
#include "fuzz_run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>

#include "../common/gpu_compare.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/passes.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/jit/cubin.hpp"
#include "tessel/lowering/compile.hpp"

namespace fuzz {

namespace gc = tessel_test::gpu_compare;
using tessel::ir::Function;
using tessel::ir::Op;
using tessel::ir::OpKind;
using tessel::ir::Value;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

std::string self_exe() {
  char buf[4096];
  const ssize_t k = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return k > 0 ? std::string(buf, static_cast<size_t>(k)) : std::string("test_fuzz");
}

std::string program_text(const Program& p, const Function& f) {
  return "  program: " + p.shape + "\n" + p.launch() + tessel::ir::print(f);
}

// TESSEL_FUZZ_VERBOSE=1: every program is printed before it runs (so a crash still shows it).
void print_if_verbose(const Program& p) {
  const char* v = std::getenv("TESSEL_FUZZ_VERBOSE");
  if (!v || !*v || std::string_view(v) == "0") return;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "fuzz seed %llu:\n%s\n", static_cast<unsigned long long>(p.seed), program_text(p, *p.fn).c_str());
}

// The tolerance of a written buffer, from the model.
gc::Tolerance tolerance_of(const Buffer& b) {
  gc::Tolerance t;
  t.normal_slack = false;
  if (!b.exact) t.abs = b.abs_err;
  return t;
}

gc::BufferView view_of(const Program& p, size_t i) {
  return gc::BufferView{i, tessel::ir::DType{p.buffers[i].elem}, true};
}

std::vector<std::byte> bytes_of(const HostRun& h, size_t i) {
  const std::byte* d = h.data(i);
  return std::vector<std::byte>(d, d + h.mem[i].bytes);
}

// The kernel parameter a store's or atomic's pointer comes from (through addptr, splat,
// broadcast), or -1.
int target_param(const Function& f, const Op& op) {
  const Value* v = op.operands.at(0);
  while (v->def && (v->def->kind == OpKind::AddPtr || v->def->kind == OpKind::Splat ||
                    v->def->kind == OpKind::Broadcast || v->def->kind == OpKind::ExpandDims))
    v = v->def->operands.at(0);
  for (size_t i = 0; i < f.body.args.size(); ++i)
    if (f.body.args[i] == v) return static_cast<int>(i);
  return -1;
}

// A copy of the program's kernel that writes only buffer `keep` (the other stores and unused
// atomics removed, then dead code).
std::unique_ptr<Function> reduced_to(const Program& p, size_t keep) {
  std::unique_ptr<Function> g = tessel::ir::parse(tessel::ir::print(*p.fn));
  int keep_param = -1;
  for (size_t i = 0; i < p.args.size(); ++i)
    if (p.args[i].kind == Arg::Buf && p.args[i].buffer == keep) keep_param = static_cast<int>(i);
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<int> uses = tessel::ir::count_uses(*g);
    auto& ops = g->body.ops;
    for (size_t i = ops.size(); i-- > 0;) {
      const Op& op = *ops[i];
      const bool writes = op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd || op.kind == OpKind::AtomicMax;
      if (!writes || target_param(*g, op) == keep_param) continue;
      if (!op.results.empty() && uses[op.results[0]->id] != 0) continue;
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      changed = true;
    }
  }
  tessel::ir::dce(*g);
  tessel::ir::verify(*g);
  return g;
}

}  // namespace

std::string rerun_command(uint64_t seed, bool gpu) {
  return "TESSEL_FUZZ_START=" + std::to_string(seed) + " TESSEL_FUZZ_SEEDS=1 TESSEL_FUZZ_VERBOSE=1 " + self_exe() +
         (gpu ? " -ts=gpu" : " -tse=gpu");
}

void Coverage::add(const Program& p) {
  ++programs;
  std::map<std::string, int> seen;
  tessel::ir::walk(p.fn->body, [&](const Op& op) { seen[std::string(op.name())] = 1; });
  for (const auto& [k, v] : seen) ops[k] += v;
  for (const Buffer& b : p.buffers)
    if (b.written) (b.exact || !tessel::ir::DType{b.elem}.is_float() ? exact_outputs : bounded_outputs) += 1;
}

std::string Coverage::str() const {
  std::ostringstream o;
  o << "programs using each op (of " << programs << "):";
  for (const auto& [k, v] : ops) o << " " << k << " " << v;
  o << "\noutputs: " << exact_outputs << " exact, " << bounded_outputs << " within a float bound";
  return o.str();
}

CpuResult check_on_cpu(uint64_t seed, const std::vector<std::string>& archs, const std::string& ptxas,
                       Coverage* coverage) {
  CpuResult res;
  res.seed = seed;
  std::string phase = "generating";
  const Program* prog = nullptr;
  Program p;
  try {
    auto t = Clock::now();
    p = generate(seed);
    prog = &p;
    res.s_generate = since(t);
    if (coverage) coverage->add(p);
    print_if_verbose(p);
    if (p.fn->params.size() > 32) throw std::logic_error("more parameters than the GPU launcher packs (32)");
    phase = "printing and parsing back";
    const std::string text = tessel::ir::print(*p.fn);
    if (tessel::ir::print(*tessel::ir::parse(text)) != text) throw std::runtime_error("the parsed IR prints differently");

    phase = "the interpreter";
    t = Clock::now();
    HostRun a(p);
    tessel::interp::run(*p.fn, p.grid, a.args, a.mem);
    res.s_interp = since(t);

    phase = "the passes";
    t = Clock::now();
    std::shared_ptr<const Function> fin = gc::as_jit_compiles(*p.fn);
    res.s_passes = since(t);
    phase = "the interpreter after the passes";
    t = Clock::now();
    HostRun c(p);
    tessel::interp::run(*fin, p.grid, c.args, c.mem);
    res.s_interp += since(t);
    std::string diff;
    for (size_t i = 0; i < p.buffers.size(); ++i)
      if (p.buffers[i].written) {
        gc::Tolerance exact;
        exact.normal_slack = false;
        const std::string d = gc::compare(bytes_of(c, i), bytes_of(a, i), view_of(p, i), exact, nullptr);
        if (!d.empty()) diff += "  buffer %" + p.buffers[i].name + " (after the passes vs before):\n" + d;
      }
    if (!diff.empty())
      throw std::runtime_error("the passes changed what the program writes:\n" + diff + "  after the passes:\n" +
                               tessel::ir::print(*fin));

    for (const std::string& arch : archs) {
      phase = "lowering for " + arch;
      t = Clock::now();
      tessel::lowering::Options o;
      o.num_warps = p.num_warps;
      o.programs_per_cta = p.programs_per_cta;
      o.target = tessel::lowering::Target::parse(arch);
      const tessel::lowering::Compiled k = tessel::lowering::compile(*fin, o);
      res.s_lower += since(t);
      if (const char* dir = std::getenv("TESSEL_FUZZ_DUMP_PTX"); dir && *dir)  // to read or assemble by hand
        std::ofstream(std::string(dir) + "/fuzz_" + std::to_string(seed) + "_" + arch + ".ptx") << k.ptx;
      if (ptxas.empty()) continue;
      phase = "ptxas for " + arch;
      t = Clock::now();
      (void)tessel::jit::ptxas_cubin(k.ptx, arch);
      res.s_ptxas += since(t);
    }
  } catch (...) {
    const std::string why = what_of(std::current_exception());
    res.failure = "fuzz seed " + std::to_string(seed) + ": " + phase + " failed: " + why + "\n" +
                  (prog ? program_text(*prog, *prog->fn) : std::string()) + "  re-run: " + rerun_command(seed, false) + "\n";
  }
  return res;
}

GpuCase prepare_gpu_case(uint64_t seed, tessel::jit::Device& dev) {
  GpuCase c;
  c.seed = seed;
  std::string phase = "generating";
  try {
    c.program = generate(seed);
    print_if_verbose(c.program);
    phase = "the interpreter";
    HostRun h(c.program);
    c.before = gc::snapshot(h.mem);
    tessel::interp::run(*c.program.fn, c.program.grid, h.args, h.mem);
    c.interp = gc::snapshot(h.mem);
    phase = "compiling for the GPU";
    c.fin = gc::as_jit_compiles(*c.program.fn);
    tessel::jit::CompileOptions o;
    o.num_warps = c.program.num_warps;
    o.programs_per_cta = c.program.programs_per_cta;
    c.exe = dev.compile(c.fin, o);
  } catch (...) {
    c.failure = "fuzz seed " + std::to_string(seed) + ": " + phase + " failed: " + what_of(std::current_exception()) + "\n" +
                (c.program.fn ? program_text(c.program, *c.program.fn) : std::string()) +
                "  re-run: " + rerun_command(seed, true) + "\n";
  }
  return c;
}

namespace {

// The differing buffers of one GPU run, described; `first` gets the first differing buffer.
std::string differences(const Program& p, const std::vector<std::vector<std::byte>>& gpu,
                        const std::vector<std::vector<std::byte>>& ref, int* first, bool only_first = false) {
  std::string out;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    if (!p.buffers[i].written) continue;
    const std::string d = gc::compare(gpu[i], ref[i], view_of(p, i), tolerance_of(p.buffers[i]), nullptr);
    if (d.empty()) continue;
    if (*first < 0) *first = static_cast<int>(i);
    out += "  buffer %" + p.buffers[i].name + " (" + std::string(tessel::ir::name_of(p.buffers[i].elem)) + "[" +
           std::to_string(p.buffers[i].count) + "], " +
           (p.buffers[i].exact ? std::string("exact") : "tolerance " + std::to_string(p.buffers[i].abs_err)) + "):\n" + d;
    if (only_first) break;
  }
  return out;
}

}  // namespace

std::string run_gpu_case(GpuCase& c, tessel::jit::Device& dev) {
  if (!c.failure.empty()) return c.failure;
  const Program& p = c.program;
  std::string phase = "running on the GPU";
  try {
    HostRun h(p);
    std::vector<std::vector<std::byte>> gpu = gc::run_compiled(dev, *c.exe, p.grid, h.args, h.mem, c.before);
    int first = -1;
    const std::string diff = differences(p, gpu, c.interp, &first);
    if (diff.empty()) return "";
    std::string report = "fuzz seed " + std::to_string(c.seed) + ": the GPU differs from the interpreter\n" + diff;
    // A smaller reproduction: only the stores to the first differing buffer, and what they need.
    phase = "reducing the program";
    std::string reduced;
    try {
      std::unique_ptr<Function> g = reduced_to(p, static_cast<size_t>(first));
      HostRun ri(p);
      tessel::interp::run(*g, p.grid, ri.args, ri.mem);
      std::shared_ptr<const Function> gin = gc::as_jit_compiles(*g);
      tessel::jit::CompileOptions o;
      o.num_warps = p.num_warps;
      o.programs_per_cta = p.programs_per_cta;
      HostRun rg(p);
      std::vector<std::vector<std::byte>> g2 = gc::run_gpu(dev, gin, o, p.grid, rg.args, rg.mem, gc::snapshot(rg.mem));
      int first2 = -1;
      Program view;  // the same buffers and tolerances, to compare the one kept buffer
      view.buffers = p.buffers;
      for (size_t i = 0; i < view.buffers.size(); ++i) view.buffers[i].written = i == static_cast<size_t>(first);
      const std::string d2 = differences(view, g2, gc::snapshot(ri.mem), &first2, true);
      if (!d2.empty())
        reduced = "  reduced to the stores of %" + p.buffers[first].name + " (still differs):\n" + d2 +
                  tessel::ir::print(*g);
      else
        reduced = "  (the program reduced to the stores of %" + p.buffers[first].name +
                  " no longer differs: the full program follows)\n";
    } catch (...) {
      reduced = "  (reducing the program failed: " + what_of(std::current_exception()) + ")\n";
    }
    return report + reduced + "  program: " + p.shape + "\n" + p.launch() +
           (reduced.find("still differs") == std::string::npos ? tessel::ir::print(*p.fn) : std::string()) +
           "  re-run: " + rerun_command(c.seed, true) + "\n";
  } catch (...) {
    return "fuzz seed " + std::to_string(c.seed) + ": " + phase + " failed: " + what_of(std::current_exception()) + "\n" +
           program_text(p, *p.fn) + "  re-run: " + rerun_command(c.seed, true) + "\n";
  }
}

}  // namespace fuzz
