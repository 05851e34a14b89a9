// GPU benchmarks of the attention samples (issue 26): attention_fwd (f16) causal at batch 8, 16
// heads, sequence 2048 and 8192, head dim 64 and 128; non-causal d=128 at batch 4, 16 heads,
// 8192; and the split-KV decode (one query, 32 heads, KV length 32768, d=128; MHA and 8 KV
// heads). Each case sweeps a small fixed set of launch configs (BLOCK_M 64/128, BLOCK_N
// 32/64/128, 4/8 warps, 1-3 stages; decode: BLOCK_N, warps, stages, chunk counts), spot-checks
// every config's output against a double host reference, times the three fastest again under
// sustained load (bench_timer.hpp) and keeps the best. Prints a table and writes JSON (argv[1]);
// bench/attention_ref.py times torch's scaled_dot_product_attention on the same shapes with the
// same keys. TFLOP/s count 4 * b * h * sq * sk * d flops (two matmuls), halved when causal;
// decode GB/s count the K and V bytes read.
// BENCH_CASES="s2048,decode": only the cases whose name contains one of these (all when unset);
// BENCH_CONFIGS the same over config names; a part "=name" keeps that config alone (bench_filter.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_filter.hpp"
#include "bench_timer.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/attention_kernels.hpp"

using namespace tessel;
using jit::Array;
using jit::Grid;

namespace {

struct Case {
  std::string name;
  int64_t batch, heads, kv_heads, seq_q, seq_k, dim;
  bool causal, decode;
  double flops() const { return 4.0 * batch * heads * seq_q * seq_k * dim * (causal ? 0.5 : 1.0); }
  double kv_bytes() const { return 2.0 * batch * kv_heads * seq_k * dim * 2; }  // K and V, f16
};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (int64_t s : {2048, 8192})
    for (int64_t d : {64, 128})
      v.push_back({fmt::format("attn_causal_f16_b8_h16_s{}_d{}", s, d), 8, 16, 16, s, s, d, true, false});
  v.push_back({"attn_f16_b4_h16_s8192_d128", 4, 16, 16, 8192, 8192, 128, false, false});
  v.push_back({"decode_f16_h32_kv32768_d128", 1, 32, 32, 1, 32768, 128, false, true});
  v.push_back({"decode_f16_h32_kvh8_kv32768_d128", 1, 32, 8, 1, 32768, 128, false, true});
  return v;
}

struct Config {
  int bm, bn, warps, stages, splits = 0;  // bm: BLOCK_M (forward) or BLOCK_H (decode); splits: decode chunks
  int regs = 0;                           // max_registers (0: ptxas chooses)
  bool overlap = false;                   // OVERLAP=1: the rotated loop (softmax beside P V)
  bool mb = false;                        // stage_mbarriers: no CTA barrier a trip
  int cr = 0;                             // > 0: warp_specialize (producer warps) with consumer_registers cr
  bool wt = false;                        // warpgroup_turns: the warpgroups take turns at each trip's wgmma
  int gh = 1;                             // GROUP_HEADS: causal blocks longest first over gh heads at a time
  bool paired = false;                    // PAIRED=1: two query blocks a program (causal: a block and its mirror)
  std::string str() const {
    return splits ? fmt::format("h{}x{} w{} s{} split{}", bm, bn, warps, stages, splits)
                  : fmt::format("{}x{} w{} s{}{}{}{}{}{}{}{}", bm, bn, warps, stages,
                                regs ? fmt::format(" r{}", regs) : "", overlap ? " ov" : "", mb ? " mb" : "",
                                cr ? fmt::format(" ws cr{}", cr) : "", wt ? " wt" : "",
                                gh > 1 ? fmt::format(" g{}", gh) : "", paired ? " pair" : "");
  }
  jit::CompileOptions options() const {
    jit::CompileOptions o{warps, stages};
    o.max_registers = regs;
    o.stage_mbarriers = mb;
    o.warp_specialize = cr > 0;
    o.consumer_registers = cr;
    o.warpgroup_turns = wt;
    return o;
  }
};

std::vector<Config> forward_configs() {
  std::vector<Config> v;
  for (int bm : {64, 128})
    for (int bn : {32, 64, 128})
      for (int w : {4, 8})
        for (int s : {1, 2, 3}) v.push_back({bm, bn, w, s});
  // 128-row tiles of 8 warps capped at 128 registers: two CTAs per SM (one's softmax beside the
  // other's wgmma) where shared memory allows.
  for (int bn : {64, 128})
    for (int s : {2, 3}) v.push_back({128, bn, 8, s, 0, 128});
  for (int s : {2, 3}) v.push_back({64, 64, 4, s, 0, 128});  // 4 CTAs of 128 threads instead of 3
  // 64-row tiles at 168 registers: three CTAs of 128 threads per SM.
  for (int bn : {64, 128})
    for (int s : {2, 3}) v.push_back({64, bn, 4, s, 0, 168});
  // The rotated loop (OVERLAP=1): block j's softmax runs beside block j-1's P V product.
  for (int bn : {64, 128})
    for (int s : {2, 3}) {
      v.push_back({128, bn, 8, s, 0, 0, true});
      v.push_back({64, bn, 4, s, 0, 0, true});
    }
  // Rotated at d64 within 128 registers (two CTAs per SM): fits since the copies carry one
  // pointer per thread.
  for (int s : {2, 3}) v.push_back({128, 64, 8, s, 0, 128, true});
  // Stages signalled by mbarriers (stage_mbarriers): the warpgroups of a CTA are not held in step
  // by a barrier every trip, so one's softmax can run beside another's wgmma.
  for (int bn : {64, 128})
    for (int s : {2, 3}) {
      v.push_back({128, bn, 8, s, 0, 0, false, true});
      v.push_back({128, bn, 8, s, 0, 0, true, true});
    }
  for (int s : {2, 3}) {
    v.push_back({128, 64, 8, s, 0, 128, false, true});
    v.push_back({64, 64, 4, s, 0, 0, false, true});
  }
  // Producer warps (warp_specialize: a ring of K and V stages the programs' warps never copy
  // into) with setmaxnreg moving the producers' registers to the consumers (two warpgroups of
  // 240 and 24 left to the producers, or 232 and 40), rotated or not.
  for (bool ov : {false, true})
    for (int s : {2, 3}) {
      v.push_back({128, 128, 8, s, 0, 0, ov, false, 240});
      v.push_back({128, 64, 8, s, 0, 0, ov, false, 240});
      v.push_back({128, 128, 8, s, 0, 0, ov, false, 232});
    }
  // 64-row tiles with producer warps in 128 registers a thread (the consumer warpgroup raised to
  // 232, the producers left 24): two CTAs of 256 threads and 81 KB a SM at d128, so one CTA's
  // softmax, prologue and epilogue can run beside the other's products (the 128-row tile of
  // two consumer warpgroups fills an SM alone). Rotated or not, causal blocks grouped or not.
  for (bool ov : {false, true})
    for (int g : {1, 8}) v.push_back({64, 64, 4, 2, 0, 128, ov, false, 232, false, g});
  // At d64 the 64-row tile's consumers fit fewer registers: three CTAs a SM at 80 registers
  // (consumers 136, 42 KB of shared memory), four at 64 (consumers 104).
  for (int g : {1, 16}) {
    v.push_back({64, 64, 4, 2, 0, 80, false, false, 136, false, g});
    v.push_back({64, 64, 4, 2, 0, 64, false, false, 104, false, g});
  }
  // Warpgroup turns (FlashAttention-3's ping-pong): the two warpgroups of a 128-row tile issue
  // their products in turn, one's softmax beside the other's wgmma; with signalled stages or
  // producer warps.
  for (int bn : {64, 128})
    for (int s : {2, 3})
      for (bool ov : {false, true}) {
        v.push_back({128, bn, 8, s, 0, 0, ov, true, 0, true});
        v.push_back({128, bn, 8, s, 0, 128, ov, true, 0, true});
      }
  for (bool ov : {false, true}) {
    v.push_back({128, 128, 8, 2, 0, 0, ov, false, 232, true});
    v.push_back({128, 128, 8, 2, 0, 0, ov, false, 240, true});
  }
  // FlashAttention-3's schedule with a third stage: the rotated loop holds a stage (K of block
  // j with V of block j - 1) from the trip's start to its P V wait, so with two stages the
  // producers refill a stage only a trip ahead; 128x64 tiles fit three stages at d128.
  for (int cr : {232, 240})
    for (bool wt : {false, true}) v.push_back({128, 64, 8, 3, 0, 0, true, false, cr, wt});
  // Causal blocks longest first over 4, 8 or 16 heads at a time (GROUP_HEADS) for the best
  // configs of each head dim (bench/RESULTS.md): the last wave's tail evens out.
  for (int g : {4, 8, 16}) {
    v.push_back({128, 128, 8, 2, 0, 0, true, true, 0, true, g});
    v.push_back({128, 128, 8, 2, 0, 0, false, true, 0, true, g});
    v.push_back({128, 128, 8, 2, 0, 0, true, true, 0, false, g});
    v.push_back({64, 64, 4, 2, 0, 128, false, false, 0, false, g});
    v.push_back({128, 64, 8, 2, 0, 128, false, false, 0, false, g});
    v.push_back({128, 128, 8, 2, 0, 0, false, false, 232, false, g});  // producer warps (d128's best)
    v.push_back({128, 128, 8, 2, 0, 0, false, false, 232, true, g});   // the same taking turns
  }
  // Two query blocks a program (PAIRED=1; causal: a block with its mirror, so every program runs
  // the same key blocks): the second block's K and V copies start under the first's epilogue.
  for (Config c : {Config{128, 128, 8, 2, 0, 0, false, false, 232}, Config{64, 64, 4, 2, 0, 128, false, false, 232},
                   Config{128, 128, 8, 2, 0, 0, true, false, 232, true}, Config{64, 64, 4, 2, 0, 128},
                   Config{128, 128, 8, 2, 0, 0, true, true}}) {
    c.paired = true;
    v.push_back(c);
  }
  return v;
}
std::vector<Config> decode_configs() {
  std::vector<Config> v;
  for (int bn : {64, 128})
    for (int w : {4, 8})
      for (int s : {1, 2, 3})
        for (int splits : {32, 64, 128}) v.push_back({16, bn, w, s, splits});
  return v;
}

std::vector<uint16_t> random_f16(int64_t n, uint64_t seed, double lo, double hi) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<uint16_t> h(static_cast<size_t>(n));
  for (auto& x : h) x = interp::f16_from_double(d(gen));
  return h;
}
double f16(uint16_t v) { return interp::f16_to_double(v); }

// Inputs shared by every case (each uses a prefix): Q, K, V as [batch, heads, seq, dim].
struct Inputs {
  std::vector<uint16_t> q, k, v;
  Array<uint16_t> qd, kd, vd, out;
  explicit Inputs(int64_t n)
      : q(random_f16(n, 1, -2, 2)), k(random_f16(n, 2, -2, 2)), v(random_f16(n, 3, -1, 1)), qd(q), kd(k), vd(v),
        out(static_cast<size_t>(n)) {}
};

// The largest |out - ref| - tolerance over 24 sampled query rows (> 0: wrong), in double.
double spot_check(const Case& c, const Inputs& in, const std::vector<uint16_t>& out) {
  std::mt19937_64 gen(7);
  double worst = -1;
  std::vector<double> s(static_cast<size_t>(c.seq_k));
  for (int t = 0; t < 24; ++t) {
    const int64_t b = gen() % c.batch, h = gen() % c.heads, i = gen() % c.seq_q, kvh = h / (c.heads / c.kv_heads);
    const uint16_t* q = &in.q[((b * c.heads + h) * c.seq_q + i) * c.dim];
    const int64_t kv0 = (b * c.kv_heads + kvh) * c.seq_k * c.dim;
    const int64_t visible = c.causal ? std::min(i + 1, c.seq_k) : c.seq_k;
    double mx = -INFINITY, total = 0;
    for (int64_t j = 0; j < visible; ++j) {
      double dot = 0;
      for (int64_t x = 0; x < c.dim; ++x) dot += f16(q[x]) * f16(in.k[kv0 + j * c.dim + x]);
      s[j] = dot / std::sqrt(static_cast<double>(c.dim));
      mx = std::max(mx, s[j]);
    }
    for (int64_t j = 0; j < visible; ++j) total += s[j] = std::exp(s[j] - mx);
    for (int64_t x = 0; x < c.dim; ++x) {
      double ref = 0;
      for (int64_t j = 0; j < visible; ++j) ref += s[j] / total * f16(in.v[kv0 + j * c.dim + x]);
      const double got = f16(out[((b * c.heads + h) * c.seq_q + i) * c.dim + x]);
      const double over = std::fabs(got - ref) - (2e-3 + 2e-3 * std::fabs(ref));
      worst = std::isnan(over) ? INFINITY : std::max(worst, over);
    }
  }
  return worst;
}

// One launch of the case under a config (decode: both kernels, partials in `part`).
struct Launcher {
  const Case& c;
  Inputs& in;
  Array<float>& pm;  // the decode's partials: running max, sum, acc
  Array<float>& pl;
  Array<float>& pacc;
  void operator()(const Config& k) {
    const int D = static_cast<int>(c.dim);
    const int64_t shb = c.heads * c.seq_q * c.dim, shh = c.seq_q * c.dim;
    const int64_t skb = c.kv_heads * c.seq_k * c.dim, skh = c.seq_k * c.dim;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.dim)));
    if (!c.decode) {
      const jit::Meta meta{{"BLOCK_M", k.bm},        {"BLOCK_N", k.bn},          {"HEAD_DIM", D},
                           {"CAUSAL", c.causal ? 1 : 0}, {"OVERLAP", k.overlap ? 1 : 0}, {"GROUP_HEADS", k.gh},
                           {"PAIRED", k.paired ? 1 : 0}};
      samples::k_attention_fwd.launch(samples::attention_fwd_grid(meta, c.seq_q, c.batch * c.heads), meta,
                                      k.options(), in.qd, in.kd, in.vd, in.out, c.seq_q, c.seq_k, c.heads, c.kv_heads,
                                      shb, shh, c.dim, skb, skh, c.dim, skb, skh, c.dim, shb, shh, c.dim, scale);
      return;
    }
    const int64_t len = jit::cdiv(jit::cdiv(c.seq_k, k.splits), k.bn) * k.bn, splits = jit::cdiv(c.seq_k, len);
    samples::k_attention_decode_partial.launch(
        Grid{static_cast<uint32_t>(splits), static_cast<uint32_t>(c.batch * c.kv_heads)},
        jit::Meta{{"BLOCK_H", k.bm}, {"BLOCK_N", k.bn}, {"HEAD_DIM", D}}, k.options(), in.qd, in.kd, in.vd,
        pm, pl, pacc, c.seq_k, c.heads, c.kv_heads, len, splits, c.heads * c.dim, c.dim,
        skb, skh, c.dim, skb, skh, c.dim, scale);
    int64_t bs = 16;  // as the sample: at least 16
    while (bs < splits) bs *= 2;
    samples::k_attention_decode_combine(Grid{static_cast<uint32_t>(c.batch * c.heads)},
                                        jit::Meta{{"BLOCK_S", bs}, {"HEAD_DIM", D}}, pm, pl, pacc, in.out, c.heads,
                                        splits, c.heads * c.dim, c.dim);
  }
};

struct Row {
  std::string name, config;
  double ms = 1e30, flops = 0, bytes = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string json_path = argc > 1 ? argv[1] : "tessel_bench_attention.json";
  // Line-buffered even into a file: a run killed by a timeout keeps every line printed so far,
  // and the "  trying" line before each config names the one that did not finish.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  jit::Device& dev = jit::Device::current();
  fmt::print("device: {}\n", dev.describe());
  if (dev.kind() != jit::BackendKind::Cuda) {
    fmt::print(stderr, "bench_attention needs a GPU\n");
    return 1;
  }
  bench::Timer timer;
  Inputs in(int64_t{8} * 16 * 8192 * 128);  // the largest case's Q (and K, V)
  // decode partials: up to 32 heads x 128 chunks (x 128 for acc)
  Array<float> pm(size_t{32} * 128), pl(size_t{32} * 128), pacc(size_t{32} * 128 * 128);
  std::vector<Row> rows;
  bool failed = false;
  for (const Case& c : cases()) {
    if (!bench::listed("BENCH_CASES", c.name)) continue;
    Launcher launch{c, in, pm, pl, pacc};
    Row r{c.name, "", 1e30, c.decode ? 0 : c.flops(), c.decode ? c.kv_bytes() : 0};
    std::vector<std::pair<double, Config>> screened;
    std::string all;
    for (const Config& k : c.decode ? decode_configs() : forward_configs()) {
      if (!bench::listed("BENCH_CONFIGS", k.str())) continue;
      try {
        fmt::print("  trying {} [{}]\n", c.name, k.str());
        in.out.poison();
        const double ms = timer.median_ms([&](int) { launch(k); }, 2, c.seq_k >= 8192 && !c.decode ? 5 : 20);
        const double over = spot_check(c, in, in.out.download());
        all += fmt::format(" {}={:.4f}", k.str(), ms);
        if (over > 0) {
          fmt::print("{} [{}]: WRONG, {:.3g} past the tolerance\n", c.name, k.str(), over);
          failed = true;
        } else {
          screened.emplace_back(ms, k);
        }
      } catch (const std::exception& e) {
        fmt::print("{} [{}]: error: {}\n", c.name, k.str(), e.what());
      }
    }
    std::sort(screened.begin(), screened.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string sustained;
    for (size_t i = 0; i < screened.size() && i < 3; ++i) {
      const double ms = timer.sustained_ms([&](int) { launch(screened[i].second); });
      sustained += fmt::format(" {}={:.4f}", screened[i].second.str(), ms);
      if (ms < r.ms) r.ms = ms, r.config = screened[i].second.str();
    }
    if (r.config.empty()) {
      fmt::print("{}: no config ran correctly\n", c.name);
      failed = true;
      continue;
    }
    if (c.decode)
      fmt::print("{:<36} {:>9.4f} ms {:>8.1f} GB/s     [{}]\n", r.name, r.ms, r.bytes / (r.ms * 1e-3) / 1e9, r.config);
    else
      fmt::print("{:<36} {:>9.4f} ms {:>8.1f} TFLOP/s  [{}]\n", r.name, r.ms, r.flops / (r.ms * 1e-3) / 1e12, r.config);
    fmt::print("  configs (ms):{}\n  sustained (ms):{}\n", all, sustained);
    rows.push_back(r);
  }
  std::FILE* js = std::fopen(json_path.c_str(), "w");
  fmt::print(js, "{{\n  \"device\": \"{}\",\n  \"kernels\": {{\n", dev.describe());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const std::string rate = r.bytes > 0 ? fmt::format("\"GBs\": {:.1f}", r.bytes / (r.ms * 1e-3) / 1e9)
                                         : fmt::format("\"TFLOPs\": {:.2f}", r.flops / (r.ms * 1e-3) / 1e12);
    fmt::print(js, "    \"{}\": {{\"ms\": {:.5f}, {}, \"config\": \"{}\"}}{}\n", r.name, r.ms, rate, r.config,
               i + 1 < rows.size() ? "," : "");
  }
  fmt::print(js, "  }}\n}}\n");
  std::fclose(js);
  return failed ? 1 : 0;
}
