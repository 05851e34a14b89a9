// Tensor-core layout math: mma fragments, the accumulator layout, ldmatrix addressing, swizzle.
#include "plan/mma_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "tessel/ir/error.hpp"

namespace tessel::lowering {

std::string MmaInstr::ptx() const {
  switch (kind) {
    case MmaKind::F16: return "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
    case MmaKind::BF16: return "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
    case MmaKind::TF32: return "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
    case MmaKind::S8: return "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
    case MmaKind::F8:
      return fmt::format("mma.sync.aligned.m16n8k32.row.col.f32.{}.{}.f32", fp8_ptx_type(a_type), fp8_ptx_type(b_type));
  }
  return "";
}

const char* fp8_ptx_type(ir::Scalar s) { return s == ir::Scalar::f8e5m2 ? "e5m2" : "e4m3"; }

std::optional<MmaInstr> mma_instr_for(ir::Scalar a, ir::Scalar b, ir::Scalar acc, bool allow_tf32) {
  using S = ir::Scalar;
  if (ir::is_fp8(a) && ir::is_fp8(b)) {
    if (acc != S::f32) return std::nullopt;
    MmaInstr in{MmaKind::F8, 32, 1};
    in.a_type = a;
    in.b_type = b;
    return in;
  }
  if (a != b) return std::nullopt;
  const S ab = a;
  if (ab == S::f16 && acc == S::f32) return MmaInstr{MmaKind::F16, 16, 2};
  if (ab == S::bf16 && acc == S::f32) return MmaInstr{MmaKind::BF16, 16, 2};
  if (ab == S::f32 && acc == S::f32 && allow_tf32) return MmaInstr{MmaKind::TF32, 8, 4};
  if (ab == S::i8 && acc == S::i32) return MmaInstr{MmaKind::S8, 32, 1};
  return std::nullopt;
}

// Every fragment register holds 4 bytes of one row (A) or column (B): register q of A covers
// rows (q % 2) * 8 + lane / 4 and bytes (q / 2) * 16 + (lane % 4) * 4 .. +3 of a 32-byte row;
// register q of B covers column lane / 4 and bytes q * 16 + (lane % 4) * 4 .. +3 along k.
FragCoord a_fragment(const MmaInstr& in, int lane, int e) {
  const int per = in.elems_per_reg(), q = e / per, sub = e % per;
  return {(q % 2) * 8 + lane / 4, ((q / 2) * 16 + (lane % 4) * 4) / in.elem_bytes + sub};
}

FragCoord b_fragment(const MmaInstr& in, int lane, int e) {
  const int per = in.elems_per_reg(), q = e / per, sub = e % per;
  return {(q * 16 + (lane % 4) * 4) / in.elem_bytes + sub, lane / 4};
}

FragCoord c_fragment(int lane, int e) { return {lane / 4 + (e / 2) * 8, (lane % 4) * 2 + e % 2}; }

LaneElem a_fragment_holder(const MmaInstr& in, int row, int col) {
  const int byte = col * in.elem_bytes;
  const int q = row / 8 + 2 * (byte / 16);
  return {(row % 8) * 4 + (byte % 16) / 4, q * in.elems_per_reg() + (byte % 4) / in.elem_bytes};
}

LaneElem b_fragment_holder(const MmaInstr& in, int k, int n) {
  const int byte = k * in.elem_bytes;
  return {n * 4 + (byte % 16) / 4, (byte / 16) * in.elems_per_reg() + (byte % 4) / in.elem_bytes};
}

LaneElem c_fragment_holder(int row, int col) { return {(row % 8) * 4 + col / 2, (row / 8) * 2 + col % 2}; }

FragCoord ldmatrix_received(int lane, int half, bool trans) {
  if (trans) return {(lane % 4) * 2 + half, lane / 4};
  return {lane / 4, (lane % 4) * 2 + half};
}

Layout mma_accumulator_layout(const ir::Shape& mn, int num_warps) {
  TESSEL_ASSERT(mn.size() == 2 && mn[0] >= 16 && mn[1] >= 8, "an mma accumulator is a 2-D tile of at least 16 x 8");
  const int64_t M = mn[0], N = mn[1];
  // Among splits that give every warp whole m-tiles, prefer ones without replicated columns,
  // then the smallest M/wm + N/wn (rows of A plus columns of B each warp reads per k), then
  // more warps along M.
  int best = 1;
  auto better = [&](int wm, int cur) {
    auto key = [&](int w) {
      int64_t wn = num_warps / w;
      bool replicated = 8 * wn > N;
      int64_t cost = M / w + N / std::min<int64_t>(wn, N / 8);
      return std::tuple(replicated, cost, -w);
    };
    return key(wm) < key(cur);
  };
  for (int wm = 2; wm <= num_warps && 16 * int64_t{wm} <= M; wm *= 2)
    if (better(wm, best)) best = wm;
  Layout l;
  l.size_per_thread = {1, 2};
  l.threads_per_warp = {8, 4};
  l.warps_per_cta = {best, num_warps / best};
  l.order = {1, 0};
  return l;
}

bool is_mma_accumulator(const Layout& l, const ir::Shape& mn) {
  return mn.size() == 2 && l.sliced.empty() && l.size_per_thread == std::vector<int>{1, 2} &&
         l.threads_per_warp == std::vector<int>{8, 4} && l.order == std::vector<int>{1, 0} &&
         l.warps_per_cta.size() == 2 && 16 * int64_t{l.warps_per_cta[0]} <= mn[0] && mn[1] >= 8;
}

std::optional<Layout> mma_b_register_layout(const Layout& acc, const ir::Shape& kn) {
  if (kn.size() != 2 || acc.warps_per_cta.size() != 2 || acc.warps_per_cta[0] != 1) return std::nullopt;
  if (!is_mma_accumulator(acc, {16, kn[1]})) return std::nullopt;
  const int wn = acc.warps_per_cta[1];
  if (kn[0] % 16 != 0 || kn[1] % (8 * int64_t{wn}) != 0) return std::nullopt;
  Layout l;
  l.size_per_thread = {2, 1};
  l.threads_per_warp = {4, 8};
  l.warps_per_cta = {1, wn};
  l.order = {0, 1};
  return l;
}

int64_t SmemTile::swizzle(int64_t row) const {
  // The 8 rows an ldmatrix matrix reads start at a multiple of 8. With 8 or more chunks per row
  // they all sit in the same bank groups unless chunk index ^= row % 8. With fewer chunks
  // (C = chunks()) rows 8/C apart share bank groups: flip by the row's index among those.
  const int64_t c = chunks();
  const int64_t r = row % 8;
  return c >= 8 ? r : (r / (8 / c)) % c;
}

int64_t SmemTile::physical_row(int64_t row) const {
  if (warpgroups == 0) return row;
  const int64_t G = warpgroups;
  const int64_t r = row % 8, w = (row / 8) % 4, g = (row / 32) % G, rep = row / (32 * G);
  return (G * (rep / 2) + g) * 64 + w * 16 + (rep % 2) * 8 + r;
}

int64_t SmemTile::offset(int64_t row, int64_t byte) const {
  const int64_t p = physical_row(row);
  const int64_t w = block_bytes();
  return (byte / w) * rows * w + p * w + ((((byte % w) / 16) ^ swizzle(p)) * 16) + byte % 16;
}

int wgmma_swizzle_mode(const SmemTile& t) {
  switch (t.block_bytes()) {
    case 128: return 1;
    case 64: return 2;
    case 32: return 3;
    default: return 0;
  }
}

uint64_t wgmma_desc_bits(const SmemTile& t, bool k_major) {
  const int64_t w = t.block_bytes();
  // K-major: 8-row groups of a block are w * 8 bytes apart (stride byte offset); the leading
  // byte offset is unused when every k-step lies inside one swizzle atom (1, as is usual).
  // MN-major: 8-row (k) groups 8 * w apart; column blocks of w bytes (along n) rows * w apart.
  const uint64_t sbo = static_cast<uint64_t>(8 * w) >> 4;
  const uint64_t lbo = k_major ? 1 : static_cast<uint64_t>(t.rows * w) >> 4;
  return ((lbo & 0x3fff) << 16) | ((sbo & 0x3fff) << 32) | (static_cast<uint64_t>(wgmma_swizzle_mode(t)) << 62);
}

uint64_t wgmma_desc(const SmemTile& t, bool k_major, uint32_t smem_address) {
  return wgmma_desc_bits(t, k_major) | ((smem_address & 0x3ffff) >> 4);
}

std::optional<Layout> wgmma_accumulator_layout(ir::Scalar ab, ir::Scalar acc, int64_t M, int64_t N, int64_t K,
                                               int num_warps) {
  using S = ir::Scalar;
  const bool fp8 = ir::is_fp8(ab);
  if ((ab != S::f16 && ab != S::bf16 && !fp8) || acc != S::f32) return std::nullopt;
  if (num_warps % 4 != 0 || M % (16 * int64_t{num_warps}) != 0) return std::nullopt;
  if (!(N == 16 || N == 32 || (N % 64 == 0 && N <= 256))) return std::nullopt;
  if (!((K == 16 && !fp8) || K == 32 || (K > 0 && K % 64 == 0))) return std::nullopt;
  Layout l;
  l.size_per_thread = {1, 2};
  l.threads_per_warp = {8, 4};
  l.warps_per_cta = {num_warps, 1};
  l.order = {1, 0};
  return l;
}

int64_t MmaPlan::wgmma_a_offset(int g, int64_t i, int64_t s) const {
  const int64_t w = a.block_bytes();
  const int64_t byte = s * in.k * in.elem_bytes;
  return (byte / w) * a.rows * w + (warpgroups() * i + g) * 64 * w + byte % w;
}

int64_t MmaPlan::wgmma_b_offset(int64_t s) const {
  if (!b_by_rows_of_n) return s * in.k * b.block_bytes();  // MN-major: k rows of the block down
  const int64_t w = b.block_bytes(), byte = s * in.k * in.elem_bytes;  // K-major: as A's k-steps
  return (byte / w) * b.rows * w + byte % w;
}

std::string MmaPlan::wgmma_ptx() const {
  if (in.is_fp8())
    return fmt::format("wgmma.mma_async.sync.aligned.m64n{}k32.f32.{}.{}", N, fp8_ptx_type(in.a_type),
                       fp8_ptx_type(in.b_type));
  const char* t = in.kind == MmaKind::BF16 ? "bf16" : "f16";
  return fmt::format("wgmma.mma_async.sync.aligned.m64n{}k16.f32.{}.{}", N, t, t);
}

int64_t MmaPlan::tile_row(int warp_m, int64_t i, int r) const {
  return (2 * i + r / 8) * 8 * wm + warp_m * 8 + r % 8;
}

int64_t MmaPlan::tile_col(int warp_n, int64_t j, int c) const { return (j * 8 * wn + warp_n * 8 + c) & (N - 1); }

int64_t MmaPlan::acc_register(const Layout& acc, int64_t i, int64_t j, int e) const {
  return reg_index(acc, {M, N}, {2 * i + e / 2, 2 * j + e % 2});
}

MmaPlan::RowChunk MmaPlan::a_address(int warp_m, int lane, int64_t i, int64_t s) const {
  const int q = lane / 8, r = lane % 8;
  return {tile_row(warp_m, i, (q % 2) * 8 + r), 2 * s + q / 2};
}

MmaPlan::RowChunk MmaPlan::b_address(int warp_n, int lane, int64_t j, int64_t s) const {
  const int q = lane / 8, r = lane % 8;
  const int64_t jj = j + (b_pairs() ? q / 2 : 0);
  if (b_by_rows_of_n) return {tile_col(warp_n, jj, r), 2 * s + q % 2};
  return {s * in.k + (q % 2) * 8 + r, tile_col(warp_n, jj, 0) * in.elem_bytes / 16};
}

int64_t MmaPlan::a_register(const Layout& la, int64_t i, int64_t s, int e) const {
  // Register-A fragment of m64nNk16 (f16/bf16): a0..a7 = rows r, r + 8 of the warp's 16 and
  // columns 2 (lane % 4) + {0, 1} (a0, a1 row r; a2, a3 row r + 8), then the same 8 columns on
  // (a4..a7): the C fragments of n-tiles 2s and 2s + 1 of an accumulator of [M, K].
  const int64_t j = 2 * s + e / 4, q = e % 4;
  return reg_index(la, {M, K}, {2 * i + q / 2, 2 * j + q % 2});
}

int64_t MmaPlan::b_register(const Layout& lb, int64_t s, int64_t j, int e) const {
  return reg_index(lb, {K, N}, {2 * (2 * s + e / 2) + e % 2, j});
}

std::optional<MmaPlan> plan_mma(const MmaInstr& in, int64_t M, int64_t N, int64_t K, const Layout& acc,
                                bool allow_wgmma, bool b_k_major, const Layout* a_layout, const Layout* b_layout) {
  if (!is_mma_accumulator(acc, {M, N})) return std::nullopt;
  // s8 needs K >= 32 (one m16n8k32 step); a K of 16 goes through FMA.
  if (K % in.k != 0) return std::nullopt;
  MmaPlan p;
  p.in = in;
  p.M = M;
  p.N = N;
  p.K = K;
  p.wm = acc.warps_per_cta[0];
  p.wn = acc.warps_per_cta[1];
  p.m_tiles = M / (16 * p.wm);
  p.n_tiles = std::max<int64_t>(1, N / (8 * p.wn));
  p.k_steps = K / in.k;
  p.b_by_rows_of_n = in.elem_bytes != 2 || b_k_major;
  p.a = SmemTile{M, K * in.elem_bytes};
  p.b = p.b_by_rows_of_n ? SmemTile{N, K * in.elem_bytes} : SmemTile{K, N * in.elem_bytes};
  p.b_offset = (p.a.bytes() + 15) / 16 * 16;
  if (allow_wgmma && (in.kind == MmaKind::F16 || in.kind == MmaKind::BF16 || in.is_fp8())) {
    const ir::Scalar ab = in.is_fp8() ? in.a_type : in.kind == MmaKind::BF16 ? ir::Scalar::bf16 : ir::Scalar::f16;
    auto want = wgmma_accumulator_layout(ab, ir::Scalar::f32, M, N, K, p.wm * p.wn);
    if (want && *want == acc) {
      p.wgmma = true;
      p.a = SmemTile{M, K * in.elem_bytes, true, p.wm / 4};
      p.b = p.b_by_rows_of_n ? SmemTile{N, K * in.elem_bytes, true, 0} : SmemTile{K, N * in.elem_bytes, true, 0};
      p.b_offset = (p.a.bytes() + 1023) / 1024 * 1024;  // swizzle atoms start 1024-aligned
      const auto a_acc = wgmma_accumulator_layout(ab, ir::Scalar::f32, M, K, 16, p.wm * p.wn);
      // (register A is planned for 16-bit operands only: an fp8 fragment packs four per register)
      p.a_in_registers = !in.is_fp8() && a_layout && a_acc && *a_layout == *a_acc;
    }
  }
  if (!p.wgmma && b_layout && (in.kind == MmaKind::F16 || in.kind == MmaKind::BF16)) {
    const auto want = mma_b_register_layout(acc, {K, N});
    if (want && *want == *b_layout) {
      p.b_in_registers = true;
      p.b_by_rows_of_n = false;
      p.b = SmemTile{0, 16};
    }
  }
  return p;
}

}  // namespace tessel::lowering
