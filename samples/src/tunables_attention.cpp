// The tunable of the attention forward (attention_kernels.hpp): `tessel tune attention_fwd --sizes
// 8x16x2048x128x1` (batch x heads x seq x head dim x causal) picks the tile, warps and stages
// and the schedule options bench_attention sweeps: signalled stages (stage_mbarriers),
// warpgroup turns, the rotated loop (OVERLAP), producer warps with the consumers' register budget
// (warp_specialize + consumer_registers: setmaxnreg moves the producers' registers to the
// softmax warpgroups), a register cap (max_registers) and the causal launch order
// (GROUP_HEADS). The head dim and the mask are meta-parameters that change what the output
// means: every config of a size carries that size's HEAD_DIM and CAUSAL, and the key holds them
// (dim, causal) beside heads and seq. The kernel's launches take explicit configs (it declares
// no Autotune), so its tuned results serve `tessel tune` and `tessel bench`.
//
// f16 Q, K, V, O [batch, heads, seq, dim], contiguous. The check: a sample of whole output rows
// against the double-precision host reference (attention_reference.hpp), within the samples'
// tolerance. The spaces hold each head dim's fastest configs of bench/RESULTS.md (H100, H200)
// and the producer-warp forms; the first is the portable 64x64 tile (mma.sync elsewhere),
// the untuned choice. Configs a target cannot compile (producer warps off sm_90a) are skipped.
#include <memory>

#include <fmt/format.h>

#include "attention_reference.hpp"
#include "tessel/samples/attention_kernels.hpp"
#include "tunable_support.hpp"

namespace tessel::samples::tunable {
namespace {
using jit::Array;
using jit::Grid;
using jit::tune::Bucket;

constexpr size_t kRowsChecked = 48;  // whole output rows a config's check reads

// One point of the space (bench_attention's Config).
struct Schedule {
  int bm, bn, warps, stages;
  bool overlap = false, mbarriers = false, turns = false;
  int consumer_registers = 0;  // > 0: producer warps
  int max_registers = 0;
  int group_heads = 1;  // causal only
};

Config config_of(const Schedule& a, const SizeArgs& s) {
  const bool causal = s.dims[4] != 0;
  Config c;
  c.meta.set("BLOCK_M", a.bm).set("BLOCK_N", a.bn).set("HEAD_DIM", s.dims[3]).set("CAUSAL", causal ? 1 : 0);
  c.meta.set("OVERLAP", a.overlap ? 1 : 0).set("GROUP_HEADS", causal ? a.group_heads : 1);
  c.opts.num_warps = a.warps;
  c.opts.num_stages = a.stages;
  c.opts.stage_mbarriers = a.mbarriers;
  c.opts.warpgroup_turns = a.turns;
  c.opts.warp_specialize = a.consumer_registers > 0;
  c.opts.consumer_registers = a.consumer_registers;
  c.opts.max_registers = a.max_registers;
  return c;
}

// Eight a size: the portable tile first, the plain schedules that won bench_attention's sweeps
// for this head dim and mask, then producer warps: two softmax warpgroups of 240 registers and
// 24 left to the copies (232 / 40 for the rotated loop), alone or taking turns at the products.
std::vector<Config> attention_space(const SizeArgs& s) {
  const bool causal = s.dims[4] != 0, d64 = s.dims[3] <= 64;
  const Schedule portable{64, 64, 4, 2, false, false, false, 0, 128};  // mma.sync elsewhere too
  const Schedule ws{128, 128, 8, 2, false, false, false, 240}, ws_turns{128, 128, 8, 2, false, false, true, 240};
  std::vector<Schedule> v;
  if (d64 && causal)
    v = {portable, {64, 64, 4, 2, false, false, false, 0, 128, 16}, {128, 64, 8, 2, false, false, false, 0, 128},
         {128, 64, 8, 2, false, true}, {128, 128, 8, 2, true, true}, ws, ws_turns,
         {128, 128, 8, 2, false, false, true, 240, 0, 8}};
  else if (d64)
    v = {portable, {128, 64, 8, 2, false, false, false, 0, 128}, {128, 64, 8, 2, false, true},
         {128, 128, 8, 2, true, true}, {128, 128, 8, 2, true, true, true}, ws, ws_turns,
         {128, 128, 8, 2, true, false, false, 232}};
  else if (causal)  // producer warps at 232 over 8 heads longest first: the H100's best (session 45)
    v = {portable, {128, 128, 8, 2, true, true, false, 0, 0, 8}, {128, 128, 8, 2, false, true, true, 0, 0, 8},
         {128, 128, 8, 2, false, false, false, 232, 0, 8}, {128, 128, 8, 2, false, true, true}, ws, ws_turns,
         {128, 128, 8, 2, false, false, true, 240, 0, 8}};
  else
    v = {portable, {128, 128, 8, 2, true, true, true}, {128, 128, 8, 2, true, true}, {128, 64, 8, 2}, ws, ws_turns,
         {128, 128, 8, 2, true, false, false, 232}, {128, 128, 8, 3, false, false, false, 240}};
  std::vector<Config> out;
  for (const Schedule& a : v) out.push_back(config_of(a, s));
  return out;
}

struct AttnBuffers {
  explicit AttnBuffers(const SizeArgs& s) {
    d.batch = s.dims[0];
    d.heads = d.kv_heads = s.dims[1];
    d.seq_q = d.seq_k = s.dims[2];
    d.dim = s.dims[3];
    d.causal = s.dims[4] != 0;
    if (d.dim != 64 && d.dim != 128)
      throw UserError(fmt::format("attention_fwd: head dim {} (the fourth size) must be 64 or 128", d.dim));
    if (s.dims[4] > 1) throw UserError(fmt::format("attention_fwd: causal (the fifth size) is 0 or 1, not {}", s.dims[4]));
    if (d.q_size() > kMaxI32Offset)
      throw UserError(fmt::format("attention_fwd: {} elements a tensor do not fit i32 offsets", d.q_size()));
    const size_t n = static_cast<size_t>(d.q_size());
    hq = big_random_f16(n, 51, -2, 2);
    hk = big_random_f16(n, 52, -2, 2);
    hv = big_random_f16(n, 53, -1, 1);
    q = Array<uint16_t>(hq);
    k = Array<uint16_t>(hk);
    v = Array<uint16_t>(hv);
    o = Array<uint16_t>(n);
  }
  Grid grid(const Config& c) const {
    return attention_fwd_grid(k_attention_fwd.effective_meta(c.meta), d.seq_q, d.batch * d.heads);
  }
  // The rows the check reads: query rows (b, h, i) in flat order, evenly spread.
  std::vector<size_t> rows() const { return sample_positions(static_cast<size_t>(d.batch * d.heads * d.seq_q), kRowsChecked); }

  AttentionDims d;
  std::vector<uint16_t> hq, hk, hv;
  Array<uint16_t> q{1}, k{1}, v{1}, o{1};
};

Problem attention_problem(const Tunable& t, const SizeArgs& s) {
  auto b = std::make_shared<AttnBuffers>(s);
  const AttentionDims& d = b->d;
  const int sq = static_cast<int>(d.seq_q), hh = static_cast<int>(d.heads);
  // Strides of [batch, heads, seq, dim] (Q, K, V and O alike).
  const int sb = static_cast<int>(d.heads * d.seq_q * d.dim), sh = static_cast<int>(d.seq_q * d.dim),
            ss = static_cast<int>(d.dim);
  const float scale = static_cast<float>(d.scale());
  Problem p = problem_of(t, s, k_attention_fwd);
  p.compile = [b, sq, hh, sb, sh, ss, scale](const Config& c) {
    compile_for(k_attention_fwd, c, b->q, b->k, b->v, b->o, sq, sq, hh, hh, sb, sh, ss, sb, sh, ss, sb, sh, ss, sb, sh,
                ss, scale);
  };
  p.launch = [b, sq, hh, sb, sh, ss, scale](const Config& c) {
    k_attention_fwd.launch(b->grid(c), c.meta, c.opts, b->q, b->k, b->v, b->o, sq, sq, hh, hh, sb, sh, ss, sb, sh, ss,
                           sb, sh, ss, sb, sh, ss, scale);
  };
  p.poison = [b] { b->o.poison(); };
  p.output = [b] {
    const std::vector<uint16_t> o = b->o.download();
    std::vector<double> out;
    for (size_t r : b->rows())
      for (int64_t x = 0; x < b->d.dim; ++x) out.push_back(f16_value(o[r * static_cast<size_t>(b->d.dim) + x]));
    return out;
  };
  p.reference = [b] {
    const AttentionDims& dd = b->d;
    auto at = [](const std::vector<uint16_t>& t) { return [&t](int64_t n) { return f16_value(t[static_cast<size_t>(n)]); }; };
    std::vector<double> scores(static_cast<size_t>(dd.seq_k)), row(static_cast<size_t>(dd.dim));
    jit::tune::Expected e;
    for (size_t r : b->rows()) {
      const int64_t i = static_cast<int64_t>(r) % dd.seq_q, bh = static_cast<int64_t>(r) / dd.seq_q;
      attention_reference_row(dd, at(b->hq), at(b->hk), at(b->hv), bh / dd.heads, bh % dd.heads, i, scores, row.data());
      e.values.insert(e.values.end(), row.begin(), row.end());
    }
    return e;
  };
  p.rtol = p.atol = attention_tolerance<lang::f16>();
  // FlashAttention's count: 4 b h s^2 d, halved by the causal mask; Q, K, V read and O written once.
  p.flops = 4.0 * static_cast<double>(d.batch * d.heads) * static_cast<double>(d.seq_q) * static_cast<double>(d.seq_k) *
            static_cast<double>(d.dim) * (d.causal ? 0.5 : 1.0);
  p.bytes = 4.0 * static_cast<double>(d.q_size()) * 2;
  return p;
}

}  // namespace

std::vector<Tunable> attention_tunables() {
  Tunable t;
  t.name = t.kernel = t.group = "attention_fwd";
  t.description = "O = softmax(Q K^T / sqrt(d)) V, f16, sizes BATCHxHEADSxSEQxDIMxCAUSAL";
  t.size_names = {"batch", "heads", "seq", "dim", "causal"};
  t.sizes = {SizeArgs{{8, 16, 2048, 128, 1}}, SizeArgs{{8, 16, 2048, 64, 1}}, SizeArgs{{4, 16, 4096, 128, 0}}};
  t.configs = attention_space;
  t.default_config = [](const SizeArgs& s) { return attention_space(s).front(); };
  t.key = jit::tune::KeySpec{{{"heads", Bucket::Exact},
                              {"seq", Bucket::PowerOfTwo},
                              {"dim", Bucket::Exact},
                              {"causal", Bucket::Exact}}};
  t.make_problem = [t](const SizeArgs& s) { return attention_problem(t, s); };
  return {t};
}

}  // namespace tessel::samples::tunable
