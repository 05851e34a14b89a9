// A child process for tests/jit/loop_checks_test.cpp: launches loops whose failure would kill the CUDA context (so the test runs each in its own process).
//
//   loop_checks_child step N        range(0, n, N) with N a run-time argument
//   loop_checks_child pipeline S    a K loop pipelined S deep whose bounds sit just below INT32_MAX
//   loop_checks_child ptx S         that K loop's PTX for sm_90a (no launch)
//   loop_checks_child dotstep N     a K loop on tensor cores (wgmma on sm_90a) stepping N, a
//                                   run-time argument (its check traps without __assertfail)
//   loop_checks_child dotptx 0      that loop's PTX for sm_90a (no launch)
//
// Prints "device: ...", "range line: L" (the line of the range() call), then "ok" when the
// result matches the host reference (exit 0), "mismatch: ..." (exit 4), or "error: <what>" for
// an exception (exit 3). Nothing here is skipped: the parent decides where it runs (GPU or
// TESSEL_INTERPRET=1).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tessel/interp/float_formats.hpp"
#include "tessel/jit/emit.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {

int g_range_line = 0;

// out[p] = sum of i over range(0, n, step), for each program p.
void step_sum_kernel(Ptr<i32> out, Int n, Int step, const Meta&) {
  Var acc(0);
  g_range_line = __LINE__; for (auto i : range(0, n, step)) acc += i;
  store(out + program_id(0), acc);
}

constexpr int kM = 64, kN = 64, kBK = 32;

// c = the sum over k in range(lo, hi, kBK) of a_k @ b_k, where only the first trip's loads are
// unmasked; the pointer tiles move by a_step / b_step elements a trip. With lo = INT32_MAX - 40
// and hi = INT32_MAX the loop runs 2 trips (lo + 64 overflows: the interpreter stops there).
// Copies issued for trips past the end with the mask true would read a + 2 * a_step and beyond:
// with steps of -2^30 elements, gigabytes below the buffers.
void k_loop_bounds_kernel(Ptr<f16> a, Ptr<f16> b, Ptr<f32> c, Int lo, Int hi, Int a_step, Int b_step, const Meta&) {
  auto rm = arange(0, kM), rn = arange(0, kN), rk = arange(0, kBK);
  Var acc{zeros<f32>({kM, kN})};
  Var pa{a + rm.col() * kBK + rk.row()};
  Var pb{b + rk.col() * kN + rn.row()};
  auto first = lo + 1;
  g_range_line = __LINE__; for (auto k : range(lo, hi, kBK)) {
    auto read_a = full<i32>({kM, kBK}, k) < first;
    auto read_b = full<i32>({kBK, kN}, k) < first;
    acc = dot(load(pa.get(), read_a, 0.0f), load(pb.get(), read_b, 0.0f), acc);
    pa += a_step;
    pb += b_step;
  }
  store(c + rm.col() * kN + rn.row(), acc);
}

// c = a @ b over K = kDotK in blocks of kBK, the loop stepping `step` (kBK for the product;
// the pointers are computed from the loop index).
constexpr int kDotK = 4 * kBK;
void dot_step_kernel(Ptr<f16> a, Ptr<f16> b, Ptr<f32> c, Int step, const Meta&) {
  auto rm = arange(0, kM), rn = arange(0, kN), rk = arange(0, kBK);
  Var acc{zeros<f32>({kM, kN})};
  g_range_line = __LINE__; for (auto k : range(0, kDotK, step)) {
    auto at = load(a + rm.col() * kDotK + (k + rk).row());
    auto bt = load(b + (k + rk).col() * kN + rn.row());
    acc = dot(at, bt, acc);
  }
  store(c + rm.col() * kN + rn.row(), acc);
}

jit::Kernel<Ptr<i32>, Int, Int, const Meta&> k_step{"step_sum", &step_sum_kernel, {"out", "n", "step"}};
jit::Kernel<Ptr<f16>, Ptr<f16>, Ptr<f32>, Int, Int, Int, Int, const Meta&> k_bounds{
    "k_loop_bounds", &k_loop_bounds_kernel, {"a", "b", "c", "lo", "hi", "a_step", "b_step"}};
jit::Kernel<Ptr<f16>, Ptr<f16>, Ptr<f32>, Int, const Meta&> k_dot_step{"dot_step", &dot_step_kernel,
                                                                        {"a", "b", "c", "step"}};

int run_step(int step) {
  const int n = 1000, programs = 3;
  jit::Array<int32_t> out(programs);
  out.poison();
  k_step(jit::Grid{programs}, {}, out, n, step);
  std::vector<int32_t> got = out.download();
  std::printf("range line: %d\n", g_range_line);
  int64_t want = 0;
  for (int i = 0; i < n; i += step) want += i;  // step > 0 here: a step <= 0 threw above
  for (int p = 0; p < programs; ++p)
    if (got[p] != want) {
      std::printf("mismatch: program %d: %d, want %lld\n", p, got[p], static_cast<long long>(want));
      return 4;
    }
  std::printf("ok: %d programs summed %lld\n", programs, static_cast<long long>(want));
  return 0;
}

// n f16 values drawn from [-1, 1) and their exact values.
struct F16Values {
  std::vector<uint16_t> bits;
  std::vector<double> exact;
};
F16Values random_f16(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  F16Values v{std::vector<uint16_t>(n), std::vector<double>(n)};
  for (size_t i = 0; i < n; ++i) v.bits[i] = interp::f16_from_double(dist(rng)), v.exact[i] = interp::f16_to_double(v.bits[i]);
  return v;
}

// Whether the kM x kN result `got` is `want(m, n)` within an f16 product's tolerance; prints the
// first element that is not.
bool product_matches(const std::vector<float>& got, const std::function<double(int, int)>& want) {
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      const double w = want(m, n), g = got[m * kN + n];
      if (!(std::fabs(g - w) <= 1e-3 + 1e-3 * std::fabs(w))) {
        std::printf("mismatch: c[%d][%d] = %.6g, want %.6g\n", m, n, g, w);
        return false;
      }
    }
  return true;
}

int run_pipeline(int stages) {
  std::mt19937 rng(2024 + stages);
  const F16Values ha = random_f16(kM * kBK, rng), hb = random_f16(kBK * kN, rng);
  jit::Array<uint16_t> a(ha.bits), b(hb.bits);
  jit::Array<float> c(kM * kN);
  c.poison();
  jit::CompileOptions opts;
  opts.num_stages = stages;
  const int lo = INT32_MAX - 40, hi = INT32_MAX, step = -(1 << 30);
  k_bounds.launch(jit::Grid{1}, {}, opts, a, b, c, lo, hi, step, step);
  std::vector<float> got = c.download();
  std::printf("range line: %d\n", g_range_line);
  const bool ok = product_matches(got, [&](int m, int n) {
    double want = 0;
    for (int k = 0; k < kBK; ++k) want += ha.exact[m * kBK + k] * hb.exact[k * kN + n];
    return want;
  });
  if (!ok) return 4;
  std::printf("ok: %dx%d result of the one trip that reads, %d stages\n", kM, kN, stages);
  return 0;
}

// The dot loop stepping `step` (kBK: the product of a and b; <= 0: the launch fails).
int run_dot_step(int step) {
  std::mt19937 rng(77);
  const F16Values ha = random_f16(kM * kDotK, rng), hb = random_f16(kDotK * kN, rng);
  jit::Array<uint16_t> a(ha.bits), b(hb.bits);
  jit::Array<float> c(kM * kN);
  c.poison();
  jit::CompileOptions opts;
  opts.num_stages = 3;
  k_dot_step.launch(jit::Grid{1}, {}, opts, a, b, c, step);
  std::vector<float> got = c.download();
  std::printf("range line: %d\n", g_range_line);
  const bool ok = product_matches(got, [&](int m, int n) {
    double want = 0;
    for (int k = 0; k < kDotK; k += step)
      for (int j = 0; j < kBK && k + j < kDotK; ++j) want += ha.exact[m * kDotK + k + j] * hb.exact[(k + j) * kN + n];
    return want;
  });
  if (!ok) return 4;
  std::printf("ok: %dx%d product over K = %d stepping %d\n", kM, kN, kDotK, step);
  return 0;
}

int print_dot_step_ptx() {
  jit::CompileOptions opts;
  opts.num_stages = 3;
  const ir::ParamSpec div16{true, false}, plain{};
  auto f = k_dot_step.build_ir({}, {div16, div16, div16, plain});
  std::printf("%s", jit::emit(*f, jit::Stage::Ptx, "sm_90a", opts).c_str());
  return 0;
}

// The PTX of the pipeline kernel for sm_90a as a GPU launch would specialise it (pointers and
// the -2^30 steps divisible by 16): the parent checks on the CPU that the loop is pipelined.
int print_pipeline_ptx(int stages) {
  jit::CompileOptions opts;
  opts.num_stages = stages;
  const ir::ParamSpec div16{true, false}, plain{};
  auto f = k_bounds.build_ir({}, {div16, div16, div16, plain, plain, div16, div16});
  std::printf("%s", jit::emit(*f, jit::Stage::Ptx, "sm_90a", opts).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s step N | pipeline STAGES | ptx STAGES | dotstep N | dotptx 0\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const int value = std::atoi(argv[2]);
  try {
    std::printf("device: %s\n", jit::Device::current().describe().c_str());
    std::fflush(stdout);
    if (mode == "step") return run_step(value);
    if (mode == "pipeline") return run_pipeline(value);
    if (mode == "ptx") return print_pipeline_ptx(value);
    if (mode == "dotstep") return run_dot_step(value);
    if (mode == "dotptx") return print_dot_step_ptx();
    std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);  // the device's assertion message, if any, comes first
    std::printf("range line: %d\nerror: %s\n", g_range_line, e.what());
    return 3;
  }
}
