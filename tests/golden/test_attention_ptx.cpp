// Attention forward (samples/include/tessel/samples/attention_kernels.hpp), the form a user writes:
// the PTX of its pipelined loop. K^T is read through pointers contiguous along dim 0: the loads
// must be 16-byte cp.async copies into a [N][K] staging (no 2-byte scalar loads), K and V issued
// stages ahead in both key loops, Q staged once before the first and kept for the second, P fed to wgmma from registers, and no spills at
// the tiles the benchmarks use.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "../lowering/check_ptx.hpp"
#include "matmul_specs.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using golden_test::aligned;
using golden_test::entry;
using lowering_test::count;

namespace {

struct Tile {
  int block_m, block_n, head_dim, warps, stages;
};

// Options for `arch` with `warps` and `stages`.
lowering::Options options_for(const std::string& arch, int warps, int stages) {
  lowering::Options o;
  o.target = lowering::Target::parse(arch);
  o.num_warps = warps;
  o.num_stages = stages;
  return o;
}

// attention_fwd's IR for a tile, specialised as an aligned launch; `overlap`: the rotated loop
// (OVERLAP=1).
std::unique_ptr<ir::Function> attention_ir(int block_m, int block_n, int head_dim, bool overlap = false) {
  const jit::KernelEntry& k = entry("attention_fwd");
  lang::Meta m = k.defaults;
  m.set("BLOCK_M", block_m).set("BLOCK_N", block_n).set("HEAD_DIM", head_dim).set("OVERLAP", overlap);
  return k.build_ir(m, aligned(k, m));
}

// matmul's IR at a 128x128x64 tile, specialised as an aligned launch (a single-dot loop).
std::unique_ptr<ir::Function> matmul_ir() {
  const jit::KernelEntry& mm = entry("matmul");
  lang::Meta m = mm.defaults;
  m.set("BLOCK_M", 128).set("BLOCK_N", 128).set("BLOCK_K", 64);
  return mm.build_ir(m, aligned(mm, m));
}

// `mbarriers`: Options::stage_mbarriers.
lowering::Compiled compile_attention(const Tile& t, const std::string& arch, bool overlap = false,
                                     bool mbarriers = false) {
  auto f = attention_ir(t.block_m, t.block_n, t.head_dim, overlap);
  lowering::Options o = options_for(arch, t.warps, t.stages);
  o.stage_mbarriers = mbarriers;
  return lowering::compile(*f, o);
}

// Copies of a [rows, cols] f16 tile in 16-byte pieces, per thread.
int copies(int rows, int cols, int warps) { return rows * cols * 2 / 16 / (32 * warps); }

}  // namespace

TEST_CASE("attention forward: K and V copied by cp.async stages ahead, Q resident, no scalar loads") {
  for (std::string arch : {"sm_90a", "sm_80"}) {
    for (Tile t : {Tile{64, 64, 64, 4, 3}, Tile{128, 64, 128, 8, 2}, Tile{128, 128, 64, 8, 3}}) {
      CAPTURE(arch);
      CAPTURE(t.block_m);
      CAPTURE(t.block_n);
      CAPTURE(t.head_dim);
      CAPTURE(t.stages);
      lowering::Compiled c = compile_attention(t, arch);
      INFO(c.plan);
      // The K^T and V tiles of each trip: the prologue issues S - 1 trips, the body one; in each
      // of the two key loops (whole blocks unmasked, then the masked rest).
      const int per_trip = copies(t.head_dim, t.block_n, t.warps) + copies(t.block_n, t.head_dim, t.warps);
      CHECK(count(c.ptx, "cp.async.cg.shared.global") == 2 * per_trip * t.stages);
      CHECK(count(c.ptx, "cp.async.wait_group " + std::to_string(t.stages - 2) + ";") >= 1);
      // No element-by-element global traffic: Q is read in 16-byte vectors, K and V by copies.
      CHECK(count(c.ptx, "ld.global.b16") + count(c.ptx, "ld.global.u16") == 0);
      CHECK(count(c.ptx, "ld.global.nc.b16") + count(c.ptx, "ld.global.nc.u16") == 0);
      // Q is staged once, by the first loop, and read there by the second.
      CHECK(c.plan.find(" resident, staged once before the loop") != std::string::npos);
      CHECK(c.plan.find(" resident, as an earlier loop of the block staged it") != std::string::npos);
      CHECK(c.plan.find("pipelined, " + std::to_string(t.stages) + " stages") != std::string::npos);
      // K and V carry one pointer per thread in both loops (the rest derived by mad.wide from it):
      // a few pointer phis per loop (the copies' and the loop's own, in and out), not one per
      // 16-byte copy in each loop.
      CHECK(count(c.plan, "(one pointer per thread)") == 4);
      CHECK(count(c.llvm_ir, "= phi ptr addrspace(1)") < 2 * per_trip);
      CHECK(count(c.ptx, "mad.wide.s32") > 0);
      if (arch == "sm_90a") {
        // Q K^T reads K^T K-major (trans-b 0); P V takes P from registers (the register-A form,
        // no descriptor for A) and reads V MN-major (trans-b 1). P is never stored to shared memory.
        const int kt = count(c.ptx, ", da, db, p, 1, 1, 0, 0;");
        const int v = count(c.ptx, "}, db, p, 1, 1, 1;");
        CHECK(c.plan.find("from registers (no staging)") != std::string::npos);
        CHECK(kt == 2 * (t.head_dim / 16) * (t.block_m / 64 / (t.warps / 4)));
        CHECK(v == 2 * (t.block_n / 16) * (t.block_m / 64 / (t.warps / 4)));
      } else {
        CHECK(count(c.ptx, "mma.sync.aligned.m16n8k16") > 0);
        CHECK(count(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
      }
      lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, arch);
      if (!r.ran) continue;
      INFO(r.log);
      CHECK(r.ok);
      // sm_80's 128x64 d128 tile of 8 warps sits at 255 registers (mma.sync holds P and the
      // ldmatrix fragments besides the 64-register accumulator); it spilled 16 bytes until
      // the copies carried one pointer per thread (session 27). Since the masked trips compare
      // each key with one bound a row (session 48) it keeps 40 bytes of the prologue's values
      // in local memory until the epilogue (read in the SASS: no spill traffic in either key
      // loop); every other tile, none.
      const bool edge = arch == "sm_80" && t.block_m == 128 && t.head_dim == 128;
      CHECK(r.spill_stores <= (edge ? 40 : 0));
      MESSAGE("attention " << arch << " " << t.block_m << "x" << t.block_n << " d" << t.head_dim << " w" << t.warps
                           << " s" << t.stages << ": " << r.registers << " registers");
    }
  }
}

TEST_CASE("max_registers: the entry carries .maxnreg and names the limit; ptxas keeps within it") {
  auto f = attention_ir(128, 64, 64);
  lowering::Options o = options_for("sm_90a", 8, 2);
  o.max_registers = 128;
  lowering::Compiled c = lowering::compile(*f, o);
  CHECK(c.ptx.find(".maxnreg 128") != std::string::npos);
  CHECK(c.launch.symbol.find("_r128") != std::string::npos);
  CHECK(c.plan.find("max_registers 128") != std::string::npos);
  o.max_registers = 0;
  lowering::Compiled free = lowering::compile(*f, o);
  CHECK(free.ptx.find(".maxnreg") == std::string::npos);
  CHECK(free.launch.symbol.find("_r") == std::string::npos);
  lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, "sm_90a");
  if (!r.ran) return;
  CHECK(r.ok);
  CHECK(r.registers <= 128);
}

TEST_CASE("attention's two key loops share Q's staging and one set of stage buffers, a barrier between them") {
  for (std::string arch : {"sm_90a", "sm_80"}) {
    CAPTURE(arch);
    const Tile t{128, 64, 64, 8, 3};  // 3 stages: in the loops wait_group 1, at their exits 0
    lowering::Compiled c = compile_attention(t, arch);
    const int64_t stages = int64_t{t.stages} * 2 * t.block_n * t.head_dim * 2;  // K^T and V per stage
    const int64_t q = int64_t{t.block_m} * t.head_dim * 2;
    MESSAGE(arch << ": " << c.launch.shared_bytes << " bytes of shared memory (stages " << stages << ", Q " << q << ")");
    // One loop's stages and Q once (plus, on sm_80, P's staging), not two loops' stages.
    CHECK(c.launch.shared_bytes >= stages + q);
    CHECK(c.launch.shared_bytes < 2 * stages + q);
    // The second loop's stages are the first's buffers: between the first loop's last wait and the
    // second loop's first copy every warp passes a barrier (the first loop's readers are done).
    REQUIRE(c.ptx.find("cp.async.wait_group 1;") != std::string::npos);
    const size_t last_wait = c.ptx.find("cp.async.wait_group 0;");  // the first loop's exit
    REQUIRE(last_wait != std::string::npos);
    const size_t next_copy = c.ptx.find("cp.async.cg.shared.global", last_wait);
    REQUIRE(next_copy != std::string::npos);
    CHECK(c.ptx.substr(last_wait, next_copy - last_wait).find("bar.sync") != std::string::npos);
  }
}

namespace {

// Two loops, each with two dots reading the same Q (computed before the loops) against two
// different pipelined loads: each loop stages Q twice (once per dot: one loop's dots do not share
// a staging), and the second loop reads the first loop's last one.
void two_uses_kernel(lang::Ptr<lang::f16> q, lang::Ptr<lang::f16> k, lang::Ptr<lang::f16> k2, lang::Ptr<lang::f32> o,
                     lang::Int n, const lang::Meta&) {
  using namespace tessel::lang;
  auto r = arange(0, 64);
  auto qt = load(q + r.col() * 64 + r.row());
  Var acc{zeros<f32>({64, 64})};
  Var pk{k + r.col() * 64 + r.row()};
  Var pk2{k2 + r.col() * 64 + r.row()};
  auto trip = [&] {
    acc = dot(qt, load(pk), acc.get());
    acc = dot(qt, load(pk2), acc.get());
    pk += 64 * 64;
    pk2 += 64 * 64;
  };
  auto half = n / 2;
  for (auto i : range(0, half, 1)) {
    (void)i;
    trip();
  }
  for (auto i : range(half, n, 1)) {
    (void)i;
    trip();
  }
  store(o + r.col() * 64 + r.row(), acc.get());
}

}  // namespace

TEST_CASE("a loop whose two dots read one resident operand stages it per dot; the next loop reads the last") {
  jit::Kernel kernel{"two_uses", &two_uses_kernel, {"q", "k", "k2", "o", "n"}, lang::Meta{}};
  std::vector<ir::ParamSpec> specs(5, ir::ParamSpec{true, false});
  auto f = kernel.build_ir(lang::Meta{}, specs);
  for (std::string arch : {"sm_90a", "sm_80"}) {
    CAPTURE(arch);
    lowering::Options o;
    o.target = lowering::Target::parse(arch);
    o.num_warps = 4;
    o.num_stages = 2;
    lowering::Compiled c = lowering::compile(*f, o);
    INFO(c.plan);
    CHECK(count(c.plan, "pipelined, 2 stages") == 2);
    // First loop: both dots stage Q; the second of them is kept. Second loop: one dot reads the
    // kept staging, the other stages its own.
    CHECK(count(c.plan, "resident, staged once before the loop") == 3);
    CHECK(count(c.plan, ", kept for a later loop") == 1);
    CHECK(count(c.plan, "resident, as an earlier loop of the block staged it") == 1);
    lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, arch);
    if (r.ran) CHECK(r.ok);
  }
}

namespace {

// The wgmma commits and waits of `ptx` in order: "C" for a commit, "W<n>" for wait_group n.
// "K": the block boundary a deferred wait follows (Lowerer::block_boundary in the emitter).
std::string wgmma_sequence(const std::string& ptx) {
  std::string seq;
  const std::string commit = "wgmma.commit_group.sync.aligned", wait = "wgmma.wait_group.sync.aligned";
  const std::string keep = "@q bra.uni tessel_keep_";
  for (size_t at = 0; (at = ptx.find_first_of("w@", at)) != std::string::npos; ++at) {
    if (ptx.compare(at, keep.size(), keep) == 0) seq += "K ";
    if (ptx.compare(at, commit.size(), commit) == 0) seq += "C ";
    if (ptx.compare(at, wait.size(), wait) == 0) {
      const size_t n = ptx.find_first_not_of(" \t", at + wait.size());
      seq += 'W';
      seq += ptx.substr(n, ptx.find(';', n) - n);
      seq += ' ';
    }
  }
  return seq;
}

}  // namespace

TEST_CASE("the rotated attention loop (OVERLAP=1): the softmax waits only for Q K^T, P V runs beside it") {
  for (Tile t : {Tile{128, 64, 128, 8, 2}, Tile{64, 64, 64, 4, 3}, Tile{128, 128, 128, 8, 2}}) {
    CAPTURE(t.block_m);
    CAPTURE(t.block_n);
    CAPTURE(t.head_dim);
    lowering::Compiled c = compile_attention(t, "sm_90a", true);
    INFO(c.plan);
    // Both dots of the rotated (unmasked) loop are committed without their own wait.
    CHECK(count(c.plan, "its wgmma waited for where its result is first read") == 2);
    // Block 0's Q K^T before the loops waits at once; in the rotated loop Q K^T and P V are
    // committed back to back, the softmax waits for the older group only (wait_group 1), and
    // the trip ends waiting for P V (wait_group 0); then the last rotated block's P V, and the
    // masked loop's two dots in order. Each deferred wait comes after a block boundary (K):
    // without it ptxas moves the wait for P V above the softmax (read in the SASS).
    const std::string seq = wgmma_sequence(c.ptx);
    INFO(seq);
    CHECK(seq == "C W0 C C K W1 K W0 C W0 C W0 C W0 ");
    // The softmax's exponentials (a thread's share of the trip's BLOCK_M x BLOCK_N) lie between
    // the wait for Q K^T and the boundary before the wait for P V.
    const size_t w1 = c.ptx.find("wgmma.wait_group.sync.aligned 1");
    REQUIRE(w1 != std::string::npos);
    const size_t k0 = c.ptx.find("@q bra.uni tessel_keep_", w1);
    REQUIRE(k0 != std::string::npos);
    CHECK(count(c.ptx.substr(w1, k0 - w1), "ex2.approx") >= t.block_m * t.block_n / (32 * t.warps));
    // P (f16) crosses the back edge in pairs, one 32-bit register per two probabilities, as the
    // register-A wgmma reads it: BLOCK_M x BLOCK_N halves over the threads, two per phi.
    const int p_pairs = t.block_m * t.block_n / (32 * t.warps) / 2;
    CHECK(count(c.llvm_ir, "= phi <2 x half>") >= p_pairs);
    CHECK(count(c.llvm_ir, "= phi half") == 0);
    lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, "sm_90a");
    if (!r.ran) continue;
    INFO(r.log);
    CHECK(r.ok);
    CHECK(r.spill_stores == 0);
    CHECK(r.log.find("serialized") == std::string::npos);  // ptxas kept the groups asynchronous
  }
  // The form without the rotation defers nothing: each dot's first reader follows it at once.
  lowering::Compiled c = compile_attention(Tile{128, 64, 128, 8, 2}, "sm_90a");
  CHECK(count(c.plan, "waited for where its result is first read") == 0);
  CHECK(wgmma_sequence(c.ptx) == "C W0 C W0 C W0 C W0 ");
}

TEST_CASE("stage_mbarriers: attention's key loops wait on full[s] and release empty[s], no CTA barrier a trip") {
  for (bool overlap : {false, true})
    for (Tile t : {Tile{128, 128, 128, 8, 2}, Tile{128, 64, 64, 8, 3}, Tile{64, 64, 64, 4, 2}}) {
      CAPTURE(overlap);
      CAPTURE(t.block_m);
      CAPTURE(t.block_n);
      CAPTURE(t.stages);
      const lowering::Compiled plain = compile_attention(t, "sm_90a", overlap);
      const lowering::Compiled c = compile_attention(t, "sm_90a", overlap, true);
      INFO(c.plan);
      // Both key loops (unmasked or rotated, then masked) take it; each has S full and S empty
      // mbarriers, set up once at the kernel's start.
      CHECK(count(c.plan, "stages signalled by mbarriers") == 2);
      CHECK(count(c.plan, "options: num_warps " + std::to_string(t.warps)) == 1);
      CHECK(c.plan.find(", stage_mbarriers") != std::string::npos);
      CHECK(c.launch.symbol.size() > 3);
      CHECK(c.launch.symbol.substr(c.launch.symbol.size() - 3) == "_mb");
      CHECK(count(c.ptx, "mbarrier.init.shared") == 2 * 2 * t.stages);
      // From 3 stages the copies run S - 2 trips ahead (into the stage of two trips back).
      const int ahead = t.stages >= 3 ? t.stages - 2 : 1;
      CHECK(c.plan.find(fmt::format("copies {} trip", ahead)) != std::string::npos);
      // The barrier form's copies less the prologue's fewer trips, each thread's arriving on
      // full[s] (the prologue's uses and the trip's one, per loop) instead of cp.async groups.
      const int per_trip = copies(t.head_dim, t.block_n, t.warps) + copies(t.block_n, t.head_dim, t.warps);
      CHECK(count(c.ptx, "cp.async.cg.shared.global") ==
            count(plain.ptx, "cp.async.cg.shared.global") - 2 * (t.stages - 1 - ahead) * per_trip);
      CHECK(count(c.ptx, "cp.async.mbarrier.arrive.noinc.shared") == 2 * (ahead + 1));
      // (The rotated form's block 0 and last P V are dots outside the loops, which stage their
      // loads as one cp.async group each in both forms.)
      CHECK(count(c.ptx, "cp.async.commit_group") == (overlap ? 2 : 0));
      CHECK(count(plain.ptx, "cp.async.commit_group") == 2 * t.stages + (overlap ? 2 : 0));
      // Waits: per loop, the prologue's `ahead` copies on empty, the trip's full and empty, and
      // the exit's `ahead` trailing uses on full.
      CHECK(count(c.ptx, "mbarrier.try_wait.parity.shared::cta.b64") == 2 * (2 + 2 * ahead));
      // Releases: per loop the trip's and the exit's `ahead`, one elected lane a warp.
      CHECK(count(c.ptx, "@p mbarrier.arrive.shared::cta.b64") == 2 * (1 + ahead));
      // No CTA barrier a trip: the barrier form's one a trip in each loop is gone, one at the
      // start (the mbarriers' set-up) is added; Q's staging and the hand-over between the loops
      // keep theirs.
      CHECK(count(c.ptx, "bar.sync") == count(plain.ptx, "bar.sync") - 2 + 1);
      // The same wgmma groups in the same order.
      CHECK(wgmma_sequence(c.ptx) == wgmma_sequence(plain.ptx));
      lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, "sm_90a");
      if (!r.ran) continue;
      INFO(r.log);
      CHECK(r.ok);
      CHECK(r.spill_stores == 0);
      CHECK(r.log.find("serialized") == std::string::npos);
      MESSAGE("stage_mbarriers " << t.block_m << "x" << t.block_n << " d" << t.head_dim << " s" << t.stages
                                 << (overlap ? " rotated" : "") << ": " << r.registers << " registers");
    }
}

TEST_CASE("stage_mbarriers: loops it does not fit keep their barriers and the plan says why") {
  // RoPE's loop prefetches the rotation's loads (no dot reads them as they are).
  const jit::KernelEntry& k = entry("attention_fwd_rope");
  lang::Meta m = k.defaults;
  m.set("BLOCK_M", 64).set("BLOCK_N", 64).set("HEAD_DIM", 64);
  auto f = k.build_ir(m, aligned(k, m));
  lowering::Options o = options_for("sm_90a", 4, 2);
  o.stage_mbarriers = true;
  lowering::Compiled c = lowering::compile(*f, o);
  INFO(c.plan);
  CHECK(c.plan.find("stages not signalled by mbarriers (stage_mbarriers): ") != std::string::npos);
  CHECK(count(c.ptx, "mbarrier.init") == 0);
  // A matmul's single-dot loop keeps its wgmma group in flight instead.
  auto g = matmul_ir();
  o.num_stages = 3;
  lowering::Compiled cm = lowering::compile(*g, o);
  CHECK(cm.plan.find("stages not signalled by mbarriers (stage_mbarriers): the loop has one dot") != std::string::npos);
  // ... and its PTX is the barrier form's but for the entry's name.
  o.stage_mbarriers = false;
  const lowering::Compiled base = lowering::compile(*g, o);
  std::string renamed = cm.ptx;
  for (size_t at = 0; (at = renamed.find(cm.launch.symbol, at)) != std::string::npos; at += base.launch.symbol.size())
    renamed.replace(at, cm.launch.symbol.size(), base.launch.symbol);
  CHECK(cm.launch.symbol == base.launch.symbol + "_mb");
  CHECK(renamed == base.ptx);
}


namespace {

// The most mad.wide.s32 (a copy's address) in a row without a cp.async between them, after the
// producer warps' setmaxnreg.dec.
int longest_address_run(const std::string& ptx) {
  const size_t from = ptx.find("setmaxnreg.dec");
  if (from == std::string::npos) return -1;
  std::istringstream in(ptx.substr(from));
  int run = 0, longest = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("mad.wide.s32") != std::string::npos) longest = std::max(longest, ++run);
    if (line.find("cp.async.cg.shared.global") != std::string::npos) run = 0;
  }
  return longest;
}

}  // namespace

TEST_CASE("warp_specialize: producer warps copy attention's K and V into one ring for both key loops") {
  for (bool overlap : {false, true})
    for (Tile t : {Tile{128, 128, 128, 8, 2}, Tile{128, 64, 64, 8, 3}}) {
      CAPTURE(overlap);
      CAPTURE(t.block_n);
      CAPTURE(t.head_dim);
      auto f = attention_ir(t.block_m, t.block_n, t.head_dim, overlap);
      lowering::Options o = options_for("sm_90a", t.warps, t.stages);
      const lowering::Compiled plain = lowering::compile(*f, o);
      o.warp_specialize = true;
      o.consumer_registers = 240;
      const lowering::Compiled c = lowering::compile(*f, o);
      INFO(c.plan);
      // Both key loops are rings of K and V; the second continues the first's ring, so there
      // is one set of S full and S empty mbarriers.
      CHECK(count(c.plan, ": ring of " + std::to_string(t.stages) + " stages") == 2);
      CHECK(count(c.plan, ", continuing the ring of for") == 1);
      CHECK(count(c.plan, "producers copy by cp.async (each address beside its copy, destinations by class)") == 2);
      CHECK(count(c.ptx, "mbarrier.init.shared") == 2 * t.stages);
      CHECK(c.launch.threads == 32 * t.warps + 128);
      // 384 threads start with 168 registers each; the consumers take 240 of the producers'.
      CHECK(c.plan.find("registers: 168 per thread at launch (.maxnreg); setmaxnreg raises the programs' warps to "
                        "240 and lowers the producer warps to 24") != std::string::npos);
      CHECK(count(c.ptx, ".maxnreg 168") == 1);
      CHECK(count(c.ptx, "setmaxnreg.inc.sync.aligned.u32 240;") == 1);
      CHECK(count(c.ptx, "setmaxnreg.dec.sync.aligned.u32 24;") == 1);
      // The producers (128 threads) copy each trip's K^T [D, BN] and V [BN, D] in 16-byte
      // pieces, in both loops; the rotated form's block 0 (K) and last P V (V) are the
      // consumers' own dots outside the loops. Each producer thread's copies arrive on full[s]
      // once per loop.
      const int producer_trip = copies(t.head_dim, t.block_n, 4) + copies(t.block_n, t.head_dim, 4);
      const int outside = overlap ? copies(t.head_dim, t.block_n, t.warps) + copies(t.block_n, t.head_dim, t.warps) : 0;
      CHECK(count(c.ptx, "cp.async.cg.shared.global") == 2 * producer_trip + outside);
      CHECK(count(c.ptx, "cp.async.mbarrier.arrive.noinc.shared") == 2);
      // Per loop: the producers wait on empty[s], the consumers' first dot on full[s]; each
      // consumer warp releases the stage once a trip (one elected lane).
      CHECK(count(c.ptx, "mbarrier.try_wait.parity.shared::cta.b64") == 2 * 2);
      CHECK(count(c.ptx, "@p mbarrier.arrive.shared::cta.b64") == 2);
      // The consumers issue the same wgmma groups in the same order as without producers.
      CHECK(wgmma_sequence(c.ptx) == wgmma_sequence(plain.ptx));
      // The producers hold a handful of registers: each copy's address (one mad.wide a runtime
      // stride) is computed next to its copy (demand order: up to four copies' chains
      // interleaved), not all of a trip's at its start (16-32 in a row), and the copies'
      // shared-memory offsets are a few class registers plus immediates.
      CHECK(longest_address_run(c.ptx) <= 8);
      lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, "sm_90a");
      if (!r.ran) continue;
      INFO(r.log);
      CHECK(r.ok);
      CHECK(r.log.find("serialized") == std::string::npos);
      // Within the 24 registers left to them the producers spill at most a few words (56-976
      // bytes when every address of a trip was computed at its start); the rotated 128x128
      // d128 form's consumers keep up to 40 bytes of prologue values in local memory until the
      // epilogue (read in the SASS, session 48: no spill traffic in the key loops).
      CHECK(r.spill_stores <= 40);
      MESSAGE("warp_specialize " << t.block_m << "x" << t.block_n << " d" << t.head_dim << " s" << t.stages
                                 << std::string(overlap ? " rotated" : "") << ": " << r.registers << " registers, "
                                 << r.spill_stores << " bytes of spill stores");
    }
}

TEST_CASE("consumer_registers: needs warp_specialize, more than the kernel's count, and 24 left per producer") {
  auto f = attention_ir(128, 64, 64);
  lowering::Options o = options_for("sm_90a", 8, 2);
  o.consumer_registers = 200;
  CHECK_THROWS_WITH_AS(lowering::compile(*f, o), doctest::Contains("consumer_registers needs warp_specialize"),
                       CompileError);
  o.warp_specialize = true;
  o.consumer_registers = 248;  // 256 x 248 of 384 x 168 leaves 8 a producer thread
  CHECK_THROWS_WITH_AS(lowering::compile(*f, o), doctest::Contains("setmaxnreg needs at least 24 (at most 240)"),
                       CompileError);
  o.consumer_registers = 160;
  CHECK_THROWS_WITH_AS(lowering::compile(*f, o), doctest::Contains("must exceed the 168 registers"), CompileError);
  o.consumer_registers = 236;
  CHECK_THROWS_WITH_AS(lowering::compile(*f, o), doctest::Contains("a multiple of 8 in 32..256"), CompileError);
  o.consumer_registers = 232;  // 40 left to each producer thread
  const lowering::Compiled c = lowering::compile(*f, o);
  CHECK(count(c.ptx, "setmaxnreg.inc.sync.aligned.u32 232;") == 1);
  CHECK(count(c.ptx, "setmaxnreg.dec.sync.aligned.u32 40;") == 1);
}

namespace {

// The named-barrier and wgmma events of `ptx` in text order: S<id> bar.sync id, 256 (a
// warpgroup's turn), A<id> bar.arrive id, 256 (its hand-over), C a wgmma commit, W<n> a wgmma wait.
std::string turn_sequence(const std::string& ptx) {
  std::string seq;
  const std::string sync = "barrier.sync \t", arrive = "bar.arrive ", commit = "wgmma.commit_group",
                    wait = "wgmma.wait_group.sync.aligned ", cta = "bar.sync \t0;";
  for (size_t at = 0; at < ptx.size(); ++at) {
    auto id_at = [&](size_t from) { return ptx.substr(from, ptx.find_first_of(",;", from) - from); };
    if (ptx.compare(at, sync.size(), sync) == 0 && ptx.find(", 256;", at) == ptx.find(',', at))
      seq += "S" + id_at(at + sync.size()) + " ";
    else if (ptx.compare(at, arrive.size(), arrive) == 0)
      seq += "A" + id_at(at + arrive.size()) + " ";
    else if (ptx.compare(at, cta.size(), cta) == 0)
      seq += "B0 ";
    else if (ptx.compare(at, commit.size(), commit) == 0)
      seq += "C ";
    else if (ptx.compare(at, wait.size(), wait) == 0)
      seq += "W" + id_at(at + wait.size()) + " ";
  }
  return seq;
}

}  // namespace

TEST_CASE("warpgroup_turns: the two warpgroups take turns at each trip's wgmma, named barriers 3 and 4") {
  for (bool overlap : {false, true})
    for (int cr : {0, 232}) {
      CAPTURE(overlap);
      CAPTURE(cr);
      auto f = attention_ir(128, 128, 128, overlap);
      lowering::Options o = options_for("sm_90a", 8, 2);
      o.stage_mbarriers = cr == 0;  // signalled stages, or producer warps' rings
      o.warp_specialize = cr > 0;
      o.consumer_registers = cr;
      const lowering::Compiled plain = lowering::compile(*f, o);
      o.warpgroup_turns = true;
      const lowering::Compiled c = lowering::compile(*f, o);
      INFO(c.plan);
      const std::string seq = turn_sequence(c.ptx);
      INFO(seq);
      CHECK(count(c.plan, "the 2 warpgroups take turns at each trip's wgmma") == 2);
      CHECK(c.plan.find(", warpgroup_turns") != std::string::npos);
      if (cr == 0) CHECK(c.launch.symbol.substr(c.launch.symbol.size() - 6) == "_mb_wt");
      // Per key loop: warpgroup 1 hands warpgroup 0 its first turn before the loop (bar.arrive 3),
      // each warpgroup waits for its turn a trip (bar.sync 3 or 4, one branch each) and hands it
      // on (to 4 or 3), and warpgroup 0 takes the last hand-over after the loop (bar.sync 3).
      CHECK(count(c.ptx, "bar.arrive 3, 256;") == 2 * 2);
      CHECK(count(c.ptx, "bar.arrive 4, 256;") == 2 * 1);
      CHECK(count(c.ptx, "barrier.sync \t3, 256;") == 2 * 2);
      CHECK(count(c.ptx, "barrier.sync \t4, 256;") == 2 * 1);
      CHECK(count(plain.ptx, "bar.arrive") == 0);
      // After each loop warpgroup 0's sync on 3 (the last hand-over) is followed by a barrier of
      // every warpgroup (B0 with signalled stages, the consumers' S1 with producer warps) before
      // warpgroup 1 may arrive on 3 for the next loop: otherwise its last hand-over and that
      // arrival could complete barrier 3's phase without warpgroup 0 (a hang, most likely when the
      // first loop has no trips).
      CHECK(count(seq, cr == 0 ? "A4 S3 B0 " : "A4 S3 S1 ") == 2);
      CHECK(count(seq, "A4 S3 A3 ") == 0);
      // In a trip the turn is taken just before the first wgmma and passed once the products
      // are issued: after both commits in the rotated loop (the softmax's wait for Q K^T comes
      // later), between Q K^T's commit and its own wait in the masked loop (its softmax reads it
      // at once): the other warpgroup's Q K^T then queues behind this one's (FlashAttention-3's
      // order). Passing it after the wait left the tensor cores idle from this group's end to
      // the other's issue.
      if (overlap) CHECK(seq.find("S4 S3 C C A4 ") != std::string::npos);
      // (The wait's block lies after the hand-over's branches in the text.)
      CHECK(seq.find("S4 S3 C A4 ") != std::string::npos);
      CHECK(seq.find("S4 S3 C W0 ") == std::string::npos);
      // Each hand-over ends a basic block ptxas keeps (a branch in the same asm): without it
      // ptxas sank the bar.arrive of the plain loop below the softmax (read in the SASS, session
      // 48), so the other warpgroup's products waited for this one's exponentials.
      for (const char* id : {"3", "4"}) {
        const std::string arrive = std::string("bar.arrive ") + id + ", 256;";
        for (size_t at = c.ptx.find(arrive); at != std::string::npos; at = c.ptx.find(arrive, at + 1)) {
          const size_t branch = c.ptx.find("@q bra.uni tessel_pass_", at);
          REQUIRE(branch != std::string::npos);
          // Nothing between but the branch's condition (the arrive and the setp: 2 statements;
          // the grid width it compares comes in a register read once, not from the constant bank
          // at each hand-over).
          CHECK(count(c.ptx.substr(at, branch - at), ";") == 2);
          CHECK(c.ptx.substr(at, branch - at).find("%nctaid") == std::string::npos);
        }
      }
      // The same wgmma groups and waits as without turns (the branches of the turns move blocks
      // around in the text, so counted, not in order).
      for (const std::string& w : {"wgmma.commit_group", "wgmma.wait_group.sync.aligned 0;",
                                   "wgmma.wait_group.sync.aligned 1;"})
        CHECK(count(c.ptx, w) == count(plain.ptx, w));
      lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, "sm_90a");
      if (!r.ran) continue;
      INFO(r.log);
      CHECK(r.ok);
      CHECK(r.log.find("serialized") == std::string::npos);
      const std::string form = std::string(overlap ? "rotated" : "plain") + (cr ? ", producer warps" : ", mbarriers");
      MESSAGE("warpgroup_turns 128x128 d128 s2 " << form << ": " << r.registers << " registers, " << r.spill_stores
                                                 << " bytes of spill stores");
    }
}

TEST_CASE("warpgroup_turns: loops they do not fit run as without them and the plan says why") {
  auto why = [](int block_m, int warps, bool mbarriers) {
    auto f = attention_ir(block_m, 64, 64);
    lowering::Options o = options_for("sm_90a", warps, 2);
    o.stage_mbarriers = mbarriers;
    o.warpgroup_turns = true;
    const lowering::Compiled c = lowering::compile(*f, o);
    INFO(c.plan);
    CHECK(count(c.ptx, "bar.arrive") == 0);
    return c.plan;
  };
  CHECK(count(why(128, 8, false), "no warpgroup turns (warpgroup_turns): a CTA barrier every trip holds the "
                                  "warpgroups in step") == 2);
  CHECK(count(why(64, 4, true), "no warpgroup turns (warpgroup_turns): the program has one warpgroup") == 2);
  auto g = matmul_ir();
  lowering::Options o = options_for("sm_90a", 8, 3);
  o.warpgroup_turns = true;
  const lowering::Compiled c = lowering::compile(*g, o);
  CHECK(c.plan.find("no warpgroup turns (warpgroup_turns): the loop has one dot") != std::string::npos);
  CHECK(count(c.ptx, "bar.arrive") == 0);
}

TEST_CASE("the rotated loop's 3 stages at 128x128 d128 fit: its stages take the buffer block 0 staged in") {
  auto f = attention_ir(128, 128, 128, true);
  lowering::Options o = options_for("sm_90a", 8, 3);
  o.stage_mbarriers = true;
  // Three 64 KiB stages and Q's 32 KiB: a buffer of their own for the stages beside block 0's
  // 64 KiB staging would pass sm_90a's 232448 bytes.
  const lowering::Compiled c = lowering::compile(*f, o);
  CHECK(c.launch.shared_bytes <= 232448);
  CHECK(c.launch.shared_bytes >= 3 * 65536 + 32768);
  CHECK(count(c.plan, "pipelined, 3 stages of 65536 B") == 2);
}
