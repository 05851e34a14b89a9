// What the tunables share (private to samples/src): compiling a Kernel for a config without
// launching it, big random inputs, output sampling and host references for the output check,
// config spaces.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "tessel/jit/kernel.hpp"
#include "tessel/samples/tunables.hpp"

namespace tessel::samples::tunable {

using jit::tune::Config;
using jit::tune::Problem;

// Compiles the variant of `k` that k.launch(grid, c.meta, c.opts, args...) would use — the same
// meta, options and specialisation bits — without launching it (Kernel::variant(Config, ...):
// a kernel that declares autotuning also has its spilling configs rejected).
template <class... A, class... H>
void compile_for(jit::Kernel<A...>& k, const Config& c, const H&... args) {
  using Params = std::tuple<A...>;
  static_assert(sizeof...(H) == jit::Kernel<A...>::kNumParams, "compile_for: wrong number of kernel arguments");
  const jit::detail::PackContext ctx{k.name(), &k.param_names(), &jit::Device::current()};
  auto raw = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::array<jit::RawArg, sizeof...(H)>{
        jit::detail::to_raw<std::remove_cvref_t<std::tuple_element_t<I, Params>>>(args, ctx, I)...};
  }(std::index_sequence_for<H...>{});
  k.variant(c, jit::detail::spec_bits(raw.data(), raw.size()));
}

// The BLOCK a config launches with: its override, else the kernel's default.
template <class... A>
int64_t block_of(const jit::Kernel<A...>& k, const Config& c) {
  return k.effective_meta(c.meta)["BLOCK"];
}

// n random floats in [lo, hi): 1M fresh values repeated (fast for sizes of hundreds of MB;
// the values only need to be nonzero and varied, not independent).
std::vector<float> big_random(size_t n, uint64_t seed, float lo, float hi);
// The same values rounded to f16 (bit patterns), and an f16 bit pattern's value.
std::vector<uint16_t> big_random_f16(size_t n, uint64_t seed, float lo, float hi);
double f16_value(uint16_t h);

// The positions of a vector of n elements that the output check reads: every one when n <= max,
// else an evenly strided subset of at most about `max` (the last included). The stride is odd,
// so on a row-major matrix whose width is a power of two the positions cover every column.
std::vector<size_t> sample_positions(size_t n, size_t max = size_t{1} << 20);

// The values at sample_positions(v.size(), max): enough to catch a config that computes a
// different answer. Only the sampled elements are converted (`to_double`), so checking a large
// output per config stays cheap.
template <class T, class F>
std::vector<double> sample_values(const std::vector<T>& v, F&& to_double, size_t max = size_t{1} << 20) {
  std::vector<double> out;
  for (size_t i : sample_positions(v.size(), max)) out.push_back(to_double(v[i]));
  return out;
}
template <class T>
std::vector<double> sample_values(const std::vector<T>& v) {
  return sample_values(v, [](const T& x) { return static_cast<double>(x); });
}

// A host reference at the positions sample_positions(n, max) gives: value(i) for each, and the
// accepted error tolerance(i, value) for each when `tolerance` is given (else Problem's rtol/atol).
template <class V>
jit::tune::Expected sampled_reference(size_t n, V&& value, size_t max = size_t{1} << 20) {
  jit::tune::Expected e;
  for (size_t i : sample_positions(n, max)) e.values.push_back(value(i));
  return e;
}
template <class V, class T>
jit::tune::Expected sampled_reference(size_t n, V&& value, T&& tolerance, size_t max = size_t{1} << 20) {
  jit::tune::Expected e;
  for (size_t i : sample_positions(n, max)) {
    e.values.push_back(value(i));
    e.tolerance.push_back(tolerance(i, e.values.back()));
  }
  return e;
}

// Fills every byte of the arrays with 0xFF (NaN for floats): Problem::poison.
template <class... T>
void poison_all(jit::Array<T>&... a) {
  (a.poison(), ...);
}

// A problem whose launches keep f32 partials and arrival counters (split-K, stream-K):
// `buffers` has launch(Config), `part` and `count`. Every run starts from zeroed counters (a
// config that failed mid-run may leave some behind), and poisoning covers the partials as well
// as the output.
template <class Buffers, class Out>
void launch_with_partials(Problem& p, const std::shared_ptr<Buffers>& buffers, jit::Array<Out>& out) {
  p.launch = [buffers](const Config& c) { buffers->launch(c); };
  p.reset = [buffers] { buffers->count.poison(0); };
  p.poison = [buffers, out = &out] { poison_all(*out, buffers->part); };  // `out` lives in `buffers`
}

int64_t next_pow2(int64_t v);

// BLOCK in `blocks` x num_warps in `warps`, num_stages 1.
std::vector<Config> block_warps(const std::vector<int64_t>& blocks, const std::vector<int>& warps);
// A matmul-shaped config: BLOCK_M x BLOCK_N x BLOCK_K, num_warps and num_stages set.
Config tile(int64_t bm, int64_t bn, int64_t bk, int warps, int stages);
// The same with SPLITS (a split-K kernel's K slices, a meta-parameter its launchers read).
Config split_tile(int64_t bm, int64_t bn, int64_t bk, int warps, int stages, int64_t splits);
// A config with BLOCK and num_warps set.
Config block_config(int64_t block, int warps);

// The tunables of each family, in display order.
std::vector<Tunable> elementwise_tunables();  // and fusion_tunables()
std::vector<Tunable> fusion_tunables();       // sin_cos, relu_sq, sigmoid_tanh, fused and not (tunables_fusion.cpp)
std::vector<Tunable> row_tunables();
std::vector<Tunable> matmul_tunables();
std::vector<Tunable> quant_tunables();  // fp8 matmul, W4A16, conv + BN + ReLU
Tunable w4a16_matmul_tunable();        // tunables_w4a16.cpp
Tunable w4a16_splitk_tunable();        // tunables_w4a16.cpp
Tunable w4a16_gemv_tunable();          // tunables_w4a16.cpp
Tunable w4a16_matmul_zp_tunable();     // tunables_w4a16.cpp
Tunable w4a16_matmul_q8_tunable();     // tunables_w4a16.cpp
std::vector<Tunable> attention_tunables();  // attention_fwd (tunables_attention.cpp)
std::vector<Tunable> probe_tunables();

// The key signature of a kernel: tune::signature_of its IR traced with its defaults.
template <class... A>
std::string signature_of(const jit::Kernel<A...>& k) {
  return jit::tune::signature_of(*k.build_ir(k.defaults()));
}

// A problem of tunable `t` at sizes `s`, keyed by `k`'s signature (compile, launch and the
// reference are the caller's).
template <class... A>
Problem problem_of(const Tunable& t, const SizeArgs& s, const jit::Kernel<A...>& k) {
  Problem p;
  p.kernel = t.kernel;
  p.key = t.key.key_string(t.key_values(s), signature_of(k));
  return p;
}

}  // namespace tessel::samples::tunable
