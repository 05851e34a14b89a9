// Tutorial 06: attention forward (FlashAttention's algorithm): O = softmax(Q K^T * scale) V, causal,
// one program per BLOCK_M query rows of one head.
#include <tessel/interp/float_formats.hpp>  // f16 <-> double on the host
#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "tutorial_check.hpp"

using namespace tessel;
using namespace tessel::lang;

// q, k, v, o: f16[heads, S, D], contiguous. Program (i, h) computes rows i*BLOCK_M .. of head h.
void attention(Ptr<f16> q, Ptr<f16> k, Ptr<f16> v, Ptr<f16> o, Int S, Float scale, const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], D = m["HEAD_DIM"];
  const float inf = std::numeric_limits<float>::infinity();
  auto head = program_id(1) * S * D;  // this head's [S, D] slice of each tensor
  auto rm = program_id(0) * BM + arange(0, BM);
  auto rn = arange(0, BN);
  auto rd = arange(0, D);
  // Q is loaded once; the loop walks the keys BLOCK_N at a time.
  auto qt = load(q + head + rm.col() * D + rd.row(), rm.col() < S, 0);
  Var m_i{full<f32>({BM}, -inf)};  // running row max
  Var l_i{zeros<f32>({BM})};       // running sum of exponentials
  Var acc{zeros<f32>({BM, D})};    // running, unnormalised output
  Var pk{k + head + rn.row() * D + rd.col()};  // K^T [D, BN]: pointers contiguous along dim 0
  Var pv{v + head + rn.col() * D + rd.row()};  // V [BN, D]
  auto end = minimum((program_id(0) + 1) * BM, S);  // causal: no key past this block's last row
  for (auto n : range(0, end, BN)) {
    auto key = n + rn;
    auto s = dot(qt, load(pk, key.row() < S, 0)) * (scale * 1.4426950408889634f);  // log2(e): exp2 below
    s = where((key.row() < S) & (key.row() <= rm.col()), s, -inf);                   // causal mask
    auto m_new = maximum(m_i, max(s, 1));
    auto p = exp2(s - m_new.col());
    auto alpha = exp2(m_i - m_new);  // rescales what was summed under the old max
    l_i = l_i * alpha + sum(p, 1);
    acc = dot(cast<f16>(p), load(pv, key.col() < S, 0), acc * alpha.col());
    m_i = m_new;
    pk += BN * D;
    pv += BN * D;
  }
  store(o + head + rm.col() * D + rd.row(), acc.get() * (1.0f / l_i.get()).col(), rm.col() < S);
}

jit::Kernel attention_kernel{"tutorial_attention", &attention, {"q", "k", "v", "o", "S", "scale"},
                             Meta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"HEAD_DIM", 64}}};

bool check(int64_t heads, int64_t S, int64_t D, const jit::CompileOptions& options) {
  auto f16s = [](std::vector<float> v) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = tessel::interp::f16_from_double(v[i]);
    return h;
  };
  const size_t n = heads * S * D;
  std::vector<uint16_t> hq = f16s(tutorial::random_floats(n, 7)), hk = f16s(tutorial::random_floats(n, 8)),
                        hv = f16s(tutorial::random_floats(n, 9));
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  jit::Array<uint16_t> q(hq), k(hk), v(hv), o(n);
  o.poison();
  const Meta meta{{"HEAD_DIM", D}};
  const Meta eff = attention_kernel.effective_meta(meta);
  attention_kernel.launch(jit::Grid{jit::cdiv(S, eff["BLOCK_M"]), static_cast<uint32_t>(heads)}, meta, options, q, k,
                          v, o, S, scale);
  std::vector<float> got;
  for (uint16_t x : o.download()) got.push_back(static_cast<float>(tessel::interp::f16_to_double(x)));

  // The reference: scores, a max-subtracted softmax over the visible keys, the weighted sum.
  auto at = [](const std::vector<uint16_t>& t, size_t i) { return tessel::interp::f16_to_double(t[i]); };
  std::vector<double> want(n);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < S; ++i) {
      std::vector<double> w(i + 1);
      double mx = -INFINITY, total = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d) s += at(hq, (h * S + i) * D + d) * at(hk, (h * S + j) * D + d);
        w[j] = s * scale;
        mx = std::max(mx, w[j]);
      }
      for (double& x : w) total += x = std::exp(x - mx);
      for (int64_t d = 0; d < D; ++d) {
        double s = 0;
        for (int64_t j = 0; j <= i; ++j) s += w[j] * at(hv, (h * S + j) * D + d);
        want[(h * S + i) * D + d] = s / total;
      }
    }
  const std::string what = "attention h" + std::to_string(heads) + " S" + std::to_string(S) + " d" +
                           std::to_string(D) + " s" + std::to_string(options.num_stages);
  // P is rounded to f16 before its dot (as FlashAttention does) and O to f16: about 1e-3.
  return tutorial::check_close(what.c_str(), got, want, 2e-3, 1e-2);
}

bool run_checks() {
  std::printf("device: %s\n", jit::Device::current().describe().c_str());
  const bool gpu = jit::Device::current().kind() == jit::BackendKind::Cuda;
  bool ok = true;
  for (int stages : {1, 3}) {
    jit::CompileOptions options;
    options.num_stages = stages;  // 3: K and V copied two trips ahead of the dots that read them
    ok = check(2, 100, 64, options) && ok;  // 100: the last block of keys is masked
    ok = check(1, 1, 64, options) && ok;
    if (gpu) ok = check(4, 1000, 128, options) && ok;
  }
  return ok;
}

int main() {
  return tutorial::run_tutorial(run_checks, [] { return jit::Device::current().kind() == jit::BackendKind::Cuda; });
}
