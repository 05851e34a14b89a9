// Conv2d -> BatchNorm -> ReLU on NHWC f16, as an implicit GEMM (no im2col buffer).
//
// x[B, H, W, C] and the output y[B, P, Q, CO] are channels-last (NHWC); the filter w[CO, R, S, C]
// is KRSC (torch's channels_last weight): output channels are rows, each row contiguous over
// (r, s, c). The GEMM: M = B * P * Q output pixels, N = CO, K = R * S * C, with
// P = (H + 2 PAD - R) / STRIDE + 1 and Q likewise. R, S, STRIDE and PAD are meta-parameters
// (compile-time), the sizes runtime integers. C must be a multiple of BLOCK_K, so that each K
// block lies in one filter tap (r, s): its A tile is BLOCK_M pixels x BLOCK_K channels of one
// input position per pixel, contiguous along the channels; the addresses come from the loop's
// k each trip (the pipeliner issues them trips ahead like carried pointers), and the borders are
// masks (zero padding). B is the filter rows, contiguous along K.
//
// The batch-norm is folded on the host into a per-channel scale and shift (inference form):
// scale = gamma / sqrt(var + eps), shift = beta - mean * scale, so the fused epilogue is
// y = relu(conv * scale[co] + shift[co]) on the f32 accumulator, rounded to f16 once. The unfused
// form writes the convolution in f16, and a second kernel applies BN and ReLU to it.
//
// Late layers have few output pixels (7x7x512 at batch 32: 1568 rows, 200 tiles of 64x64 for
// 132 SMs, 72 K blocks each): the split-K form runs program_id(2) over slices of k_per_split of
// the R * S * C rows of K (a multiple of BLOCK_K) and writes f32 partial products
// part[split, M, CO]; the last program of each output tile to arrive (an acq_rel counter per
// tile) sums them in slice order, applies BN and ReLU, stores y and resets its counter. The
// stream-K form instead gives every program the same share of all tiles' K blocks.
#pragma once
#include "tessel/samples/split_k.hpp"
#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

struct ConvTile {
  Tile acc, rm, rn;
};

// The f32 accumulator of output tile (tm, tn): pixels rm = tm * BLOCK_M + .., channels rn =
// tn * BLOCK_N + .., over the K rows [k0, k1) (multiples of BLOCK_K). conv_acc: the tile
// (program_id(0), program_id(1)).
inline ConvTile conv_acc_at(Ptr<f16> x, Ptr<f16> w, const Tile& B, const Tile& H, const Tile& W, const Tile& C,
                            const Tile& CO, const Tile& P, const Tile& Q, const Operand& k0, const Operand& k1,
                            const Tile& tm, const Tile& tn, const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], BK = m["BLOCK_K"];
  const int R = m["R"], S = m["S"], STRIDE = m["STRIDE"], PAD = m["PAD"];
  auto rm = tm * BM + arange(0, BM);  // output pixels (b, p, q), row-major
  auto rn = tn * BN + arange(0, BN);  // output channels
  auto rk = arange(0, BK);
  auto pix_ok = rm < B * P * Q;
  auto pq = rm % (P * Q);
  auto img = rm / (P * Q);
  auto ih0 = (pq / Q) * STRIDE - PAD;  // the input row and column of filter tap (0, 0)
  auto iw0 = (pq % Q) * STRIDE - PAD;
  auto w_rows = w + rn.row() * (C * (R * S));  // [1, BN] filter rows
  auto co_ok = rn.row() < CO;
  Var acc{zeros<f32>({BM, BN})};
  for (auto k : range(k0, k1, BK)) {
    auto tap = k / C;  // (r, s) of this K block, and its first channel
    auto c0 = k - tap * C;
    auto ih = ih0 + tap / S;
    auto iw = iw0 + tap % S;
    auto inside = pix_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W);
    auto x_at = x + (((img * H + ih) * W + iw) * C + c0).col() + rk.row();  // [BM, BK]
    auto a = load(x_at, inside.col() & (rk.row() < BK), 0);
    auto b = load(w_rows + (k + rk).col(), co_ok & (rk.col() < BK), 0);  // [BK, BN]
    acc = dot(a, b, acc);
  }
  return {acc.get(), rm, rn};
}
inline ConvTile conv_acc(Ptr<f16> x, Ptr<f16> w, const Tile& B, const Tile& H, const Tile& W, const Tile& C,
                         const Tile& CO, const Tile& P, const Tile& Q, const Operand& k0, const Operand& k1,
                         const Meta& m) {
  return conv_acc_at(x, w, B, H, W, C, CO, P, Q, k0, k1, program_id(0), program_id(1), m);
}

inline void store_nhwc(Ptr<f16> y, const Tile& v, const ConvTile& t, const Tile& M, const Tile& CO) {
  store(y + t.rm.col() * CO + t.rn.row(), v, (t.rm.col() < M) & (t.rn.row() < CO));
}

// relu(acc * scale[rn] + shift[rn]) for a [BM, BN] accumulator of output channels rn.
inline Tile bn_relu(const Tile& acc, Ptr<f32> scale, Ptr<f32> shift, const Tile& rn, const Tile& CO) {
  auto ok = rn < CO;
  return maximum(acc * load(scale + rn, ok, 0).row() + load(shift + rn, ok, 0).row(), 0.0f);
}

// y = relu(conv(x, w) * scale + shift), per output channel.
inline void conv2d_bn_relu_kernel(Ptr<f16> x, Ptr<f16> w, Ptr<f32> scale, Ptr<f32> shift, Ptr<f16> y, Int B, Int H,
                                  Int W, Int C, Int CO, Int P, Int Q, const Meta& m) {
  ConvTile t = conv_acc(x, w, B, H, W, C, CO, P, Q, 0, C * (m["R"] * m["S"]), m);
  store_nhwc(y, bn_relu(t.acc, scale, shift, t.rn, CO), t, B * P * Q, CO);
}

// Stream-K: the output tiles' K blocks are one list of work units (unit t * iters + i: K block
// i of tile t, tiles row-major over tiles_n columns of channels), and program p multiplies
// units [p * units, min((p + 1) * units, tiles * iters)): every program gets the same work
// whatever the tile count (the late layers have fewer tiles than SMs). A tile whose K blocks all
// fall in one program is finished there; else each contributor stores its f32 partial in one of
// its two slots of part[2 * programs, BLOCK_M, BLOCK_N] (0: its first tile, 1: its last) and adds
// 1 to the tile's counter (Order::acq_rel); the last to arrive sums the partials in program
// order, applies BN and ReLU, stores y and resets the counter. count[tiles] (i32) is zero
// before the first launch and after each.
inline void conv2d_bn_relu_streamk_kernel(Ptr<f16> x, Ptr<f16> w, Ptr<f32> scale, Ptr<f32> shift, Ptr<f32> part,
                                          Ptr<i32> count, Ptr<f16> y, Int B, Int H, Int W, Int C, Int CO, Int P,
                                          Int Q, Int tiles_n, Int units, const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], BK = m["BLOCK_K"];
  auto M = B * P * Q;
  auto iters = C * (m["R"] * m["S"]) / BK;  // K blocks a tile
  auto tiles = (M + (BM - 1)) / BM * tiles_n;
  auto u0 = program_id(0) * units;
  auto u1 = minimum(u0 + units, tiles * iters);
  auto first_tile = u0 / iters;
  auto local = arange(0, BM).col() * BN + arange(0, BN).row();
  for (auto t : range(first_tile, (u1 + (iters - 1)) / iters)) {
    auto i0 = maximum(u0 - t * iters, 0);
    auto i1 = minimum(u1 - t * iters, iters);
    ConvTile ct = conv_acc_at(x, w, B, H, W, C, CO, P, Q, i0 * BK, i1 * BK, t / tiles_n, t % tiles_n, m);
    auto whole = (i0 == 0) & (i1 == iters);
    for ([[maybe_unused]] auto once : range(0, where(whole, 1, 0)))
      store_nhwc(y, bn_relu(ct.acc, scale, shift, ct.rn, CO), ct, M, CO);
    for ([[maybe_unused]] auto once : range(0, where(whole, 0, 1))) {
      auto slot = 2 * program_id(0) + where(t == first_tile, 0, 1);
      store(part + slot * (BM * BN) + local, ct.acc);
      auto first = t * iters / units, last = (t * iters + (iters - 1)) / units;  // the tile's contributors
      auto arrived = atomic_add(count + t, 1, Order::acq_rel);
      for ([[maybe_unused]] auto is_last : range(0, where(arrived == last - first, 1, 0))) {
        Var sum{zeros<f32>({BM, BN})};
        for (auto q : range(first, last + 1)) {
          auto q_slot = 2 * q + where(t == q * units / iters, 0, 1);
          sum = sum.get() + load(part + q_slot * (BM * BN) + local);
        }
        store_nhwc(y, bn_relu(sum.get(), scale, shift, ct.rn, CO), ct, M, CO);
        store(count + t, 0);
      }
    }
  }
}

// The split-K form: part[program_id(2), M, CO] (f32) = the product over the K rows
// [split * k_per_split, + k_per_split); the last of the num_programs(2) programs of an output tile
// to arrive sets y to relu(sum * scale + shift), the slices summed in order. count[tile] (i32,
// zero before the first launch) counts the arrivals and is zero again when the kernel ends.
inline void conv2d_bn_relu_splitk_kernel(Ptr<f16> x, Ptr<f16> w, Ptr<f32> scale, Ptr<f32> shift, Ptr<f32> part,
                                         Ptr<i32> count, Ptr<f16> y, Int B, Int H, Int W, Int C, Int CO, Int P, Int Q,
                                         Int k_per_split, const Meta& m) {
  auto krs = C * (m["R"] * m["S"]);
  auto k0 = program_id(2) * k_per_split;
  ConvTile t = conv_acc(x, w, B, H, W, C, CO, P, Q, k0, minimum(k0 + k_per_split, krs), m);
  auto M = B * P * Q;
  auto ok = (t.rm.col() < M) & (t.rn.row() < CO);
  auto at = t.rm.col() * CO + t.rn.row();
  split_k_sum_last(part, count, t.acc, at, ok, M * CO,
                   [&](const Tile& sum) { store(y + at, bn_relu(sum, scale, shift, t.rn, CO), ok); });
}

// y = conv(x, w), f16.
inline void conv2d_kernel(Ptr<f16> x, Ptr<f16> w, Ptr<f16> y, Int B, Int H, Int W, Int C, Int CO, Int P, Int Q,
                          const Meta& m) {
  ConvTile t = conv_acc(x, w, B, H, W, C, CO, P, Q, 0, C * (m["R"] * m["S"]), m);
  store_nhwc(y, t.acc, t, B * P * Q, CO);
}

// The unfused second pass: y[i] = relu(y[i] * scale[c] + shift[c]), c = i % CO, in place.
inline void bn_relu_nhwc_kernel(Ptr<f16> y, Ptr<f32> scale, Ptr<f32> shift, Int total, Int CO, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto ok = offs < total;
  auto c = offs % CO;
  auto v = cast<f32>(load(y + offs, ok, 0)) * load(scale + c, ok, 0) + load(shift + c, ok, 0);
  store(y + offs, maximum(v, 0.0f), ok);
}

// C must be a multiple of BLOCK_K (a K block within one filter tap).
inline const Meta kConvMeta{{"BLOCK_M", 128}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"R", 3},
                            {"S", 3},         {"STRIDE", 1},   {"PAD", 1}};
inline jit::Kernel k_conv2d_bn_relu{"conv2d_bn_relu", &conv2d_bn_relu_kernel,
                                    {"x", "w", "scale", "shift", "y", "B", "H", "W", "C", "CO", "P", "Q"}, kConvMeta};
// SPLITS: the K slices its launchers make (the grid's z and k_per_split); the kernel's code does
// not read it (a meta-parameter so that `tessel tune` can choose it with the tile).
inline const Meta kConvSplitMeta{{"BLOCK_M", 128}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"R", 3},
                                 {"S", 3},         {"STRIDE", 1},   {"PAD", 1},     {"SPLITS", 3}};
inline jit::Kernel k_conv2d_bn_relu_splitk{
    "conv2d_bn_relu_splitk", &conv2d_bn_relu_splitk_kernel,
    {"x", "w", "scale", "shift", "part", "count", "y", "B", "H", "W", "C", "CO", "P", "Q", "k_per_split"},
    kConvSplitMeta};
// SM_PROGRAMS: programs a multiprocessor for the launchers (grid = SMs x SM_PROGRAMS, fewer when
// there are fewer K blocks); the kernel's code does not read it.
inline const Meta kConvStreamMeta{{"BLOCK_M", 128}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"R", 3},
                                  {"S", 3},         {"STRIDE", 1},   {"PAD", 1},     {"SM_PROGRAMS", 1}};
inline jit::Kernel k_conv2d_bn_relu_streamk{
    "conv2d_bn_relu_streamk", &conv2d_bn_relu_streamk_kernel,
    {"x", "w", "scale", "shift", "part", "count", "y", "B", "H", "W", "C", "CO", "P", "Q", "tiles_n", "units"},
    kConvStreamMeta};
inline jit::Kernel k_conv2d{"conv2d", &conv2d_kernel, {"x", "w", "y", "B", "H", "W", "C", "CO", "P", "Q"}, kConvMeta};
inline jit::Kernel k_bn_relu_nhwc{"bn_relu_nhwc", &bn_relu_nhwc_kernel, {"y", "scale", "shift", "total", "CO"},
                                  Meta{{"BLOCK", 1024}}};

}  // namespace tessel::samples
