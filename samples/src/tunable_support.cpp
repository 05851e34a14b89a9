// Shared pieces of the tunables: random inputs, output sampling, config spaces, the list.
#include "tunable_support.hpp"

#include <fmt/format.h>

#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace tunable {

std::vector<float> big_random(size_t n, uint64_t seed, float lo, float hi) {
  const size_t fresh = std::min<size_t>(n, size_t{1} << 20);
  std::vector<float> v = random_floats(fresh, seed, lo, hi);
  v.resize(n);
  for (size_t i = fresh; i < n; ++i) v[i] = v[i - fresh];
  return v;
}

std::vector<uint16_t> big_random_f16(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<uint16_t> out;
  out.reserve(n);
  for (float f : big_random(n, seed, lo, hi)) out.push_back(interp::f16_from_double(f));
  return out;
}

double f16_value(uint16_t h) { return interp::f16_to_double(h); }

std::vector<size_t> sample_positions(size_t n, size_t max) { return jit::tune::check_positions(n, max); }

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

Config tile(int64_t bm, int64_t bn, int64_t bk, int warps, int stages) {
  Config c;
  c.meta.set("BLOCK_M", bm).set("BLOCK_N", bn).set("BLOCK_K", bk);
  c.opts.num_warps = warps;
  c.opts.num_stages = stages;
  return c;
}

Config split_tile(int64_t bm, int64_t bn, int64_t bk, int warps, int stages, int64_t splits) {
  Config c = tile(bm, bn, bk, warps, stages);
  c.meta.set("SPLITS", splits);
  return c;
}

Config block_config(int64_t block, int warps) {
  Config c;
  c.meta.set("BLOCK", block);
  c.opts.num_warps = warps;
  return c;
}

std::vector<Config> block_warps(const std::vector<int64_t>& blocks, const std::vector<int>& warps) {
  return jit::tune::product({{"BLOCK", blocks}}, warps);
}

}  // namespace tunable

const std::vector<Tunable>& all_tunables() {
  static const std::vector<Tunable> all = [] {
    std::vector<Tunable> v;
    for (auto& t : tunable::elementwise_tunables()) v.push_back(std::move(t));
    for (auto& t : tunable::row_tunables()) v.push_back(std::move(t));
    for (auto& t : tunable::matmul_tunables()) v.push_back(std::move(t));
    for (auto& t : tunable::quant_tunables()) v.push_back(std::move(t));
    for (auto& t : tunable::attention_tunables()) v.push_back(std::move(t));
    for (auto& t : tunable::probe_tunables()) v.push_back(std::move(t));
    return v;
  }();
  return all;
}

}  // namespace tessel::samples
