// Attention forward (FlashAttention's algorithm, written the way a user writes it in the DSL):
// O = softmax(Q K^T * scale [+ causal mask]) V for one (batch, head) per program_id(1) and
// BLOCK_M query rows per program_id(0) (causal: longest first, attention_program below).
//
// Structure: the query block Q [BLOCK_M, HEAD_DIM] is loaded once, before the loop; a runtime
// `range` loop walks the keys BLOCK_N at a time, loading K^T [HEAD_DIM, BLOCK_N] (through
// pointers contiguous along dimension 0: Triton's K^T idiom) and V [BLOCK_N, HEAD_DIM]; two
// `dot`s per trip, with an online softmax between them (running row max `m_i` and sum `l_i` in
// `Var`s, base-2 exponentials with log2(e) folded into the scale, which must be positive: it
// scales the row max and enters each exponent through one fma, as Triton's tutorial does).
// The causal form (query i sees keys j <= i, top-left aligned as torch's is_causal) stops
// after the diagonal block.
// The keys run in two loops: whole blocks that no mask touches (below the program's first query
// row when causal, below seq_k otherwise), then the masked rest (the diagonal blocks, a partial
// last block), as Triton's tutorial splits its causal loop. OVERLAP=1 runs the unmasked blocks
// in a rotated loop (the softmax of one block beside the previous block's P V; see below).
// PAIRED=1 gives each program two query blocks of one head (paired_blocks below; the grid:
// attention_fwd_grid). Grouped-query attention: K and V have `kv_heads` heads, query head h
// reads KV head h / (heads / kv_heads). Sequence lengths need not be multiples of the blocks
// (masked loads, masked keys at -inf). Tensors are [batch, heads, seq, HEAD_DIM] with
// any strides on the first three dimensions and unit stride on the last; offsets are i32.
#pragma once
#include <limits>

#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

// The query block and the (batch, head) of this program; the grid is (query blocks, batch *
// heads), started x fastest. Causal blocks cost their index + 1 key blocks, so programs take
// them last-first (longest first, as FlashAttention's schedulers do): program 0 the last block,
// the heaviest, and the lightest fill the last wave instead of the heaviest. With
// GROUP_HEADS = g > 1 the launch order goes longest first across g heads at a time (the last
// block of each of g heads, then the block before, ...): the waves' tails even out while the
// programs running at once still read the K and V of only about g heads (they stay in L2).
// GROUP_HEADS = 1 is one head's blocks after another's. Without the mask every block costs
// the same and the order is the grid's.
struct AttentionProgram {
  Tile query_block, bh;
};
inline AttentionProgram attention_program(bool causal, int group_heads) {
  if (!causal) return {program_id(0), program_id(1)};
  auto blocks = num_programs(0);
  if (group_heads <= 1) return {blocks - 1 - program_id(0), program_id(1)};
  auto order = program_id(1) * blocks + program_id(0);  // the launch order
  auto group = order / (group_heads * blocks), r = order % (group_heads * blocks);
  auto heads = minimum(num_programs(1) - group * group_heads, group_heads);  // fewer in the last group
  return {blocks - 1 - r / heads, group * group_heads + r % heads};
}

// One query block `qb` of the (batch, head) pair `bh`: the forward's whole work for those rows.
template <DTypeTag T>
void attention_fwd_block(Ptr<T> q, Ptr<T> k, Ptr<T> v, Ptr<T> o, Int seq_q, Int seq_k, Int heads, Int kv_heads,
                         Int stride_qb, Int stride_qh, Int stride_qs, Int stride_kb, Int stride_kh, Int stride_ks,
                         Int stride_vb, Int stride_vh, Int stride_vs, Int stride_ob, Int stride_oh, Int stride_os,
                         Float scale, const Tile& qb, const Tile& bh, const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], D = m["HEAD_DIM"];
  const bool causal = m["CAUSAL"] != 0;
  auto b = bh / heads, h = bh % heads;
  auto kvh = h / (heads / kv_heads);
  auto rm = qb * BM + arange(0, BM);
  auto rn = arange(0, BN);
  auto rd = arange(0, D);
  auto qt = load(q + b * stride_qb + h * stride_qh + rm.col() * stride_qs + rd.row(), rm.col() < seq_q, 0);
  auto qk_scale = scale * 1.4426950408889634f;  // exp(x) = exp2(x * log2 e)
  Var m_i{full<f32>({BM}, -std::numeric_limits<float>::infinity())};
  Var l_i{zeros<f32>({BM})};
  Var acc{zeros<f32>({BM, D})};
  Var pk{k + b * stride_kb + kvh * stride_kh + rn.row() * stride_ks + rd.col()};  // K^T: [D, BN]
  Var pv{v + b * stride_vb + kvh * stride_vh + rn.col() * stride_vs + rd.row()};  // V: [BN, D]
  // One block of keys [n, n + BN): the online-softmax update. A `masked` block may hold keys
  // past seq_k or (causal) past a query row's diagonal: its loads are masked and those scores
  // are -inf; the blocks before `split` hold neither, so their trips skip every mask.
  auto block = [&](const Tile& n, bool masked) {
    auto key = n + rn;
    auto kt = masked ? load(pk, key.row() < seq_k, 0) : load(pk);
    auto s = dot(qt, kt);  // unscaled: the scale enters the max and, fused, the exponent
    if (masked) {
      // Key n + j is visible to query row i when j <= min(i, seq_k - 1) - n (causal) or
      // j < seq_k - n: one compare an element against a bound of its row (or one bound).
      auto keep = causal ? rn.row() <= (minimum(rm, seq_k - 1) - n).col() : rn.row() < seq_k - n;
      s = where(keep, s, -std::numeric_limits<float>::infinity());
    }
    auto m_new = maximum(m_i, max(s, 1) * qk_scale);
    auto p = exp2(fma(s, qk_scale, -m_new.col()));
    auto alpha = exp2(m_i - m_new);
    l_i = l_i * alpha + sum(p, 1);
    auto vt = masked ? load(pv, key.col() < seq_k, 0) : load(pv);
    acc = dot(cast<T>(p), vt, acc * alpha.col());
    m_i = m_new;
    pk += BN * stride_ks;
    pv += BN * stride_vs;
  };
  // Whole blocks below the program's first query row (causal) or below seq_k: no mask.
  auto first_row = qb * BM;
  auto split = (causal ? minimum(first_row, seq_k) : Tile(seq_k)) / BN * BN;
  auto end = causal ? minimum(first_row + BM, seq_k) : Tile(seq_k);
  if (m["OVERLAP"] != 0) {
    // The unmasked blocks in a rotated loop (FlashAttention-3's overlap inside a warpgroup):
    // trip n issues Q K_n^T, then the previous block's P V from probabilities carried in a Var,
    // then block n's softmax, which the compiler waits for Q K^T alone to start (each wgmma is
    // waited for where its result is first read: PipelinePlan::deferred_waits), so it runs
    // while P V does. The accumulator is rescaled to block n's row max after the softmax (the
    // multiply reads P V's result, so it waits there), not before P V is issued: the issue
    // then holds no per-element work (with warpgroup turns, the turn is held only for the
    // issue). Invariant at a trip's start: acc holds the blocks before n - 1, and p_prev block
    // n - 1, both at the running max m_i. Block 0 (masked: it may hold the diagonal or the end
    // of the keys; key 0 is visible to every row, so each row's max is finite) comes first,
    // the last rotated block's P V after the loop; the masked blocks then run in order below.
    const float inf = std::numeric_limits<float>::infinity();
    auto keep0 = causal ? rn.row() <= minimum(rm, seq_k - 1).col() : rn.row() < seq_k;
    auto s0 = where(keep0, dot(qt, load(pk, rn.row() < seq_k, 0)), -inf);
    m_i = max(s0, 1) * qk_scale;
    auto p0 = exp2(fma(s0, qk_scale, -m_i.get().col()));
    l_i = sum(p0, 1);
    Var p_prev{cast<T>(p0)};
    pk += BN * stride_ks;  // V stays one block behind
    split = maximum(split, BN);
    for (auto n : range(BN, split, BN)) {
      (void)n;
      auto s = dot(qt, load(pk));
      // The previous block's keys all lie below n <= seq_k: V needs no mask.
      acc = dot(p_prev, load(pv), acc);
      auto m_new = maximum(m_i, max(s, 1) * qk_scale);
      auto p = exp2(fma(s, qk_scale, -m_new.col()));
      auto alpha = exp2(m_i - m_new);
      l_i = l_i * alpha + sum(p, 1);
      acc = acc * alpha.col();  // blocks up to n - 1, now at block n's max
      p_prev = cast<T>(p);
      m_i = m_new;
      pk += BN * stride_ks;
      pv += BN * stride_vs;
    }
    auto prev = split - BN + rn;  // the last rotated block (or block 0), maybe partial
    acc = dot(p_prev, load(pv, prev.col() < seq_k, 0), acc);
    pv += BN * stride_vs;
  } else {
    for (auto n : range(0, split, BN)) block(n, false);
  }
  for (auto n : range(split, end, BN)) block(n, true);
  auto out = acc.get() * (1.0f / l_i.get()).col();  // one reciprocal a row, not a division an element
  store(o + b * stride_ob + h * stride_oh + rm.col() * stride_os + rd.row(), out, rm.col() < seq_q);
}

// The query blocks of a program with PAIRED = 1: two blocks of one (batch, head) pair, the grid
// (cdiv(query blocks, 2), batch * heads). Causal: block x with its mirror, blocks - 1 - x, so
// every program runs the same number of key blocks (blocks + 1) and none waits on a long tail;
// otherwise blocks x and x + cdiv(blocks, 2). The heavier runs first; a block without a partner
// (the middle of an odd count, the end of an odd count) runs alone. GROUP_HEADS has no effect
// (the programs' work is even). With producer warps the second block's K and V copies start
// while the first block's epilogue runs (the ring runs on into the next run of the key loops);
// without them, once the first block's output is stored.
struct PairedBlocks {
  Tile first, second, count;
};
inline PairedBlocks paired_blocks(bool causal, const Tile& seq_q, int block_m) {
  auto blocks = (seq_q + (block_m - 1)) / block_m;
  auto x = program_id(0);
  if (causal) {
    auto mirror = blocks - 1 - x;
    return {mirror, x, where(x < mirror, 2, 1)};
  }
  auto partner = x + num_programs(0);
  return {x, partner, where(partner < blocks, 2, 1)};
}

template <DTypeTag T>
void attention_fwd_kernel(Ptr<T> q, Ptr<T> k, Ptr<T> v, Ptr<T> o, Int seq_q, Int seq_k, Int heads, Int kv_heads,
                          Int stride_qb, Int stride_qh, Int stride_qs, Int stride_kb, Int stride_kh, Int stride_ks,
                          Int stride_vb, Int stride_vh, Int stride_vs, Int stride_ob, Int stride_oh, Int stride_os,
                          Float scale, const Meta& m) {
  const bool causal = m["CAUSAL"] != 0;
  auto block = [&](const Tile& qb, const Tile& bh) {
    attention_fwd_block<T>(q, k, v, o, seq_q, seq_k, heads, kv_heads, stride_qb, stride_qh, stride_qs, stride_kb,
                           stride_kh, stride_ks, stride_vb, stride_vh, stride_vs, stride_ob, stride_oh, stride_os,
                           scale, qb, bh, m);
  };
  if (m["PAIRED"] != 0) {
    const PairedBlocks p = paired_blocks(causal, seq_q, m["BLOCK_M"]);
    for (auto t : range(0, p.count, 1)) block(p.first + t * (p.second - p.first), program_id(1));
    return;
  }
  const AttentionProgram prog = attention_program(causal, m["GROUP_HEADS"]);
  block(prog.query_block, prog.bh);
}

// The grid of attention_fwd for seq_q queries and `pairs` (batch, head) pairs.
inline jit::Grid attention_fwd_grid(const jit::Meta& effective, int64_t seq_q, int64_t pairs) {
  const int64_t blocks = jit::cdiv(seq_q, effective["BLOCK_M"]);
  const bool paired = effective.has("PAIRED") && effective["PAIRED"] != 0;  // (the RoPE form has no PAIRED)
  return jit::Grid{static_cast<uint32_t>(paired ? (blocks + 1) / 2 : blocks),
                   static_cast<uint32_t>(pairs)};
}

// ---- attention forward with RoPE ------------------------------------------------------------
// The forward above with rotary position embeddings applied to Q and K inside the kernel, in
// the rotate-half convention (GPT-NeoX, Llama): dimensions d and d + D/2 form a pair rotated by
// the angle of (position, d mod D/2):
//   x'[d]       = x[d] cos - x[d + D/2] sin,   x'[d + D/2] = x[d + D/2] cos + x[d] sin.
// The angles come as f32 tables cos_t, sin_t [positions, D/2] (row-major, contiguous) that the
// caller fills (any base or scaling); the position of query row i and of key j is i and j, so
// the tables need max(seq_q, seq_k) rows. The rotation runs in f32 on each loaded tile and is
// rounded to T for the dots. Each rotated tile is loaded twice: once as it is and once with the
// two halves swapped (its partner element), which keeps the rotation elementwise.
template <DTypeTag T>
void attention_fwd_rope_kernel(Ptr<T> q, Ptr<T> k, Ptr<T> v, Ptr<T> o, Ptr<f32> cos_t, Ptr<f32> sin_t, Int seq_q,
                               Int seq_k, Int heads, Int kv_heads, Int stride_qb, Int stride_qh, Int stride_qs,
                               Int stride_kb, Int stride_kh, Int stride_ks, Int stride_vb, Int stride_vh,
                               Int stride_vs, Int stride_ob, Int stride_oh, Int stride_os, Float scale,
                               const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], D = m["HEAD_DIM"], half = D / 2;
  const bool causal = m["CAUSAL"] != 0;
  const AttentionProgram prog = attention_program(causal, m["GROUP_HEADS"]);
  const Tile& qb = prog.query_block;
  const Tile& bh = prog.bh;
  auto b = bh / heads, h = bh % heads;
  auto kvh = h / (heads / kv_heads);
  auto rm = qb * BM + arange(0, BM);
  auto rn = arange(0, BN);
  auto rd = arange(0, D);
  auto partner = where(rd < half, rd + half, rd - half);  // the other element of d's pair
  auto sign = where(rd < half, -1.0f, 1.0f);              // x[partner] enters with -sin, then +sin
  auto angle = rd % half;                                 // the table column of d
  // Q rotated once, before the loop: [BM, D].
  auto q_row = q + b * stride_qb + h * stride_qh + rm.col() * stride_qs;
  auto q_in = rm.col() < seq_q;
  auto qx = load(q_row + rd.row(), q_in, 0), qp = load(q_row + partner.row(), q_in, 0);
  auto qc = load(cos_t + rm.col() * half + angle.row(), q_in, 0.0f);
  auto qs = load(sin_t + rm.col() * half + angle.row(), q_in, 0.0f);
  auto qt = cast<T>(qx * qc + sign.row() * qp * qs);
  auto qk_scale = scale * 1.4426950408889634f;  // exp(x) = exp2(x * log2 e)
  Var m_i{full<f32>({BM}, -std::numeric_limits<float>::infinity())};
  Var l_i{zeros<f32>({BM})};
  Var acc{zeros<f32>({BM, D})};
  auto k_head = k + b * stride_kb + kvh * stride_kh;
  auto v_head = v + b * stride_vb + kvh * stride_vh;
  auto end = causal ? minimum((qb + 1) * BM, seq_k) : Tile(seq_k);
  for (auto n : range(0, end, BN)) {
    auto key = n + rn;
    auto k_in = key.row() < seq_k;
    // K^T [D, BN] rotated along dimension 0 (the head dimension).
    auto kx = load(k_head + key.row() * stride_ks + rd.col(), k_in, 0);
    auto kp = load(k_head + key.row() * stride_ks + partner.col(), k_in, 0);
    auto kc = load(cos_t + key.row() * half + angle.col(), k_in, 0.0f);
    auto ks = load(sin_t + key.row() * half + angle.col(), k_in, 0.0f);
    auto kt = cast<T>(kx * kc + sign.col() * kp * ks);
    auto s = dot(qt, kt) * qk_scale;
    auto keep = k_in;
    if (causal) keep = keep & (key.row() <= rm.col());
    s = where(keep, s, -std::numeric_limits<float>::infinity());
    auto m_new = maximum(m_i, max(s, 1));
    auto p = exp2(s - m_new.col());
    auto alpha = exp2(m_i - m_new);
    l_i = l_i * alpha + sum(p, 1);
    auto vt = load(v_head + key.col() * stride_vs + rd.row(), key.col() < seq_k, 0);
    acc = dot(cast<T>(p), vt, acc * alpha.col());
    m_i = m_new;
  }
  auto out = acc.get() * (1.0f / l_i.get()).col();  // one reciprocal a row, not a division an element
  store(o + b * stride_ob + h * stride_oh + rm.col() * stride_os + rd.row(), out, rm.col() < seq_q);
}

// ---- split-KV decode (FlashDecoding) ---------------------------------------------------------
// One query token per (batch, head) against a KV cache of seq_k keys. The keys are cut into
// num_splits chunks of split_len (a multiple of BLOCK_N; every chunk holds at least one key);
// program (split, batch * kv_heads + kv_head) runs the online softmax over its chunk for the
// heads / kv_heads query heads that share the KV head, as the BLOCK_H rows of one [BLOCK_H, D]
// query tile (BLOCK_H >= heads / kv_heads, at least 16 for the tensor cores; the extra rows
// are zeros and never stored), so each KV block is read once per group. It writes its partial
// result for each head r = batch * heads + head:
//   part_m[r, split] = running max of the scores in base-2 units (scores * scale * log2 e),
//   part_l[r, split] = sum of exp2(score - max),  part_acc[r, split, :] = sum of exp2(...) v.
// Q and O are [batch, heads, HEAD_DIM] (strides on the first two), K and V [batch, kv_heads,
// seq_k, HEAD_DIM]; partials are contiguous f32 [batch * heads, num_splits (, HEAD_DIM)].
template <DTypeTag T>
void attention_decode_partial_kernel(Ptr<T> q, Ptr<T> k, Ptr<T> v, Ptr<f32> part_m, Ptr<f32> part_l,
                                     Ptr<f32> part_acc, Int seq_k, Int heads, Int kv_heads, Int split_len,
                                     Int num_splits, Int stride_qb, Int stride_qh, Int stride_kb, Int stride_kh,
                                     Int stride_ks, Int stride_vb, Int stride_vh, Int stride_vs, Float scale,
                                     const Meta& m) {
  const int BH = m["BLOCK_H"], BN = m["BLOCK_N"], D = m["HEAD_DIM"];
  auto split = program_id(0);
  auto bkv = program_id(1);
  auto b = bkv / kv_heads, kvh = bkv % kv_heads;
  auto group = heads / kv_heads;
  auto rg = arange(0, BH);
  auto h = kvh * group + rg;  // the query heads of this KV head
  auto h_in = rg < group;
  auto rn = arange(0, BN);
  auto rd = arange(0, D);
  auto qt = load(q + b * stride_qb + h.col() * stride_qh + rd.row(), h_in.col(), 0);
  auto qk_scale = scale * 1.4426950408889634f;
  Var m_i{full<f32>({BH}, -std::numeric_limits<float>::infinity())};
  Var l_i{zeros<f32>({BH})};
  Var acc{zeros<f32>({BH, D})};
  auto lo = split * split_len;
  auto hi = minimum(lo + split_len, seq_k);
  Var pk{k + b * stride_kb + kvh * stride_kh + (lo + rn).row() * stride_ks + rd.col()};  // K^T: [D, BN]
  Var pv{v + b * stride_vb + kvh * stride_vh + (lo + rn).col() * stride_vs + rd.row()};  // V: [BN, D]
  for (auto n : range(lo, hi, BN)) {
    auto key = n + rn;
    auto kt = load(pk, key.row() < hi, 0);
    auto s = where(key.row() < hi, dot(qt, kt) * qk_scale, -std::numeric_limits<float>::infinity());
    auto m_new = maximum(m_i, max(s, 1));
    auto p = exp2(s - m_new.col());
    auto alpha = exp2(m_i - m_new);
    l_i = l_i * alpha + sum(p, 1);
    auto vt = load(pv, key.col() < hi, 0);
    acc = dot(cast<T>(p), vt, acc * alpha.col());
    m_i = m_new;
    pk += BN * stride_ks;
    pv += BN * stride_vs;
  }
  auto slot = (b * heads + h) * num_splits + split;  // [BH]: this program's (head, split) slots
  store(part_m + slot, m_i.get(), h_in);
  store(part_l + slot, l_i.get(), h_in);
  store(part_acc + slot.col() * D + rd.row(), acc.get(), h_in.col());
}

// The second pass of the split-KV decode: one program per (batch, head) rescales its
// num_splits partials to their common max M and divides:
//   O = sum_s exp2(m_s - M) acc_s / sum_s exp2(m_s - M) l_s      (BLOCK_S >= num_splits).
template <DTypeTag T>
void attention_decode_combine_kernel(Ptr<f32> part_m, Ptr<f32> part_l, Ptr<f32> part_acc, Ptr<T> o, Int heads,
                                     Int num_splits, Int stride_ob, Int stride_oh, const Meta& m) {
  const int BS = m["BLOCK_S"], D = m["HEAD_DIM"];
  auto r = program_id(0);
  auto rs = arange(0, BS);
  auto rd = arange(0, D);
  auto s_in = rs < num_splits;
  auto ms = load(part_m + r * num_splits + rs, s_in, -std::numeric_limits<float>::infinity());
  auto ls = load(part_l + r * num_splits + rs, s_in, 0.0f);
  auto w = exp2(ms - max(ms, 0));  // 0 for the splits past num_splits
  auto accs = load(part_acc + (r * num_splits + rs.col()) * D + rd.row(), s_in.col(), 0.0f);
  auto out = sum(accs * w.col(), 0) / sum(ls * w, 0);
  store(o + (r / heads) * stride_ob + (r % heads) * stride_oh + rd, out);
}

inline const std::vector<std::string> kAttentionParams{
    "q",         "k",         "v",         "o",         "seq_q",     "seq_k",     "heads",     "kv_heads",
    "stride_qb", "stride_qh", "stride_qs", "stride_kb", "stride_kh", "stride_ks", "stride_vb", "stride_vh",
    "stride_vs", "stride_ob", "stride_oh", "stride_os", "scale"};
// BLOCK_N 32: at 64 with 4 warps on mma.sync targets (sm_80, sm_90 without wgmma) ptxas needs
// 255 registers and spills about 500 bytes since the keys run in two loops (194 against 125
// registers with 8 warps; the cause is not found: not the block order); wgmma targets take
// their tiles from the benchmark's configs (bench/RESULTS.md).
inline const Meta kAttentionMeta{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"HEAD_DIM", 64}, {"CAUSAL", 1}, {"OVERLAP", 0},
                                   {"GROUP_HEADS", 1}, {"PAIRED", 0}};

inline jit::Kernel k_attention_fwd{"attention_fwd", &attention_fwd_kernel<f16>, kAttentionParams, kAttentionMeta};
inline jit::Kernel k_attention_fwd_bf16{"attention_fwd_bf16", &attention_fwd_kernel<bf16>, kAttentionParams,
                                        kAttentionMeta};

inline const std::vector<std::string> kAttentionRopeParams{
    "q",         "k",         "v",         "o",         "cos_t",     "sin_t",     "seq_q",     "seq_k",
    "heads",     "kv_heads",  "stride_qb", "stride_qh", "stride_qs", "stride_kb", "stride_kh", "stride_ks",
    "stride_vb", "stride_vh", "stride_vs", "stride_ob", "stride_oh", "stride_os", "scale"};
// BLOCK_N 32: the rotation holds K^T, its partner and two f32 angle tiles per trip (64 spills
// registers at 4 warps).
inline jit::Kernel k_attention_fwd_rope{"attention_fwd_rope", &attention_fwd_rope_kernel<f16>, kAttentionRopeParams,
                                        Meta{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"HEAD_DIM", 64}, {"CAUSAL", 1},
                                             {"GROUP_HEADS", 1}}};

inline const std::vector<std::string> kDecodePartialParams{
    "q",         "k",         "v",         "part_m",    "part_l",    "part_acc",  "seq_k",
    "heads",     "kv_heads",  "split_len", "num_splits", "stride_qb", "stride_qh", "stride_kb",
    "stride_kh", "stride_ks", "stride_vb", "stride_vh", "stride_vs", "scale"};
inline jit::Kernel k_attention_decode_partial{"attention_decode_partial", &attention_decode_partial_kernel<f16>,
                                              kDecodePartialParams,
                                              Meta{{"BLOCK_H", 16}, {"BLOCK_N", 64}, {"HEAD_DIM", 128}}};
inline jit::Kernel k_attention_decode_combine{
    "attention_decode_combine", &attention_decode_combine_kernel<f16>,
    {"part_m", "part_l", "part_acc", "o", "heads", "num_splits", "stride_ob", "stride_oh"},
    Meta{{"BLOCK_S", 16}, {"HEAD_DIM", 128}}};

}  // namespace tessel::samples
