// Tensor-core (mma.sync) layout math: fragments, the accumulator layout, ldmatrix row addresses
// and the swizzled shared-memory staging of dot operands.
//
// Pure integer math with no LLVM in it, unit-tested exhaustively on the CPU; lower_dot_mma.cpp
// emits exactly these formulas.
//
// The accumulator of a dot is the blocked layout spt=[1,2], tpw=[8,4], wpc=[wm,wn], order=[1,0]:
// a thread holds rows warp_m*8 + lane/4 + R*8*wm (R = 0 .. M/(8*wm)-1) and columns
// warp_n*8 + (lane%4)*2 + {0,1} + C*8*wn. That is the m16n8 C fragment of mma.sync when m-tile i
// of a warp is made of its row repetitions R = 2i (fragment rows 0-7) and 2i+1 (rows 8-15), and
// n-tile j is column repetition C = j (8 consecutive columns). The rows of an m-tile are not
// consecutive in the tile, but ldmatrix takes one address per row, so any row mapping works.
//
// Operands are staged in shared memory as a 2-D array of rows of `row_bytes` bytes, cut into
// 16-byte chunks that are XOR-swizzled per row so that the 8 rows one ldmatrix matrix reads
// (always 8 consecutive rows starting at a multiple of 8) hit 8 distinct bank groups.
//   A [M, K]: rows m, chunks along k; read with ldmatrix.x4 (no .trans).
//   B [K, N] of 16-bit elements: rows k, chunks along n; ldmatrix.x4/.x2 .trans.
//   B of 32-bit (tf32) or 8-bit (s8) elements: staged transposed, rows n, chunks along k
//     (ldmatrix.trans moves 16-bit halves only); ldmatrix without .trans.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tessel/ir/types.hpp"
#include "plan/layout.hpp"

namespace tessel::lowering {

enum class MmaKind { F16, BF16, TF32, S8, F8 };

// One mma.sync.aligned.m16n8kK.row.col instruction shape. Every A fragment is 16 rows of 32
// bytes (4 registers of 32 bits per lane), every B fragment 8 columns of 32 bytes (2 registers),
// the accumulator 16 x 8 of 32-bit values (4 per lane).
struct MmaInstr {
  MmaKind kind = MmaKind::F16;
  int k = 16;          // 16 (f16, bf16), 8 (tf32), 32 (s8, fp8)
  int elem_bytes = 2;  // operand element size: 2, 2, 4, 1, 1
  // F8: the formats of A and B (f8e4m3 or f8e5m2; they may differ), "e4m3" / "e5m2" in PTX.
  ir::Scalar a_type = ir::Scalar::f16, b_type = ir::Scalar::f16;
  static constexpr int m = 16, n = 8;
  int elems_per_reg() const { return 4 / elem_bytes; }
  int a_elems() const { return 4 * elems_per_reg(); }  // per lane
  int b_elems() const { return 2 * elems_per_reg(); }
  std::string ptx() const;  // "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
  bool is_fp8() const { return kind == MmaKind::F8; }
};

// "e4m3" / "e5m2": the PTX name of an fp8 operand type.
const char* fp8_ptx_type(ir::Scalar s);

// The instruction for operand element types `a` and `b` (equal, or two fp8 formats) and
// accumulator type `acc`; nullopt when tensor cores do not apply (f32 with allow_tf32 = 0, or a
// combination mma lacks). Whether the target has the instruction is the caller's question
// (fp8: Target::has_fp8_mma, or wgmma).
std::optional<MmaInstr> mma_instr_for(ir::Scalar a, ir::Scalar b, ir::Scalar acc, bool allow_tf32);

// Which element of a fragment a lane's element `e` is (PTX ISA, "matrix fragments for
// mma.m16n8k*"): e = register * elems_per_reg + position within the register (low bits first).
struct FragCoord {
  int row = 0, col = 0;
  friend bool operator==(const FragCoord&, const FragCoord&) = default;
};
FragCoord a_fragment(const MmaInstr& in, int lane, int e);  // (m in 0..15, k in 0..K-1)
FragCoord b_fragment(const MmaInstr& in, int lane, int e);  // (k, n in 0..7)
FragCoord c_fragment(int lane, int e);                      // (m, n), e in 0..3
// Inverses: the (lane, e) holding a fragment element.
struct LaneElem {
  int lane = 0, e = 0;
  friend bool operator==(const LaneElem&, const LaneElem&) = default;
};
LaneElem a_fragment_holder(const MmaInstr& in, int row, int col);
LaneElem b_fragment_holder(const MmaInstr& in, int k, int n);
LaneElem c_fragment_holder(int row, int col);

// ldmatrix.m8n8 (b16): lane `lane` receives, in register q, the two 16-bit values at
// (row, col .. col+1) of matrix q when not transposed, or (row, col) and (row + 1, col) when
// transposed; the rows of matrix q are addressed by lanes 8q .. 8q+7. Columns count 16-bit units.
FragCoord ldmatrix_received(int lane, int half, bool trans);  // (row, col) of that half

// The accumulator layout of an [M, N] dot result (see the top of the file); wm * wn = num_warps,
// wm chosen so that every warp holds whole m-tiles (16 * wm <= M) and the warp tile
// (M / wm) x (N / wn) is as square as the shape allows. When N < 8 * wn warps repeat columns
// (the blocked layout's replication): they compute the same n-tile.
Layout mma_accumulator_layout(const ir::Shape& mn, int num_warps);
bool is_mma_accumulator(const Layout& l, const ir::Shape& mn);

// The layout of a [K, N] B tile of 16-bit elements whose registers are the B fragments of
// mma.sync m16n8k16 for accumulator layout `acc` (so B needs no staging): spt=[2,1],
// tpw=[4,8], wpc=[1,wn], order=[0,1]. Lane l holds column n = l / 4 of each of its n-tiles and
// rows k = 2 (l % 4) + {0, 1} + 8r: repetition r = 2s of k-step s is b0, b1, r = 2s + 1 is b2,
// b3; its column repetition j is n-tile j (columns j * 8wn + warp_n * 8 + l / 4, as `acc`'s).
// Only when every warp is along N (acc's wm = 1: no two warps need the same B), K is a
// multiple of 16 and N of 8 * wn; else nullopt.
std::optional<Layout> mma_b_register_layout(const Layout& acc, const ir::Shape& kn);

// Swizzled staging of a dot operand: `rows` rows of `row_bytes` bytes (a power of two >= 16,
// or a multiple of 128 when `blocked`).
//
// For wgmma (sm_90a) the staging is the hardware's swizzled canonical layout: the tile is cut
// into column blocks of block_bytes() = min(row_bytes, 128) bytes, each stored as `rows`
// consecutive rows of that width, and within a block the 16-byte chunk index is XORed with the
// row's bits exactly as wgmma's 32/64/128-byte swizzle modes do on address bits [4..6] (for
// block bases aligned to 8 rows). A's rows are also permuted (`warpgroups` > 0) so that the 64
// rows a warpgroup's m64 instruction reads are the rows of the mma accumulator layout its warps
// hold (physical_row).
struct SmemTile {
  int64_t rows = 0;
  int64_t row_bytes = 16;
  bool blocked = false;  // wgmma canonical layout: column blocks of block_bytes()
  int warpgroups = 0;    // > 0: A staged for wgmma with this many warpgroups along M
  int64_t bytes() const { return rows * row_bytes; }
  int64_t block_bytes() const { return blocked && row_bytes > 128 ? 128 : row_bytes; }
  int64_t chunks() const { return block_bytes() / 16; }
  // The 16-byte chunk index chunk ^ swizzle(row); depends on row % 8 only.
  int64_t swizzle(int64_t row) const;
  // The staging row of tile row `row` (the identity unless `warpgroups`): with G warpgroups and
  // a tile row t = R * 32G + g * 32 + w * 8 + r (warp 4g + w of the accumulator layout, its
  // row repetition R = 2i + h), physical row (G * i + g) * 64 + w * 16 + h * 8 + r.
  int64_t physical_row(int64_t row) const;
  int64_t offset(int64_t row, int64_t byte) const;  // byte offset of (row, byte within the row)
};

// wgmma shared-memory matrix descriptors (PTX ISA, "matrix descriptor format"): bits 0-13
// start address >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4, 62-63
// swizzle mode (1: 128-byte, 2: 64-byte, 3: 32-byte). desc_bits() is everything but the start
// address, for a blocked SmemTile read K-major (A: rows m, bytes along k) or MN-major (B: rows
// k, bytes along n, the instruction's imm-trans-b = 1).
int wgmma_swizzle_mode(const SmemTile& t);
uint64_t wgmma_desc_bits(const SmemTile& t, bool k_major);
uint64_t wgmma_desc(const SmemTile& t, bool k_major, uint32_t smem_address);

// The accumulator layout a dot of [M, K] x [K, N] `ab` operands gets on sm_90a when wgmma can
// compute it: every warp along M (warps_per_cta = [num_warps, 1]); nullopt when wgmma does not
// apply (operands not f16/bf16/fp8, num_warps not a multiple of 4, M not a multiple of
// 16 * num_warps, N not 16, 32 or a multiple of 64 up to 256, K not 16, 32 or a multiple of 64;
// fp8 (k32 instructions) K 32 or a multiple of 64).
std::optional<Layout> wgmma_accumulator_layout(ir::Scalar ab, ir::Scalar acc, int64_t M, int64_t N, int64_t K,
                                               int num_warps);

// The whole plan of one dot on tensor cores.
struct MmaPlan {
  MmaInstr in;
  int64_t M = 0, N = 0, K = 0;
  int wm = 1, wn = 1;  // warps along M and N (the accumulator layout's warps_per_cta)
  int64_t m_tiles = 0, n_tiles = 0, k_steps = 0;  // per warp
  // B staged [N][K] (rows n, bytes along k) rather than [K][N]: always for tf32 and s8; for
  // f16/bf16 when B is loaded contiguous along k (K^T read from row-major K), so its rows copy
  // straight in. wgmma then reads it K-major (imm-trans-b 0), mma.sync with ldmatrix, no .trans.
  bool b_by_rows_of_n = false;
  // wgmma.mma_async (sm_90a): one warpgroup instruction m64nNk16 per (m64 block, k-step) from
  // blocked stagings (SmemTile) instead of ldmatrix + mma.sync; the accumulator layout is
  // wgmma_accumulator_layout's, so the epilogue is the same.
  bool wgmma = false;
  // wgmma with A from registers (the instruction's register-A form): A is held in the
  // accumulator layout of an [M, K] tile (what an earlier dot's result, rescaled and cast,
  // is in: attention's P), whose registers are exactly the A fragments of m64nNk16, so A
  // needs no staging. `a` stays planned but is never written.
  bool a_in_registers = false;
  // mma.sync (f16/bf16) with B from registers: B is held in mma_b_register_layout, whose
  // registers are the B fragments (b_register), so B has no staging (`b` is empty). What a
  // dequantisation computes in registers (W4A16's unpacked weights) then never goes through
  // shared memory.
  bool b_in_registers = false;
  // Whether operand i (0: A, 1: B) is read from registers (a_in_registers / b_in_registers):
  // it then has no staging to fill.
  bool in_registers(int i) const { return i == 0 ? a_in_registers : b_in_registers; }
  int warpgroups() const { return wm / 4; }
  int64_t wgmma_blocks() const { return M / (64 * warpgroups()); }  // m64 blocks per warpgroup
  // Byte offsets (from each staging's base) of the start of A for warpgroup g's block i at
  // k-step s, and of B at k-step s.
  int64_t wgmma_a_offset(int g, int64_t i, int64_t s) const;
  int64_t wgmma_b_offset(int64_t s) const;
  std::string wgmma_ptx() const;  // "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"
                                  // (fp8: m64nNk32.f32.e4m3.e5m2; both operands K-major)
  SmemTile a, b;
  int64_t b_offset = 0;  // byte offset of B's staging after A's (16-byte aligned)
  int64_t smem_bytes() const { return b_offset + b.bytes(); }
  // The register of A (held in accumulator layout `la` of [M, K]) that is element e (0..7) of
  // the register-A fragment of m64 block i at k-step s: pairs e = 2q, 2q + 1 form register q.
  int64_t a_register(const Layout& la, int64_t i, int64_t s, int e) const;
  // The register of B (held in mma_b_register_layout `lb` of [K, N]) that is element e (0..3)
  // of the B fragment of n-tile j at k-step s: e = 0, 1 form b0, e = 2, 3 b1.
  int64_t b_register(const Layout& lb, int64_t s, int64_t j, int e) const;
  bool b_pairs() const { return n_tiles % 2 == 0; }  // B read with .x4 (two n-tiles) else .x2

  // Tile coordinates of fragment rows/columns for warp coordinates (warp_m, warp_n).
  int64_t tile_row(int warp_m, int64_t i, int r) const;  // m-tile i, fragment row r in 0..15
  int64_t tile_col(int warp_n, int64_t j, int c) const;  // n-tile j, fragment column c in 0..7
  // Accumulator register (numbering of `acc`) of element e (0..3) of the C fragment (i, j).
  int64_t acc_register(const Layout& acc, int64_t i, int64_t j, int e) const;
  // The shared-memory row and (unswizzled) 16-byte chunk whose address lane `lane` passes to
  // ldmatrix: A's x4 for (m-tile i, k-step s); B's x4 for n-tiles (j, j+1) or x2 for n-tile j.
  struct RowChunk {
    int64_t row = 0, chunk = 0;
  };
  RowChunk a_address(int warp_m, int lane, int64_t i, int64_t s) const;
  RowChunk b_address(int warp_n, int lane, int64_t j, int64_t s) const;
};

// The plan for a [M, K] x [K, N] dot whose accumulator has layout `acc`; nullopt (use FMA) when
// `acc` is not an mma accumulator layout that covers M with whole m-tiles. With `allow_wgmma`
// (sm_90a) a dot whose layout is wgmma_accumulator_layout's is planned for wgmma.
// `b_k_major`: B's tile is held contiguous along K (layout_along dim 0): stage it [N][K].
// `a_layout` (when given): the layout A is held in; a wgmma dot whose A is held in the
// accumulator layout of [M, K] takes A from registers (a_in_registers).
// `b_layout` (when given): the layout B is held in; an f16/bf16 mma.sync dot whose B is held in
// mma_b_register_layout takes B from registers (b_in_registers).
std::optional<MmaPlan> plan_mma(const MmaInstr& in, int64_t M, int64_t N, int64_t K, const Layout& acc,
                                bool allow_wgmma = false, bool b_k_major = false, const Layout* a_layout = nullptr,
                                const Layout* b_layout = nullptr);

}  // namespace tessel::lowering
