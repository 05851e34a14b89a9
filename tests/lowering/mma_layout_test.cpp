// Exhaustive CPU checks of the tensor-core layout math: mma fragments, the accumulator layout,
// ldmatrix addressing of the swizzled operand staging (simulated byte by byte) and bank conflicts.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "tessel/options/launch_spec.hpp"
#include "plan/mma_layout.hpp"

using namespace tessel::lowering;
using tessel::ir::Scalar;

namespace {

std::vector<MmaInstr> all_instrs() {
  return {*mma_instr_for(Scalar::f16, Scalar::f16, Scalar::f32, false),
          *mma_instr_for(Scalar::bf16, Scalar::bf16, Scalar::f32, false),
          *mma_instr_for(Scalar::f32, Scalar::f32, Scalar::f32, true),
          *mma_instr_for(Scalar::i8, Scalar::i8, Scalar::i32, false),
          *mma_instr_for(Scalar::f8e4m3, Scalar::f8e5m2, Scalar::f32, false)};
}

// (row, byte) of shared memory as the byte offset of a staged operand element.
int64_t a_smem(const MmaPlan& p, int64_t m, int64_t k, int byte) { return p.a.offset(m, k * p.in.elem_bytes + byte); }
int64_t b_smem(const MmaPlan& p, int64_t k, int64_t n, int byte) {
  const int e = p.in.elem_bytes;
  return p.b_offset + (p.b_by_rows_of_n ? p.b.offset(n, k * e + byte) : p.b.offset(k, n * e + byte));
}

// What ldmatrix delivers: byte `byte` (0..3) of register q of `lane`, as a shared-memory offset,
// given the rows each lane addresses (row, unswizzled chunk) and the tile's swizzle.
int64_t ldmatrix_byte(const SmemTile& t, int64_t base, const std::vector<MmaPlan::RowChunk>& addr, int lane, int q,
                      int byte, bool trans) {
  FragCoord rc = ldmatrix_received(lane, byte / 2, trans);
  const MmaPlan::RowChunk& a = addr.at(8 * q + rc.row);
  return base + t.offset(a.row, a.chunk * 16 + rc.col * 2 + byte % 2);
}

void check_bank_groups(const SmemTile& t, int64_t base, const std::vector<MmaPlan::RowChunk>& addr, int matrices) {
  for (int q = 0; q < matrices; ++q) {
    std::set<int64_t> groups;
    for (int r = 0; r < 8; ++r) {
      int64_t off = base + t.offset(addr[8 * q + r].row, addr[8 * q + r].chunk * 16);
      if (off % 16 != 0) CHECK(off % 16 == 0);
      groups.insert((off / 16) % 8);
    }
    CHECK(groups.size() == 8);  // the 8 rows of a matrix: one shared-memory wavefront
  }
}

// Simulates every ldmatrix of a warp and checks each fragment byte against the element the
// mma instruction expects there (PTX ISA fragment tables), then the mma sum covers the tile.
// Mismatches are counted and checked once per plan: millions of REQUIREs are slow in doctest.
void check_plan(const MmaPlan& p, const Layout& acc, int num_warps) {
  int64_t bad_a = 0, bad_b = 0, bad_c = 0;
  CAPTURE(p.in.ptx());
  CAPTURE(p.M);
  CAPTURE(p.N);
  CAPTURE(p.K);
  CAPTURE(acc.str());
  const tessel::ir::Shape shape{p.M, p.N};
  std::map<std::pair<int64_t, int64_t>, int> computed;  // (m, n) -> number of warps computing it
  for (int w = 0; w < num_warps; ++w) {
    const int wm = warp_coord(acc, w, 0), wn = warp_coord(acc, w, 1);
    for (int64_t s = 0; s < p.k_steps; ++s) {
      for (int64_t i = 0; i < p.m_tiles; ++i) {
        std::vector<MmaPlan::RowChunk> addr;
        for (int lane = 0; lane < 32; ++lane) addr.push_back(p.a_address(wm, lane, i, s));
        check_bank_groups(p.a, 0, addr, 4);
        for (int lane = 0; lane < 32; ++lane)
          for (int q = 0; q < 4; ++q)
            for (int byte = 0; byte < 4; ++byte) {
              FragCoord f = a_fragment(p.in, lane, q * p.in.elems_per_reg() + byte / p.in.elem_bytes);
              int64_t want = a_smem(p, p.tile_row(wm, i, f.row), s * p.in.k + f.col, byte % p.in.elem_bytes);
              bad_a += ldmatrix_byte(p.a, 0, addr, lane, q, byte, false) != want;
            }
      }
      for (int64_t j = 0; j < p.n_tiles; j += p.b_pairs() ? 2 : 1) {
        std::vector<MmaPlan::RowChunk> addr;
        for (int lane = 0; lane < 32; ++lane) addr.push_back(p.b_address(wn, lane, j, s));
        const int matrices = p.b_pairs() ? 4 : 2;
        check_bank_groups(p.b, p.b_offset, addr, matrices);
        for (int lane = 0; lane < 32; ++lane)
          for (int q = 0; q < matrices; ++q)
            for (int byte = 0; byte < 4; ++byte) {
              FragCoord f = b_fragment(p.in, lane, (q % 2) * p.in.elems_per_reg() + byte / p.in.elem_bytes);
              int64_t want = b_smem(p, s * p.in.k + f.row, p.tile_col(wn, j + q / 2, f.col), byte % p.in.elem_bytes);
              bad_b += ldmatrix_byte(p.b, p.b_offset, addr, lane, q, byte, !p.b_by_rows_of_n) != want;
            }
      }
    }
    // The C fragments are the accumulator layout's registers, and cover every register once.
    for (int lane = 0; lane < 32; ++lane) {
      std::set<int64_t> regs;
      for (int64_t i = 0; i < p.m_tiles; ++i)
        for (int64_t j = 0; j < p.n_tiles; ++j)
          for (int e = 0; e < 4; ++e) {
            int64_t reg = p.acc_register(acc, i, j, e);
            regs.insert(reg);
            FragCoord c = c_fragment(lane, e);
            auto el = element_of(acc, shape, ThreadPos{reg, lane, w});
            bad_c += el != std::vector<int64_t>{p.tile_row(wm, i, c.row), p.tile_col(wn, j, c.col)};
            if (lane == 0 && e == 0) {
              for (int r = 0; r < 16; ++r)
                for (int col = 0; col < 8; ++col) computed[{p.tile_row(wm, i, r), p.tile_col(wn, j, col)}]++;
            }
          }
      CHECK(static_cast<int64_t>(regs.size()) == num_regs(acc, shape));
      CHECK(static_cast<int64_t>(regs.size()) == p.m_tiles * p.n_tiles * 4);
    }
  }
  CHECK(bad_a == 0);
  CHECK(bad_b == 0);
  CHECK(bad_c == 0);
  // Every output element is computed, by the same number of warps (more than one only when
  // the layout replicates columns).
  CHECK(static_cast<int64_t>(computed.size()) == p.M * p.N);
  const int copies = computed.begin()->second;
  int uneven = 0;
  for (auto& [mn, n] : computed) uneven += n != copies;
  CHECK(uneven == 0);
  CHECK(copies * p.M * p.N == int64_t{num_warps} * p.m_tiles * p.n_tiles * 128);
}

}  // namespace

TEST_CASE("mma instructions per dtype combination") {
  CHECK(mma_instr_for(Scalar::f16, Scalar::f16, Scalar::f32, true)->k == 16);
  CHECK(mma_instr_for(Scalar::bf16, Scalar::bf16, Scalar::f32, false)->kind == MmaKind::BF16);
  CHECK(mma_instr_for(Scalar::f32, Scalar::f32, Scalar::f32, true)->k == 8);
  CHECK(!mma_instr_for(Scalar::f32, Scalar::f32, Scalar::f32, false).has_value());  // exact fp32: FMA
  CHECK(mma_instr_for(Scalar::i8, Scalar::i8, Scalar::i32, false)->k == 32);
  CHECK(!mma_instr_for(Scalar::f16, Scalar::f16, Scalar::f16, false).has_value());
  CHECK(!mma_instr_for(Scalar::f16, Scalar::bf16, Scalar::f32, false).has_value());
  CHECK(mma_instr_for(Scalar::i8, Scalar::i8, Scalar::i32, false)->ptx() ==
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32");
  // fp8: k32, one byte per element, the two formats may mix; f32 accumulation only.
  auto f8 = mma_instr_for(Scalar::f8e4m3, Scalar::f8e5m2, Scalar::f32, false);
  REQUIRE(f8.has_value());
  CHECK(f8->k == 32);
  CHECK(f8->elem_bytes == 1);
  CHECK(f8->ptx() == "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32");
  CHECK(!mma_instr_for(Scalar::f8e4m3, Scalar::f8e4m3, Scalar::f16, false).has_value());
  CHECK(!mma_instr_for(Scalar::f8e4m3, Scalar::f16, Scalar::f32, false).has_value());
}

TEST_CASE("A, B and C fragments: every (lane, element) is a distinct fragment element and back") {
  for (const MmaInstr& in : all_instrs()) {
    CAPTURE(in.ptx());
    std::set<std::pair<int, int>> a, b, c;
    for (int lane = 0; lane < 32; ++lane) {
      for (int e = 0; e < in.a_elems(); ++e) {
        FragCoord f = a_fragment(in, lane, e);
        REQUIRE((f.row >= 0 && f.row < 16 && f.col >= 0 && f.col < in.k));
        a.insert({f.row, f.col});
        CHECK(a_fragment_holder(in, f.row, f.col) == LaneElem{lane, e});
      }
      for (int e = 0; e < in.b_elems(); ++e) {
        FragCoord f = b_fragment(in, lane, e);
        REQUIRE((f.row >= 0 && f.row < in.k && f.col >= 0 && f.col < 8));
        b.insert({f.row, f.col});
        CHECK(b_fragment_holder(in, f.row, f.col) == LaneElem{lane, e});
      }
      for (int e = 0; e < 4; ++e) {
        FragCoord f = c_fragment(lane, e);
        c.insert({f.row, f.col});
        CHECK(c_fragment_holder(f.row, f.col) == LaneElem{lane, e});
      }
    }
    CHECK(static_cast<int>(a.size()) == 16 * in.k);
    CHECK(static_cast<int>(b.size()) == 8 * in.k);
    CHECK(c.size() == 128u);
  }
  // Spot checks against the PTX ISA tables.
  MmaInstr f16 = all_instrs()[0], tf32 = all_instrs()[2], s8 = all_instrs()[3];
  CHECK(a_fragment(f16, 5, 5) == FragCoord{1, 11});   // a5 of lane 5: row g, col 2t+8+1
  CHECK(b_fragment(f16, 6, 3) == FragCoord{13, 1});   // b3: k = 2t+8+1, n = g
  CHECK(a_fragment(tf32, 7, 2) == FragCoord{1, 7});   // a2: row g, col t+4
  CHECK(b_fragment(s8, 9, 6) == FragCoord{22, 2});    // b6: k = 4t+16+2, n = g
  CHECK(c_fragment(13, 3) == FragCoord{11, 3});
  CHECK(ldmatrix_received(13, 1, false) == FragCoord{3, 3});
  CHECK(ldmatrix_received(13, 1, true) == FragCoord{3, 3});
  CHECK(ldmatrix_received(6, 0, true) == FragCoord{4, 1});
}

TEST_CASE("accumulator layout choice") {
  Layout l = mma_accumulator_layout({128, 128}, 4);
  CHECK(l.warps_per_cta == std::vector<int>{2, 2});
  CHECK(l.str() == "blocked{spt=[1,2], tpw=[8,4], wpc=[2,2], order=[1,0]}");
  CHECK(mma_accumulator_layout({128, 128}, 8).warps_per_cta == std::vector<int>{4, 2});
  CHECK(mma_accumulator_layout({16, 128}, 4).warps_per_cta == std::vector<int>{1, 4});
  CHECK(mma_accumulator_layout({128, 16}, 4).warps_per_cta == std::vector<int>{4, 1});
  CHECK(mma_accumulator_layout({16, 16}, 8).warps_per_cta == std::vector<int>{1, 8});  // replicated columns
  for (int w : {1, 2, 4, 8, 16})
    for (int64_t m : {16, 32, 64, 128, 256})
      for (int64_t n : {16, 32, 64, 256}) {
        Layout a = mma_accumulator_layout({m, n}, w);
        CHECK(a.num_warps() == w);
        CHECK(is_mma_accumulator(a, {m, n}));
      }
  CHECK(!is_mma_accumulator(default_layout({64, 64}, 4, 4), {64, 64}));
}

TEST_CASE("swizzled staging is a bijection onto the tile's bytes") {
  for (int64_t row_bytes : {16, 32, 64, 128, 256, 512}) {
    SmemTile t{64, row_bytes};
    std::set<int64_t> seen;
    int outside = 0;
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t b = 0; b < row_bytes; ++b) {
        int64_t o = t.offset(r, b);
        outside += !(o >= r * row_bytes && o < (r + 1) * row_bytes);  // stays in its row
        seen.insert(o);
      }
    CHECK(outside == 0);
    CHECK(static_cast<int64_t>(seen.size()) == t.bytes());
  }
}

TEST_CASE("ldmatrix addressing delivers the mma fragments, conflict-free, for every dtype and shape") {
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes{
      {16, 16, 32}, {16, 32, 16}, {32, 16, 64}, {64, 64, 32}, {128, 128, 32}, {128, 64, 64}, {64, 256, 16}, {256, 32, 128}};
  int planned = 0;
  for (const MmaInstr& in : all_instrs())
    for (auto [m, n, k] : shapes)
      for (int w : {1, 2, 4, 8}) {
        Layout acc = mma_accumulator_layout({m, n}, w);
        auto p = plan_mma(in, m, n, k, acc);
        if (!p) {
          CHECK(k % in.k != 0);  // only s8 with K = 16
          continue;
        }
        check_plan(*p, acc, w);
        ++planned;
      }
  CHECK(planned >= 100);
}

TEST_CASE("plans: tile counts, staging sizes and fallbacks") {
  MmaInstr f16 = all_instrs()[0];
  Layout acc = mma_accumulator_layout({128, 128}, 4);
  auto p = plan_mma(f16, 128, 128, 32, acc);
  REQUIRE(p.has_value());
  CHECK(p->m_tiles == 4);
  CHECK(p->n_tiles == 8);
  CHECK(p->k_steps == 2);
  CHECK(p->smem_bytes() == 2 * 128 * 32 * 2);
  CHECK(!p->b_by_rows_of_n);
  auto s8 = plan_mma(all_instrs()[3], 128, 128, 64, acc);
  REQUIRE(s8.has_value());
  CHECK(s8->b_by_rows_of_n);
  CHECK(!plan_mma(all_instrs()[3], 128, 128, 16, acc).has_value());       // s8 needs K >= 32
  CHECK(!plan_mma(f16, 128, 128, 32, default_layout({128, 128}, 4, 4)));  // not an accumulator layout
}

// ---- wgmma (sm_90a) --------------------------------------------------------------------
namespace {

// The hardware's view of a descriptor (PTX ISA, "shared memory matrix layout"), modelled
// independently of SmemTile: element (r, byte) of the 8-row core-matrix group r / 8 sits at
// start + (r / 8) * SBO + (r % 8) * W + byte (K-major, byte < 32 along k), or for MN-major
// (r = k, byte along n) at start + (r / 8) * SBO + (byte / W) * LBO + (r % 8) * W + byte % W;
// then the swizzle mode XORs address bits [4..] with bits [7..].
int64_t hw_address(uint64_t desc, bool k_major, int64_t r, int64_t byte) {
  const int64_t start = static_cast<int64_t>(desc & 0x3fff) << 4;
  const int64_t lbo = static_cast<int64_t>((desc >> 16) & 0x3fff) << 4;
  const int64_t sbo = static_cast<int64_t>((desc >> 32) & 0x3fff) << 4;
  const int mode = static_cast<int>(desc >> 62);
  const int64_t w = mode == 1 ? 128 : mode == 2 ? 64 : 32;
  int64_t x = start + (r / 8) * sbo + (r % 8) * w;
  x += k_major ? byte : (byte / w) * lbo + byte % w;
  const int64_t mask = w / 16 - 1;
  return x ^ (((x >> 7) & mask) << 4);
}

// Every byte every wgmma of the plan reads is the operand element the instruction expects
// there, and the D fragments are the accumulator layout's registers.
void check_wgmma_plan(const MmaPlan& p, const Layout& acc, int num_warps) {
  CAPTURE(p.M);
  CAPTURE(p.N);
  CAPTURE(p.K);
  CAPTURE(num_warps);
  REQUIRE(p.wgmma);
  const int64_t base_a = 1 << 14, base_b = base_a + p.b_offset;  // 1024-aligned
  CHECK(p.b_offset % 1024 == 0);
  const int G = num_warps / 4;
  // Physical staging rows: a bijection, and the tile row a staging row holds.
  std::map<int64_t, int64_t> tile_row_of;
  for (int64_t t = 0; t < p.M; ++t) tile_row_of[p.a.physical_row(t)] = t;
  CHECK(static_cast<int64_t>(tile_row_of.size()) == p.M);
  CHECK(tile_row_of.rbegin()->first == p.M - 1);
  int64_t bad_a = 0, bad_b = 0, bad_d = 0;
  for (int g = 0; g < G; ++g)
    for (int64_t i = 0; i < p.wgmma_blocks(); ++i)
      for (int64_t s = 0; s < p.k_steps; ++s) {
        const uint64_t da = wgmma_desc(p.a, true, static_cast<uint32_t>(base_a + p.wgmma_a_offset(g, i, s)));
        for (int64_t r = 0; r < 64; ++r)
          for (int64_t byte = 0; byte < 32; ++byte) {
            const int64_t t = tile_row_of.at((G * i + g) * 64 + r);
            bad_a += hw_address(da, true, r, byte) != base_a + p.a.offset(t, s * 32 + byte);
          }
      }
  for (int64_t s = 0; s < p.k_steps; ++s) {
    if (p.b_by_rows_of_n) {  // [N][K], read K-major as A is: rows n, 32 bytes of k per step
      const uint64_t db = wgmma_desc(p.b, true, static_cast<uint32_t>(base_b + p.wgmma_b_offset(s)));
      for (int64_t n = 0; n < p.N; ++n)
        for (int64_t byte = 0; byte < 32; ++byte)
          bad_b += hw_address(db, true, n, byte) != base_b + p.b.offset(n, s * 32 + byte);
      continue;
    }
    const uint64_t db = wgmma_desc(p.b, false, static_cast<uint32_t>(base_b + p.wgmma_b_offset(s)));
    for (int64_t k = 0; k < 16; ++k)
      for (int64_t byte = 0; byte < 2 * p.N; ++byte)
        bad_b += hw_address(db, false, k, byte) != base_b + p.b.offset(s * 16 + k, byte);
  }
  // D of m64nNk16: warp w of a warpgroup holds rows 16w + lane / 4 (+ 8), columns
  // 8j + 2 (lane % 4) (+ 1) in d[4j + e].
  const tessel::ir::Shape shape{p.M, p.N};
  for (int warp = 0; warp < num_warps; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int64_t i = 0; i < p.wgmma_blocks(); ++i)
        for (int64_t j = 0; j < p.N / 8; ++j)
          for (int e = 0; e < 4; ++e) {
            auto el = element_of(acc, shape, ThreadPos{p.acc_register(acc, i, j, e), lane, warp});
            const int64_t row = (G * i + warp / 4) * 64 + 16 * (warp % 4) + lane / 4 + 8 * (e / 2);
            bad_d += p.a.physical_row(el[0]) != row || el[1] != 8 * j + 2 * (lane % 4) + e % 2;
          }
  // Register A (a_register): A held in the accumulator layout of [M, K]; the fragment of m64nNk16
  // (PTX ISA, "register fragment of A" for .f16/.bf16): warp w of a warpgroup holds rows
  // 16w + lane / 4 (+ 8 for a2, a3, a6, a7) and columns 2 (lane % 4) + {0, 1} (+ 8 for a4..a7)
  // of each k-step's 16 columns, the rows in the same order as D's.
  // (16-bit operands only: fp8 A is always staged.)
  int64_t bad_ra = 0;
  const tessel::ir::Scalar ab = p.in.kind == MmaKind::BF16 ? tessel::ir::Scalar::bf16 : tessel::ir::Scalar::f16;
  CHECK((!p.in.is_fp8() || !p.a_in_registers));
  if (auto la = p.in.is_fp8() ? std::nullopt
                              : wgmma_accumulator_layout(ab, tessel::ir::Scalar::f32, p.M, p.K, 16, num_warps)) {
    const tessel::ir::Shape ashape{p.M, p.K};
    for (int warp = 0; warp < num_warps; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int64_t i = 0; i < p.wgmma_blocks(); ++i)
          for (int64_t s = 0; s < p.k_steps; ++s)
            for (int e = 0; e < 8; ++e) {
              auto el = element_of(*la, ashape, ThreadPos{p.a_register(*la, i, s, e), lane, warp});
              const int64_t row = (G * i + warp / 4) * 64 + 16 * (warp % 4) + lane / 4 + 8 * ((e / 2) % 2);
              const int64_t col = 16 * s + 8 * (e / 4) + 2 * (lane % 4) + e % 2;
              bad_ra += p.a.physical_row(el[0]) != row || el[1] != col;
            }
  }
  CHECK(bad_ra == 0);
  CHECK(bad_a == 0);
  CHECK(bad_b == 0);
  CHECK(bad_d == 0);
  CHECK(p.wgmma_blocks() * (p.N / 8) * 4 == num_regs(acc, shape));
}

}  // namespace

TEST_CASE("wgmma: descriptors read the staged operands, D fragments are the accumulator layout") {
  const MmaInstr f16 = all_instrs()[0], bf16 = all_instrs()[1];
  int planned = 0;
  for (const MmaInstr& in : {f16, bf16})
    for (int64_t m : {64, 128, 256})
      for (int64_t n : {16, 32, 64, 128, 256})
        for (int64_t k : {16, 32, 64, 128})
          for (int w : {4, 8}) {
            const Scalar ab = in.kind == MmaKind::BF16 ? Scalar::bf16 : Scalar::f16;
            auto acc = wgmma_accumulator_layout(ab, Scalar::f32, m, n, k, w);
            if (!acc) {
              CHECK(m % (16 * w) != 0);
              continue;
            }
            CHECK(acc->warps_per_cta == std::vector<int>{w, 1});
            auto p = plan_mma(in, m, n, k, *acc, true);
            REQUIRE(p.has_value());
            check_wgmma_plan(*p, *acc, w);
            CHECK(!plan_mma(in, m, n, k, *acc, false)->wgmma);  // only on sm_90a
            auto t = plan_mma(in, m, n, k, *acc, true, /*b_k_major=*/true);  // B loaded along K
            REQUIRE(t.has_value());
            CHECK(t->b_by_rows_of_n);
            CHECK(t->b.rows == n);
            check_wgmma_plan(*t, *acc, w);
            ++planned;
          }
  CHECK(planned >= 100);
}

TEST_CASE("wgmma: what it does not take, and the descriptor fields") {
  CHECK(!wgmma_accumulator_layout(Scalar::f32, Scalar::f32, 128, 128, 32, 4));  // tf32: mma.sync
  CHECK(!wgmma_accumulator_layout(Scalar::i8, Scalar::i32, 128, 128, 64, 4));
  CHECK(!wgmma_accumulator_layout(Scalar::f16, Scalar::f32, 128, 128, 32, 2));   // not a warpgroup
  CHECK(!wgmma_accumulator_layout(Scalar::f16, Scalar::f32, 32, 128, 32, 4));    // M < 64
  CHECK(!wgmma_accumulator_layout(Scalar::f16, Scalar::f32, 128, 96, 32, 4));    // N = 96
  CHECK(!wgmma_accumulator_layout(Scalar::f16, Scalar::f32, 128, 128, 48, 4));   // K = 48
  // A 128 x 64 f16 A staging (128-byte rows), a 64 x 128 B staging (two 128-byte column blocks).
  SmemTile a{128, 128, true, 1}, b{64, 256, true, 0};
  CHECK(wgmma_desc_bits(a, true) == ((uint64_t{1} << 62) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 16)));
  CHECK(wgmma_desc_bits(b, false) == ((uint64_t{1} << 62) | (uint64_t{1024 >> 4} << 32) | (uint64_t{8192 >> 4} << 16)));
  CHECK(wgmma_desc(a, true, 0x12340) == (wgmma_desc_bits(a, true) | 0x1234));
  CHECK(wgmma_swizzle_mode(SmemTile{64, 64, true, 0}) == 2);
  CHECK(wgmma_swizzle_mode(SmemTile{64, 32, true, 0}) == 3);
  // Blocked stagings of rows up to 128 bytes are the classic swizzled staging.
  for (int64_t rb : {32, 64, 128})
    for (int64_t r = 0; r < 64; ++r)
      for (int64_t byte = 0; byte < rb; ++byte)
        if (SmemTile{64, rb, true, 0}.offset(r, byte) != SmemTile{64, rb}.offset(r, byte)) FAIL("differs");
  MmaInstr f16 = all_instrs()[0];
  auto p = plan_mma(f16, 128, 128, 64, *wgmma_accumulator_layout(Scalar::f16, Scalar::f32, 128, 128, 64, 8), true);
  REQUIRE(p.has_value());
  CHECK(p->wgmma_ptx() == "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16");
  CHECK(p->wgmma_blocks() == 1);
}

TEST_CASE("a row-permuted TMA view copies an A tile in staging order (SmemTile::physical_row)") {
  // For each shape the view's box, walked in shared-memory order (innermost dimension first),
  // must visit tile row t at staging row physical_row(t), every row once.
  int fitted = 0;
  for (int G : {1, 2, 4})
    for (int rows : {64, 128, 256}) {
      CAPTURE(G);
      CAPTURE(rows);
      if (!tessel::view_fits(G, rows)) {
        CHECK(tessel::row_permuted_view(G, rows).empty());
        // Six dimensions (G > 1 and more than one m64 block per warpgroup) or too few rows.
        CHECK((rows < 64 * G || (G > 1 && rows > 64 * G)));
        continue;
      }
      ++fitted;
      tessel::TensorMapRecipe m;
      m.view = tessel::row_permuted_view(G, rows);
      m.box_rows = rows;
      const auto& dims = m.view;
      CHECK(dims.size() + 1 <= 5);
      CHECK(tessel::view_unit(m) == dims.back().row_step);
      CHECK(tessel::view_warpgroups(m) == G);
      SmemTile st;
      st.rows = rows;
      st.row_bytes = 128;
      st.blocked = true;
      st.warpgroups = G;
      std::vector<int> seen(rows, 0);
      int64_t staged = 0;
      std::vector<int> idx(dims.size(), 0);
      for (;;) {
        int64_t t = 0;
        for (size_t d = 0; d < dims.size(); ++d) t += idx[d] * dims[d].row_step;
        REQUIRE(t < rows);
        CHECK(st.physical_row(t) == staged);
        ++seen[t];
        ++staged;
        size_t d = 0;
        while (d < dims.size() && ++idx[d] == dims[d].box) idx[d++] = 0;
        if (d == dims.size()) break;
      }
      CHECK(staged == rows);
      CHECK(std::count(seen.begin(), seen.end(), 1) == rows);
    }
  CHECK(fitted == 5);  // G 1: 64, 128, 256 rows; G 2: 128 rows; G 4: 256 rows
}

TEST_CASE("wgmma fp8: k32 steps of 32 bytes, both operands K-major, D as for f16") {
  const MmaInstr f8 = all_instrs()[4];
  int planned = 0;
  for (int64_t m : {64, 128, 256})
    for (int64_t n : {16, 32, 64, 128, 256})
      for (int64_t k : {16, 32, 64, 128, 256})
        for (int w : {4, 8}) {
          auto acc = wgmma_accumulator_layout(Scalar::f8e4m3, Scalar::f32, m, n, k, w);
          if (!acc) {
            CHECK((m % (16 * w) != 0 || k == 16));  // fp8 has no k16 instruction
            continue;
          }
          for (bool b_k_major : {false, true}) {
            auto p = plan_mma(f8, m, n, k, *acc, true, b_k_major);
            REQUIRE(p.has_value());
            CHECK(p->b_by_rows_of_n);  // B is always staged [N][K]: 8-bit wgmma reads both K-major
            CHECK(p->k_steps == k / 32);
            check_wgmma_plan(*p, *acc, w);
          }
          ++planned;
        }
  CHECK(planned >= 40);
  auto p = plan_mma(f8, 128, 256, 128, *wgmma_accumulator_layout(Scalar::f8e4m3, Scalar::f32, 128, 256, 128, 8), true);
  REQUIRE(p.has_value());
  CHECK(p->wgmma_ptx() == "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2");
  CHECK(!wgmma_accumulator_layout(Scalar::f8e5m2, Scalar::f32, 128, 128, 16, 4));
  CHECK(wgmma_accumulator_layout(Scalar::f8e5m2, Scalar::f32, 128, 128, 32, 4).has_value());
}

TEST_CASE("register B: mma_b_register_layout's registers are the B fragments of every warp's n-tiles") {
  // For every plan with one warp along M: element (reg b_register(s, j, e), lane, warp) of the
  // [K, N] tile is exactly what mma.sync's b_fragment puts in element e of that lane, at
  // k-step s and the accumulator's n-tile j; every register of the layout is used once.
  for (const MmaInstr& in : {all_instrs()[0], all_instrs()[1]})
    for (int warps : {1, 2, 4, 8})
      for (int64_t N : {8, 16, 64, 128, 256})
        for (int64_t K : {16, 32, 128}) {
          if (N < 8 * warps) continue;
          CAPTURE(in.ptx());
          CAPTURE(warps);
          CAPTURE(N);
          CAPTURE(K);
          const Layout acc = mma_accumulator_layout({16, N}, warps);
          REQUIRE(acc.warps_per_cta[0] == 1);
          const auto lb = mma_b_register_layout(acc, {K, N});
          REQUIRE(lb.has_value());
          auto p = plan_mma(in, 16, N, K, acc, false, true, nullptr, &*lb);
          REQUIRE(p.has_value());
          CHECK(p->b_in_registers);
          CHECK_FALSE(p->b_by_rows_of_n);
          CHECK(p->smem_bytes() == p->b_offset);  // no staging for B
          int64_t bad = 0;
          for (int w = 0; w < warps; ++w) {
            const int wn = warp_coord(acc, w, 1);
            for (int lane = 0; lane < 32; ++lane) {
              std::set<int64_t> regs;
              for (int64_t s = 0; s < p->k_steps; ++s)
                for (int64_t j = 0; j < p->n_tiles; ++j)
                  for (int e = 0; e < 4; ++e) {
                    const int64_t reg = p->b_register(*lb, s, j, e);
                    regs.insert(reg);
                    const FragCoord f = b_fragment(in, lane, e);
                    const std::vector<int64_t> want{s * 16 + f.row, p->tile_col(wn, j, f.col)};
                    bad += element_of(*lb, {K, N}, ThreadPos{reg, lane, w}) != want;
                  }
              CHECK(static_cast<int64_t>(regs.size()) == num_regs(*lb, {K, N}));
            }
          }
          CHECK(bad == 0);
        }
  // Not for warps along M, K not a multiple of 16, N not a multiple of the warps' 8 columns,
  // nor for tf32 / s8 (their fragments are not pairs of 16-bit elements), nor on wgmma.
  CHECK_FALSE(mma_b_register_layout(mma_accumulator_layout({64, 64}, 4), {64, 64}).has_value());
  const Layout acc = mma_accumulator_layout({16, 64}, 4);
  CHECK_FALSE(mma_b_register_layout(acc, {40, 64}).has_value());
  CHECK_FALSE(mma_b_register_layout(acc, {64, 16}).has_value());
  const Layout lb = *mma_b_register_layout(acc, {64, 64});
  CHECK(lb.str() == "blocked{spt=[2,1], tpw=[4,8], wpc=[1,4], order=[0,1]}");
  CHECK_FALSE(plan_mma(all_instrs()[2], 16, 64, 64, acc, false, false, nullptr, &lb)->b_in_registers);
  CHECK_FALSE(plan_mma(all_instrs()[3], 16, 64, 64, acc, false, false, nullptr, &lb)->b_in_registers);
  const Layout other = default_layout({64, 64}, 2, 4);
  CHECK_FALSE(plan_mma(all_instrs()[0], 16, 64, 64, acc, false, false, nullptr, &other)->b_in_registers);
}
