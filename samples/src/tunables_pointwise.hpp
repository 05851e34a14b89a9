// Shared by the elementwise tunables (tunables_elementwise.cpp, tunables_fusion.cpp): the sizes
// and config space of one-dimensional kernels, their buffers (random inputs, the output, the
// chains' intermediates) and the parts of a Problem every one of them has.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tessel/samples/sample.hpp"
#include "tunable_support.hpp"

namespace tessel::samples::tunable::pointwise {
using jit::Array;
using jit::Grid;
using jit::tune::Bucket;

inline const std::vector<SizeArgs> kSizes{{{int64_t{1} << 20}}, {{int64_t{1} << 23}}, {{int64_t{1} << 26}}};

inline std::vector<Config> space(const SizeArgs&) { return block_warps({512, 1024, 2048, 4096}, {4, 8}); }
inline Config default_config(const SizeArgs&) { return block_config(1024, 4); }  // the kernels' defaults

template <class K>
Grid grid(K& k, const Config& c, int64_t n) {
  return Grid{jit::cdiv(n, block_of(k, c))};
}

// Inputs x, y (random), a bias row of width d, the output and the chains' intermediates.
struct Buffers {
  explicit Buffers(int64_t n_, int temps)
      : n(n_), d(std::max<int64_t>(1, std::min<int64_t>(n_, 4096))), x(big_random(n_, 1, -2, 2)),
        y(big_random(n_, 2, -2, 2)), bias(random_floats(d, 3)), out(n_) {
    for (int i = 0; i < temps; ++i) t.emplace_back(n_);
  }
  int64_t n, d;
  Array<float> x, y, bias, out;
  std::vector<Array<float>> t;
};

inline Tunable base(std::string name, std::string description, bool fused, std::string group) {
  Tunable t;
  t.name = name;
  t.kernel = name;
  t.description = std::move(description);
  t.size_names = {"n"};
  t.sizes = kSizes;
  t.configs = space;
  t.default_config = default_config;
  t.key = jit::tune::KeySpec{{{"n", Bucket::PowerOfTwo}}};
  t.group = std::move(group);
  t.fused = fused;
  return t;
}

// The output and every intermediate are poisoned before each checked run, so a config that
// writes part of them cannot pass on an earlier config's values.
inline Problem problem(const Tunable& t, const std::string& signature, int64_t n, const std::shared_ptr<Buffers>& b) {
  Problem p;
  p.kernel = t.kernel;
  const std::vector<int64_t> key{n};
  p.key = t.key.key_string(key, signature);
  p.output = [b] { return sample_values(b->out.download()); };
  p.poison = [b] {
    b->out.poison();
    for (auto& a : b->t) a.poison();
  };
  return p;
}

}  // namespace tessel::samples::tunable::pointwise
