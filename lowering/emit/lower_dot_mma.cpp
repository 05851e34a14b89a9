// dot on tensor cores: operands staged in swizzled shared memory, ldmatrix, mma.sync.
//
// The plan (mma_layout.hpp) fixes everything: the result is in the mma accumulator layout, so
// the accumulator registers are the C fragments. Steps:
//   1. every thread stores its registers of a and b (any layout) into the swizzled staging,
//      16 bytes at a time where its registers hold consecutive elements (f32 inputs rounded to
//      tf32 with cvt.rna on the way when the instruction is tf32). An operand that is a load
//      used only by this dot, 16-byte vectorisable, with `other` 0, is instead copied global ->
//      shared by cp.async.cg (16 bytes, zero-filled where masked) without passing registers;
//   2. cp.async.commit_group + wait_group 0 when there were copies, then one barrier;
//   3. per k-step: ldmatrix.x4 per m-tile of the warp for A, ldmatrix.x4.trans per pair of
//      n-tiles (.x2 for a single one) for B ([N][K]-staged B of tf32/s8: without .trans), then
//      one mma.sync per (m-tile, n-tile).
// The buffer is handed back to the Lowerer's shared-memory bookkeeping, which places the
// barrier before anything (the next trip of a K loop included) writes it again.
// In a pipelined K loop (num_stages >= 2, lower_control.cpp) steps 1-2 become wait_group
// ahead - 1 + barrier on the stage buffer the loop's prologue or an earlier trip filled, and
// right after that barrier the dot issues the copies of trip i + ahead (PipelineState).
//
// With MmaPlan::b_in_registers (a B computed in registers in mma_b_register_layout: W4A16's
// dequantised weights at BLOCK_M 16), B is not staged: step 3 packs each B fragment from two
// pairs of B's registers (b_register) and only A goes through ldmatrix.
//
// On sm_90a, dots that wgmma_accumulator_layout covers take step 3 as wgmma.mma_async from
// the blocked stagings (wgmma_steps): fence.proxy.async before the barrier, one inline-asm
// block of every k-step's m64 instructions, commit, and a wait for the group; in a pipelined
// loop whose accumulator only feeds the next trip the group stays in flight into that trip
// (PipelinePlan::wgmma_in_flight), and the trip's copies follow its wait for the previous
// group instead of the barrier.
#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "lowerer.hpp"
#include "pipeline.hpp"
#include "tessel/ir/accessors.hpp"
#include "plan/mma_layout.hpp"

namespace tessel::lowering {
namespace {


// SmemTile::swizzle as IR, for a row whose low 3 bits are `r` (the rest is a multiple of 8).
llvm::Value* swizzle_of(Lowerer& L, const SmemTile& t, llvm::Value* r) {
  const int64_t c = t.chunks();
  if (c >= 8) return r;
  return L.b.CreateAnd(L.b.CreateLShr(r, log2i(8 / c)), L.i32(c - 1));
}

// SmemTile::physical_row as IR.
llvm::Value* physical_row(Lowerer& L, const SmemTile& t, llvm::Value* row) {
  if (t.warpgroups == 0) return row;
  auto& b = L.b;
  const int G = t.warpgroups;
  llvm::Value* low = b.CreateAnd(row, L.i32(7));
  llvm::Value* w16 = b.CreateShl(b.CreateAnd(b.CreateLShr(row, 3), L.i32(3)), 4);
  llvm::Value* g = b.CreateAnd(b.CreateLShr(row, 5), L.i32(G - 1));
  llvm::Value* rep = b.CreateLShr(row, 5 + log2i(G));
  llvm::Value* h8 = b.CreateShl(b.CreateAnd(rep, L.i32(1)), 3);
  llvm::Value* blk = b.CreateAdd(b.CreateMul(b.CreateLShr(rep, 1), L.i32(G)), g);
  return b.CreateAdd(b.CreateAdd(b.CreateShl(blk, 6), w16), b.CreateAdd(h8, low));
}

// Byte offset of (row, byte) in `t`, emitted as SmemTile::offset.
llvm::Value* smem_offset(Lowerer& L, const SmemTile& t, llvm::Value* row, llvm::Value* byte) {
  auto& b = L.b;
  llvm::Value* p = physical_row(L, t, row);
  const int64_t w = t.block_bytes();
  llvm::Value* in_block = w == t.row_bytes ? byte : b.CreateAnd(byte, L.i32(w - 1));
  llvm::Value* chunk = b.CreateXor(b.CreateLShr(in_block, 4), swizzle_of(L, t, b.CreateAnd(p, 7)));
  llvm::Value* off = b.CreateAdd(b.CreateMul(p, L.i32(w)), b.CreateAdd(b.CreateShl(chunk, 4), b.CreateAnd(byte, 15)));
  if (w != t.row_bytes) off = b.CreateAdd(off, b.CreateMul(b.CreateLShr(byte, log2i(w)), L.i32(t.rows * w)));
  return off;
}

// `x` through an identity LLVM cannot see into (readnone, so still hoisted out of loops): it
// stays one register, not re-split into terms shared with other addresses.
llvm::Value* opaque(Lowerer& L, llvm::Value* x) {
  auto* fty = llvm::FunctionType::get(x->getType(), {x->getType()}, false);
  auto* call = L.b.CreateCall(llvm::InlineAsm::get(fty, "mov.b32 $0, $1;", "=r,r", false), {x});
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  call->addFnAttr(llvm::Attribute::WillReturn);
  return call;
}

// The byte offset in staging `t` of the element register `r` holds, for every thread of the
// layout's warps (host arithmetic, as smem_offset emits it).
std::vector<int64_t> thread_offsets(const SmemTile& t, const Layout& l, const ir::Shape& s, int64_t r, int row_dim,
                                    int elem_bytes) {
  std::vector<int64_t> out;
  for (int w = 0; w < l.num_warps(); ++w)
    for (int lane = 0; lane < 32; ++lane) {
      const std::vector<int64_t> x = element_of(l, s, ThreadPos{r, lane, w});
      out.push_back(t.offset(x[row_dim], x[1 - row_dim] * elem_bytes));
    }
  return out;
}

// Offset classes (stage's `classed`): registers whose offsets in a staging differ by the same
// constant in every thread share one offset register (opaque), each a constant from it.
class OffsetClasses {
 public:
  OffsetClasses(const SmemTile& t, const Layout& l, const ir::Shape& s, int row_dim, int elem_bytes)
      : t_(t), l_(l), s_(s), row_dim_(row_dim), eb_(elem_bytes) {}
  // The address of register r's element at `base`; `offset` emits its offset when its class is new.
  llvm::Value* at(Lowerer& L, llvm::Value* base, int64_t r, const std::function<llvm::Value*()>& offset) {
    std::vector<int64_t> key = thread_offsets(t_, l_, s_, r, row_dim_, eb_);
    const int64_t first = key.front();
    for (int64_t& k : key) k -= first;
    auto [it, fresh] = classes_.try_emplace(std::move(key), nullptr, first);
    if (fresh) it->second.first = opaque(L, offset());
    llvm::Value* ptr = L.b.CreateGEP(L.b.getInt8Ty(), base, it->second.first);
    if (first != it->second.second) ptr = L.b.CreateConstGEP1_64(L.b.getInt8Ty(), ptr, first - it->second.second);
    return ptr;
  }

 private:
  const SmemTile& t_;
  const Layout& l_;
  const ir::Shape& s_;
  int row_dim_, eb_;
  // Each thread's offset minus thread 0's -> (the class's offset register, thread 0's offset of
  // the register it was made for).
  std::map<std::vector<int64_t>, std::pair<llvm::Value*, int64_t>> classes_;
};

// Stores a tile held in layout `l` into staging `t` at `base`: element (x0, x1) goes to row
// x[row_dim], byte x[1 - row_dim] * elem_bytes. Runs of registers holding consecutive elements
// along the row (size_per_thread) are stored as one vector of up to 16 bytes.
// With `classed` (the plan's StagedOperand::address_classes: a pipelined loop's operand staged
// into the trip's stage, whose base changes every trip) the stores' offsets are grouped in
// classes whose members differ by the same constant in every thread: each class's offset is one
// register (opaque), its members a constant from it, so with the uniform stage base (ptxas adds
// it in the address) the stores cost no address arithmetic. LLVM left alone factors a term
// common to every class out and adds it back per store; elsewhere that saves registers, which
// the classes would hold (spills in attention's and tf32's mma.sync stagings).
void stage(Lowerer& L, llvm::Value* base, const SmemTile& t, const ir::Value* v, const Regs& regs, const Layout& l,
           int row_dim, int elem_bytes, const std::function<llvm::Value*(llvm::Value*)>& convert, bool classed) {
  auto& b = L.b;
  const ir::Shape& s = v->type.shape;
  const int inner = 1 - row_dim;
  const int64_t spt = l.size_per_thread[l.parent_dim(inner)];
  const int64_t vec = std::min<int64_t>({spt, 16 / elem_bytes, s[inner]});
  OffsetClasses classes(t, l, s, row_dim, elem_bytes);
  for (int64_t r = 0; r < static_cast<int64_t>(regs.size()); ++r) {
    std::vector<int64_t> rd = reg_dims(l, s, r);
    if (rd[inner] % vec != 0 || !reg_is_owner(l, s, r)) continue;
    std::vector<llvm::Value*> elems;
    for (int64_t u = 0; u < vec; ++u) {
      std::vector<int64_t> ru = rd;
      ru[inner] += u;
      elems.push_back(convert(regs.at(reg_index(l, s, ru))));
    }
    auto offset = [&] {
      llvm::Value* row = L.coord(l, s, row_dim, rd[row_dim]);
      llvm::Value* byte = b.CreateMul(L.coord(l, s, inner, rd[inner]), L.i32(elem_bytes));
      return smem_offset(L, t, row, byte);
    };
    llvm::Value* ptr = nullptr;
    if (classed) {
      ptr = classes.at(L, base, r, offset);
    } else {
      ptr = b.CreateGEP(b.getInt8Ty(), base, offset());
    }
    const int64_t bytes = vec * elem_bytes;
    if (bytes < 4) {
      for (int64_t u = 0; u < vec; ++u)
        b.CreateAlignedStore(elems[u], b.CreateConstGEP1_64(b.getInt8Ty(), ptr, u * elem_bytes),
                             llvm::Align(elem_bytes));
      continue;
    }
    // One vector of the elements, reinterpreted as 32-bit words: a load feeding it folds into
    // a plain vector move (packing by shifts made LLVM reload parts of it).
    llvm::Value* x = llvm::UndefValue::get(llvm::FixedVectorType::get(elems[0]->getType(), static_cast<unsigned>(vec)));
    for (int64_t u = 0; u < vec; ++u) x = b.CreateInsertElement(x, elems[u], static_cast<uint64_t>(u));
    const unsigned words = static_cast<unsigned>(bytes / 4);
    x = b.CreateBitCast(x, words == 1 ? static_cast<llvm::Type*>(b.getInt32Ty())
                                      : llvm::FixedVectorType::get(b.getInt32Ty(), words));
    b.CreateAlignedStore(x, ptr, llvm::Align(bytes));
  }
}

// ldmatrix .x4/.x2 [.trans] at `ptr`: 4 or 2 registers.
std::vector<llvm::Value*> ldmatrix(Lowerer& L, llvm::Value* ptr, int count, bool trans) {
  using namespace llvm::Intrinsic;
  ID id = count == 4 ? (trans ? nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16 : nvvm_ldmatrix_sync_aligned_m8n8_x4_b16)
                     : (trans ? nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16 : nvvm_ldmatrix_sync_aligned_m8n8_x2_b16);
  llvm::Value* r = L.intrinsic(id, {ptr->getType()}, {ptr});
  std::vector<llvm::Value*> out;
  for (int i = 0; i < count; ++i) out.push_back(L.b.CreateExtractValue(r, {static_cast<unsigned>(i)}));
  return out;
}

// mma.sync on fp8 (sm_89+, PTX 8.4) as inline asm: LLVM 19 has no intrinsic for it.
std::vector<llvm::Value*> mma_fp8(Lowerer& L, const MmaInstr& in, const std::vector<llvm::Value*>& a,
                                  const std::vector<llvm::Value*>& bw, const std::vector<llvm::Value*>& c) {
  auto& b = L.b;
  std::vector<llvm::Value*> args(a);
  args.insert(args.end(), bw.begin(), bw.end());
  args.insert(args.end(), c.begin(), c.end());
  const std::string text = in.ptx() + " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  std::vector<llvm::Type*> ins;
  for (llvm::Value* v : args) ins.push_back(v->getType());
  llvm::Type* f = b.getFloatTy();
  auto* fty = llvm::FunctionType::get(llvm::StructType::get(L.ctx, {f, f, f, f}), ins, false);
  llvm::CallInst* call = b.CreateCall(
      llvm::InlineAsm::get(fty, text, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", false), args);
  call->addFnAttr(llvm::Attribute::Convergent);
  std::vector<llvm::Value*> d;
  for (unsigned i = 0; i < 4; ++i) d.push_back(b.CreateExtractValue(call, {i}));
  return d;
}

// One mma.sync: a (4 words), b (2 words), c (4 accumulators) -> d.
std::vector<llvm::Value*> mma(Lowerer& L, const MmaInstr& in, const std::vector<llvm::Value*>& a,
                              const std::vector<llvm::Value*>& bw, const std::vector<llvm::Value*>& c) {
  using namespace llvm::Intrinsic;
  auto& b = L.b;
  if (in.is_fp8()) return mma_fp8(L, in, a, bw, c);
  std::vector<llvm::Value*> args;
  ID id = nvvm_mma_m16n8k16_row_col_f32_f32;
  llvm::Type* half2 = llvm::FixedVectorType::get(b.getHalfTy(), 2);
  auto add = [&](llvm::Value* w) { args.push_back(in.kind == MmaKind::F16 ? b.CreateBitCast(w, half2) : w); };
  for (llvm::Value* w : a) add(w);
  for (llvm::Value* w : bw) add(w);
  for (llvm::Value* x : c) args.push_back(x);
  switch (in.kind) {
    case MmaKind::F16: id = nvvm_mma_m16n8k16_row_col_f32_f32; break;
    case MmaKind::BF16: id = nvvm_mma_m16n8k16_row_col_bf16; break;
    case MmaKind::TF32: id = nvvm_mma_m16n8k8_row_col_tf32; break;
    case MmaKind::S8: id = nvvm_mma_m16n8k32_row_col_s8; break;
    case MmaKind::F8: TESSEL_ASSERT(false, "fp8 mma is inline asm (mma_fp8)"); break;
  }
  llvm::Value* r = L.intrinsic(id, {}, args);
  std::vector<llvm::Value*> d;
  for (unsigned i = 0; i < 4; ++i) d.push_back(b.CreateExtractValue(r, {i}));
  return d;
}

// The k-steps of one dot on wgmma, as one inline-asm block per dot: wgmma.fence, for every
// k-step and m64 block of this thread's warpgroup one wgmma.mma_async (A and B from their
// stagings through descriptors, accumulating into the block's registers), commit, and a wait.
// `pending`: how many groups (this one included) may still run when the block returns. 0: the
// accumulators are final and the stagings free to overwrite when it returns. 1, in a pipelined
// loop: only the previous trip's group is waited for; this one's accumulators flow, untouched,
// into the next trip's block or wgmma_wait_all, the only readers that know they are in flight.
// -1 (PipelinePlan::deferred_waits): no wait; the lowerer waits where the result is first read.
// `a_regs` (p.a_in_registers): A's registers in its accumulator layout `la`; each instruction then
// takes its A fragment as four 32-bit registers of f16/bf16 pairs instead of a descriptor.
void wgmma_steps(Lowerer& L, const MmaPlan& p, const Layout& l, Regs& c, llvm::Value* sa, llvm::Value* sb,
                 int pending, const Regs* a_regs = nullptr, const Layout* la = nullptr) {
  auto& b = L.b;
  if (pending >= 0) L.settle_all_wgmma();  // its wait would retire the deferred groups too
  const int G = p.warpgroups();
  llvm::Value* g = G == 1 ? L.i32(0) : b.CreateAnd(b.CreateLShr(L.warp_uniform(), 2), L.i32(G - 1));
  auto addr = [&](llvm::Value* ptr) { return b.CreateTrunc(b.CreatePtrToInt(ptr, b.getInt64Ty()), b.getInt32Ty()); };
  // Descriptor of each staging's start for this warpgroup, as its two 32-bit words: the low
  // word holds the start-address field (bits 0-13) and the leading byte offset, the high word
  // only constants. The per-step offsets (multiples of 16 bytes; the address stays below 2^18)
  // add to the start-address field without a carry, so each step's descriptor costs one 32-bit
  // add; the asm packs the words (mov.b64). 64-bit adds cost ptxas a carry chain per operand.
  struct Desc {
    llvm::Value* lo;
    uint32_t hi;
  };
  auto desc = [&](const SmemTile& t, bool k_major, llvm::Value* start) {
    const uint64_t bits = wgmma_desc_bits(t, k_major);
    llvm::Value* field = b.CreateLShr(b.CreateAnd(start, L.i32(0x3ffff)), 4);
    return Desc{b.CreateOr(field, L.i32(static_cast<uint32_t>(bits))), static_cast<uint32_t>(bits >> 32)};
  };
  Desc da0{nullptr, 0};
  if (!a_regs) da0 = desc(p.a, true, b.CreateAdd(addr(sa), b.CreateMul(g, L.i32(64 * p.a.block_bytes()))));
  const Desc db0 = desc(p.b, p.b_by_rows_of_n, addr(sb));  // [N][K]: K-major like A
  const int64_t blocks = p.wgmma_blocks();
  const int64_t per_block = p.N / 2;  // accumulators per thread per m64 block
  std::vector<int64_t> regs;          // asm output o -> accumulator register
  for (int64_t i = 0; i < blocks; ++i)
    for (int64_t j = 0; j < p.N / 8; ++j)
      for (int e = 0; e < 4; ++e) regs.push_back(p.acc_register(l, i, j, e));
  const int64_t n_acc = static_cast<int64_t>(regs.size());
  std::vector<llvm::Value*> args;
  std::string cons, text = "{\n.reg .pred p;\n.reg .b64 da, db;\n";
  for (int64_t o = 0; o < n_acc; ++o) cons += "=f,";
  auto operand = [&](llvm::Value* v, const char* con) {
    args.push_back(v);
    cons += con;
    cons += ",";
    return n_acc + static_cast<int64_t>(args.size()) - 1;
  };
  const int64_t one = operand(L.i32(1), "r");
  const int64_t a_hi = a_regs ? -1 : operand(L.i32(da0.hi), "r");
  const int64_t b_hi = operand(L.i32(db0.hi), "r");
  text += fmt::format("setp.ne.b32 p, ${}, 0;\nwgmma.fence.sync.aligned;\n", one);
  for (int64_t s = 0; s < p.k_steps; ++s) {
    const auto b_off = static_cast<uint32_t>(static_cast<uint64_t>(p.wgmma_b_offset(s)) >> 4);
    const int64_t nb = operand(b.CreateAdd(db0.lo, L.i32(b_off)), "r");
    text += fmt::format("mov.b64 db, {{${}, ${}}};\n", nb, b_hi);
    for (int64_t i = 0; i < blocks; ++i) {
      std::string d;
      for (int64_t o = i * per_block; o < (i + 1) * per_block; ++o) d += fmt::format("{}${}", d.empty() ? "" : ",", o);
      const int trans_b = p.b_by_rows_of_n ? 0 : 1;  // 1: B read MN-major, rows of k
      if (a_regs) {
        // Register A: pairs (a0, a1), (a2, a3), ... of the fragment as 32-bit registers.
        std::string a;
        for (int q = 0; q < 4; ++q) {
          llvm::Value* lo = a_regs->at(p.a_register(*la, i, s, 2 * q));
          llvm::Value* hi = a_regs->at(p.a_register(*la, i, s, 2 * q + 1));
          llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(lo->getType(), 2));
          v = b.CreateInsertElement(b.CreateInsertElement(v, lo, uint64_t{0}), hi, uint64_t{1});
          a += fmt::format("{}${}", q ? "," : "", operand(b.CreateBitCast(v, b.getInt32Ty()), "r"));
        }
        // scale-d p, scale-a 1, scale-b 1, trans-b.
        text += fmt::format("{} {{{}}}, {{{}}}, db, p, 1, 1, {};\n", p.wgmma_ptx(), d, a, trans_b);
        continue;
      }
      const auto off = static_cast<uint32_t>(static_cast<uint64_t>(p.wgmma_a_offset(0, i, s)) >> 4);
      const int64_t na = operand(b.CreateAdd(da0.lo, L.i32(off)), "r");
      text += fmt::format("mov.b64 da, {{${}, ${}}};\n", na, a_hi);
      if (p.in.is_fp8())  // scale-d p, scale-a 1, scale-b 1; 8-bit forms have no transpose (K-major)
        text += fmt::format("{} {{{}}}, da, db, p, 1, 1;\n", p.wgmma_ptx(), d);
      else  // scale-d p, scale-a 1, scale-b 1, trans-a 0, trans-b.
        text += fmt::format("{} {{{}}}, da, db, p, 1, 1, 0, {};\n", p.wgmma_ptx(), d, trans_b);
    }
  }
  text += "wgmma.commit_group.sync.aligned;\n";
  if (pending >= 0) text += fmt::format("wgmma.wait_group.sync.aligned {};\n", pending);
  text += "}";
  for (int64_t o = 0; o < n_acc; ++o) {
    args.push_back(c.at(regs[o]));
    cons += fmt::format("{},", o);
  }
  cons += "~{memory}";
  std::vector<llvm::Type*> outs(n_acc, b.getFloatTy()), ins;
  for (llvm::Value* v : args) ins.push_back(v->getType());
  auto* fty = llvm::FunctionType::get(llvm::StructType::get(L.ctx, outs), ins, false);
  llvm::CallInst* call = b.CreateCall(llvm::InlineAsm::get(fty, text, cons, true), args);
  call->addFnAttr(llvm::Attribute::Convergent);
  for (int64_t o = 0; o < n_acc; ++o) c[regs[o]] = b.CreateExtractValue(call, {static_cast<unsigned>(o)});
}

}  // namespace

// Generic-proxy writes of this thread to shared memory (st.shared, cp.async) become visible
// to the async proxy wgmma reads through; the barrier after it does the same for all threads.
void fence_proxy_async(Lowerer& L) {
  auto* fty = llvm::FunctionType::get(L.b.getVoidTy(), false);
  L.b.CreateCall(llvm::InlineAsm::get(fty, "fence.proxy.async.shared::cta;", "~{memory}", true), {});
}

Regs wgmma_wait(Lowerer& L, const Regs& acc, int younger) {
  auto& b = L.b;
  std::string cons;
  std::vector<llvm::Type*> outs, ins;
  for (size_t o = 0; o < acc.size(); ++o) {
    cons += "=f,";
    outs.push_back(acc[o]->getType());
  }
  for (size_t o = 0; o < acc.size(); ++o) {
    cons += fmt::format("{},", o);
    ins.push_back(acc[o]->getType());
  }
  cons += "~{memory}";
  auto* fty = llvm::FunctionType::get(llvm::StructType::get(L.ctx, outs), ins, false);
  llvm::CallInst* call =
      b.CreateCall(llvm::InlineAsm::get(fty, fmt::format("wgmma.wait_group.sync.aligned {};", younger), cons, true), acc);
  call->addFnAttr(llvm::Attribute::Convergent);
  Regs out;
  for (size_t o = 0; o < acc.size(); ++o) out.push_back(b.CreateExtractValue(call, {static_cast<unsigned>(o)}));
  return out;
}

// As inline asm: with 32-bit shared pointers (nvptx_codegen.cpp) LLVM 19 cannot select the
// intrinsic.
void cp_async(Lowerer& L, llvm::Value* dst, llvm::Value* src, int64_t bytes, llvm::Value* mask, llvm::Value* guard) {
  auto& b = L.b;
  llvm::Value* ok = !mask ? guard : guard ? b.CreateAnd(mask, guard) : mask;
  llvm::Value* at = b.CreateTrunc(b.CreatePtrToInt(dst, b.getInt64Ty()), b.getInt32Ty());
  const std::string op = fmt::format("cp.async.{}.shared.global [$0], [$1], {}", bytes == 16 ? "cg" : "ca", bytes);
  if (auto* c = llvm::dyn_cast_or_null<llvm::ConstantInt>(ok); !ok || (c && c->isOne())) {
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), src->getType()}, false);
    b.CreateCall(llvm::InlineAsm::get(fty, op + ";", "r,l,~{memory}", true), {at, src});
    return;
  }
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), src->getType(), b.getInt1Ty()}, false);
  b.CreateCall(llvm::InlineAsm::get(fty, op + ", $2;", "r,l,b,~{memory}", true), {at, src, b.CreateNot(ok)});
}

// Copies a load's tile straight from global into the staging with cp.async (16 bytes per
// instruction; masked-off groups copy 0 bytes, which zero-fills them: `other` is 0).
void stage_async(Lowerer& L, llvm::Value* base, const SmemTile& t, const ir::Op& load, const Regs& ptrs,
                 const Regs& mask, llvm::Value* guard, bool by_class) {
  auto& b = L.b;
  const ir::Value* v = load.results[0];
  const ir::Shape& s = v->type.shape;
  const int64_t eb = v->type.dtype.bytes();
  const Layout& l = L.layouts().of(v);
  const int64_t w = 16 / eb;
  // Runs of 16 bytes along the layout's contiguous dim (stages_by_copy: the staging's row dim).
  const int inner = fastest_tile_dim(l), row_dim = 1 - inner;
  // By class: one offset register a class, not one a copy (the offsets are the same every trip,
  // so LLVM would keep them all across the loop).
  OffsetClasses classes(t, l, s, row_dim, static_cast<int>(eb));
  for (int64_t r = 0; r < static_cast<int64_t>(ptrs.size()); ++r) {
    std::vector<int64_t> rd = reg_dims(l, s, r);
    if (rd[inner] % w != 0 || !reg_is_owner(l, s, r)) continue;
    auto offset = [&] {
      llvm::Value* row = L.coord(l, s, row_dim, rd[row_dim]);
      llvm::Value* byte = b.CreateMul(L.coord(l, s, inner, rd[inner]), L.i32(eb));
      return smem_offset(L, t, row, byte);
    };
    llvm::Value* dst = by_class ? classes.at(L, base, r, offset) : b.CreateGEP(b.getInt8Ty(), base, offset());
    cp_async(L, dst, ptrs[r], 16, mask.empty() ? nullptr : mask[r], guard);
  }
}

namespace {

// Two 16-bit registers as one 32-bit fragment register (lo in the low half).
llvm::Value* pack_pair(Lowerer& L, llvm::Value* lo, llvm::Value* hi) {
  auto& b = L.b;
  llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(lo->getType(), 2));
  v = b.CreateInsertElement(b.CreateInsertElement(v, lo, uint64_t{0}), hi, uint64_t{1});
  return b.CreateBitCast(v, b.getInt32Ty());
}

// The mma.sync k-steps of a dot whose operands are staged at `sa` and `sb`: ldmatrix fragments,
// then one mma per (m-tile, n-tile) into the accumulator registers `c`. With p.b_in_registers,
// B's fragments are `b_regs` (in mma_b_register_layout `lb`) and `sb` is unused.
void mma_sync_steps(Lowerer& L, const MmaPlan& p, const Layout& l, Regs& c, llvm::Value* sa, llvm::Value* sb,
                    const Regs* b_regs = nullptr, const Layout* lb = nullptr) {
  auto& b = L.b;
  const MmaInstr& in = p.in;
  // Per-lane parts of the ldmatrix addresses (MmaPlan::a_address / b_address): lane = 8q + r.
  llvm::Value* lane = L.lane();
  llvm::Value* warp = L.warp();
  auto warp_coord_ir = [&](int dim, int count) -> llvm::Value* {
    if (count == 1) return L.i32(0);
    return b.CreateAnd(b.CreateLShr(warp, log2i(warp_stride(l, dim))), L.i32(count - 1));
  };
  llvm::Value* warp_m = warp_coord_ir(0, p.wm);
  llvm::Value* warp_n = warp_coord_ir(1, p.wn);
  llvm::Value* q = b.CreateLShr(lane, 3);
  llvm::Value* r = b.CreateAnd(lane, 7);
  llvm::Value* q_lo = b.CreateAnd(q, 1);
  llvm::Value* q_hi = b.CreateLShr(q, 1);
  // A: row = (2i + q%2) * 8wm + warp_m * 8 + r, chunk = 2s + q/2.
  llvm::Value* a_row = b.CreateAdd(b.CreateAdd(b.CreateMul(q_lo, L.i32(8 * p.wm)), b.CreateMul(warp_m, L.i32(8))), r);
  llvm::Value* a_swz = swizzle_of(L, p.a, r);
  llvm::Value* a_lane_off = b.CreateMul(a_row, L.i32(p.a.row_bytes));
  // B: n-tile j + (pairs ? q/2 : 0); its first column (jj * 8wn + warp_n * 8) & (N - 1).
  llvm::Value* b_tile_hi = p.b_pairs() ? q_hi : L.i32(0);
  llvm::Value* b_swz = swizzle_of(L, p.b, r);
  auto b_col = [&](int64_t j, llvm::Value* plus) {
    llvm::Value* jj = b.CreateAdd(L.i32(j), b_tile_hi);
    llvm::Value* col = b.CreateAdd(b.CreateMul(jj, L.i32(8 * p.wn)), b.CreateMul(warp_n, L.i32(8)));
    if (plus) col = b.CreateAdd(col, plus);
    return b.CreateAnd(col, L.i32(p.N - 1));
  };
  auto at = [&](llvm::Value* base, llvm::Value* off) { return b.CreateGEP(b.getInt8Ty(), base, off); };

  for (int64_t s = 0; s < p.k_steps; ++s) {
    std::vector<std::vector<llvm::Value*>> af(p.m_tiles), bf(p.n_tiles);
    for (int64_t i = 0; i < p.m_tiles; ++i) {
      llvm::Value* chunk = b.CreateXor(b.CreateAdd(q_hi, L.i32(2 * s)), a_swz);
      llvm::Value* off = b.CreateAdd(a_lane_off, L.i32(2 * i * 8 * p.wm * p.a.row_bytes));
      off = b.CreateAdd(off, b.CreateShl(chunk, 4));
      af[i] = ldmatrix(L, at(sa, off), 4, false);
    }
    const int step = p.b_pairs() ? 2 : 1;
    for (int64_t j = 0; b_regs && j < p.n_tiles; ++j) {
      auto reg = [&](int e) { return b_regs->at(p.b_register(*lb, s, j, e)); };
      bf[j] = {pack_pair(L, reg(0), reg(1)), pack_pair(L, reg(2), reg(3))};
    }
    for (int64_t j = 0; !b_regs && j < p.n_tiles; j += step) {
      llvm::Value* row;
      llvm::Value* chunk;
      if (p.b_by_rows_of_n) {
        row = b_col(j, r);
        chunk = b.CreateAdd(L.i32(2 * s), q_lo);
      } else {
        row = b.CreateAdd(b.CreateAdd(L.i32(s * in.k), b.CreateMul(q_lo, L.i32(8))), r);
        chunk = b.CreateLShr(b.CreateMul(b_col(j, nullptr), L.i32(in.elem_bytes)), 4);
      }
      llvm::Value* off = b.CreateAdd(b.CreateMul(row, L.i32(p.b.row_bytes)), b.CreateShl(b.CreateXor(chunk, b_swz), 4));
      std::vector<llvm::Value*> regs = ldmatrix(L, at(sb, off), 2 * step, !p.b_by_rows_of_n);
      bf[j] = {regs[0], regs[1]};
      if (step == 2) bf[j + 1] = {regs[2], regs[3]};
    }
    for (int64_t i = 0; i < p.m_tiles; ++i)
      for (int64_t j = 0; j < p.n_tiles; ++j) {
        // Serpentine over n so consecutive mmas share a fragment (friendlier to the scheduler).
        const int64_t jj = i % 2 ? p.n_tiles - 1 - j : j;
        std::vector<int64_t> regs;
        std::vector<llvm::Value*> cin;
        for (int e = 0; e < 4; ++e) {
          regs.push_back(p.acc_register(l, i, jj, e));
          cin.push_back(c.at(regs.back()));
        }
        std::vector<llvm::Value*> d = mma(L, in, af[i], bf[jj], cin);
        for (int e = 0; e < 4; ++e) c[regs[e]] = d[e];
      }
  }
}

}  // namespace

namespace {

// Registers -> staging conversion of a dot's operands (tf32 rounds on the way).
std::function<llvm::Value*(llvm::Value*)> operand_convert(Lowerer& L, const MmaPlan& p) {
  if (p.in.kind == MmaKind::TF32)
    return [&L](llvm::Value* x) { return L.intrinsic(llvm::Intrinsic::nvvm_f2tf32_rna, {}, {x}); };
  return [](llvm::Value* x) { return x; };
}

// Stages operand i of `op` (a tile in registers) at `base` in the plan's staging for it
// (`classed`: stage()'s, StagedOperand::address_classes).
void stage_from_registers(Lowerer& L, const ir::Op& op, const MmaPlan& p, int i, llvm::Value* base,
                          bool classed = false) {
  const ir::Value* v = op.operands[i];
  const Layout& lv = L.layouts().of(v);
  const int row_dim = i == 0 || !p.b_by_rows_of_n ? 0 : 1;
  stage(L, base, i == 0 ? p.a : p.b, v, L.tile(v, lv), lv, row_dim, p.in.elem_bytes, operand_convert(L, p),
        classed);
}

// The tensor-core steps of a dot whose operands are staged at `sa` and `sb`.
// With p.a_in_registers, A (operand 0 of `op`) comes from its registers, not from `sa`.
void dot_steps(Lowerer& L, const ir::Op& op, const MmaPlan& p, const Layout& l, Regs& c, llvm::Value* sa,
               llvm::Value* sb, int pending) {
  if (p.wgmma && p.a_in_registers) {
    const Layout& la = L.layouts().of(op.operands[0]);
    const Regs a = L.tile(op.operands[0], la);
    wgmma_steps(L, p, l, c, sa, sb, pending, &a, &la);
  } else if (p.wgmma) {
    wgmma_steps(L, p, l, c, sa, sb, pending);
  } else if (p.b_in_registers) {
    const Layout& lb = L.layouts().of(op.operands[1]);
    const Regs bregs = L.tile(op.operands[1], lb);
    mma_sync_steps(L, p, l, c, sa, sb, &bregs, &lb);
  } else {
    mma_sync_steps(L, p, l, c, sa, sb);
  }
}

// A dot of a pipelined loop (PipelinePlan): each operand is read from the trip's stage (its
// copy), from the loop's resident buffer, or staged here from registers into a scratch buffer.
// The loop's first dot waits for the trip's copies and issues trip i + ahead's; the later dots
// read the same stage, which no copy overwrites before the next trip's barrier.
Regs pipelined_dot(Lowerer& L, const ir::Op& op, const Layout& l, const MmaPlan& p, const PipelineState& pipe,
                   Regs c) {
  auto& b = L.b;
  const PipelinePlan& plan = *pipe.plan;
  // This trip's operands were issued `ahead` trips ago into buffer `read_slot`; at most
  // ahead - 1 younger groups may still be in flight.
  llvm::Value* stage = b.CreateGEP(b.getInt8Ty(), pipe.base, b.CreateMul(pipe.read_slot, L.i32(pipe.stage_bytes)));
  llvm::Value* base[2] = {nullptr, nullptr};
  bool from_registers = false;
  for (int i = 0; i < 2; ++i) {
    if (p.in_registers(i)) continue;  // wgmma's A, mma.sync's B fragments: no staging
    if (const PipelinedOperand* po = plan.copy_of(&op, i)) {
      base[i] = b.CreateConstGEP1_64(b.getInt8Ty(), stage, po->offset);
    } else if (const ResidentOperand* r = plan.resident_of(&op, i)) {
      base[i] = pipe.resident.at(static_cast<size_t>(r - plan.resident.data()));
    } else if (const StagedOperand* so = plan.staged_of(&op, i)) {
      // Computed in the body: staged into this trip's stage (the barrier below publishes it),
      // its stores addressed by class where the plan says so.
      base[i] = b.CreateConstGEP1_64(b.getInt8Ty(), stage, so->offset);
      stage_from_registers(L, op, p, i, base[i], so->address_classes);
    } else {
      from_registers = true;
    }
  }
  Lowerer::SmemBuffer scratch;
  if (from_registers) {
    scratch = L.smem_begin(p.smem_bytes(), p.wgmma ? 1024 : 16);
    for (int i = 0; i < 2; ++i) {
      if (base[i] || p.in_registers(i)) continue;
      base[i] = i == 0 ? scratch.base : b.CreateConstGEP1_64(b.getInt8Ty(), scratch.base, p.b_offset);
      stage_from_registers(L, op, p, i, base[i]);
    }
  }
  const bool waits = &op == plan.dot;
  if (waits && (plan.mbarriers || pipe.ring)) {
    pipe.wait_ready();  // full[s]: every thread's copies landed (a ring: the producers')
  } else {
    if (waits) L.intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {L.i32(pipe.ahead - 1)});
    if (waits || from_registers) {
      if (p.wgmma) fence_proxy_async(L);
      L.barrier();
    }
  }
  // Every warp passed this barrier after its reads of the previous trip's buffer, the one the
  // copies for trip i + ahead overwrite: issue them now, a whole trip of mma ahead of the wait.
  // With the wgmma group left in flight, the buffer the copies overwrite is the one the
  // previous trip's group reads: issue them after waiting for that group (with several
  // warpgroups, after a second barrier that every warpgroup reaches past its own wait).
  const bool issue_late = waits && pipe.wgmma_in_flight;
  std::function<void()> copies;  // (a ring's producers issue the copies)
  if (waits && !issue_late && !pipe.ring) copies = pipe.issue_next;
  // Warpgroup turns: this warpgroup's products wait for its turn, the copies for the hand-over.
  if (waits && plan.warpgroup_turns) L.turn_take(std::move(copies));
  else if (copies) copies();
  const int pending = plan.defers(&op) ? -1 : pipe.wgmma_in_flight ? 1 : 0;
  if (pending == 0 && p.wgmma && L.turn_held()) {
    // A dot waited for in its own block passes the turn between its commit and its wait: the
    // next warpgroup's products queue behind this one's while it waits, and run beside its
    // softmax (FlashAttention-3's order).
    L.settle_all_wgmma();
    dot_steps(L, op, p, l, c, base[0], base[1], -1);
    L.turn_pass();
    c = wgmma_wait_all(L, c);
  } else {
    dot_steps(L, op, p, l, c, base[0], base[1], pending);
    // The turn passes once the trip's products are issued: after its last dot.
    if (plan.warpgroup_turns && (&op == plan.dots.back() || !plan.defers(&op))) L.turn_pass();
  }
  if (issue_late && p.warpgroups() > 1) L.barrier();
  if (issue_late) pipe.issue_next();
  if (from_registers) L.smem_done(scratch);
  return c;
}

}  // namespace

void stage_resident(Lowerer& L, const ir::Op& dot, const MmaPlan& p, int operand, llvm::Value* base) {
  stage_from_registers(L, dot, p, operand, base);
}

Regs lower_dot_mma(Lowerer& L, const ir::Op& op, const Layout& l, const MmaPlan& p, const PipelineState* pipe) {
  auto& b = L.b;
  Regs c = L.operand(op, 2, &l);
  if (pipe && pipe->ring && !pipe->plan) {
    // A single-dot ring: producer warps filled the stage: wait for it, compute, hand back what
    // is read no more. (A ring of several dots reads its stage as a pipelined loop does.)
    llvm::Value* sa =
        b.CreateGEP(b.getInt8Ty(), pipe->base, b.CreateMul(pipe->read_slot, L.i32(pipe->stage_bytes)));
    llvm::Value* sb = b.CreateConstGEP1_64(b.getInt8Ty(), sa, p.b_offset);
    pipe->wait_ready();
    wgmma_steps(L, p, l, c, sa, sb, pipe->wgmma_in_flight ? 1 : 0);
    pipe->release();
    return c;
  }
  if (pipe) return pipelined_dot(L, op, l, p, *pipe, std::move(c));

  // 1. Stage a and b: loads in KernelPlan::staged_loads by cp.async, the rest from registers.
  Lowerer::SmemBuffer buf = L.smem_begin(p.smem_bytes(), p.wgmma ? 1024 : 16);
  llvm::Value* base[2] = {buf.base, b.CreateConstGEP1_64(b.getInt8Ty(), buf.base, p.b_offset)};
  bool async = false;
  for (int i = 0; i < 2; ++i) {
    if (p.in_registers(i)) continue;  // wgmma's A, mma.sync's B fragments: no staging
    const ir::Value* v = op.operands[i];
    if (v->def && v->def->kind == ir::OpKind::Load && L.plan.stages_load(*v->def)) {
      const ir::Op& load = *v->def;
      const Layout& ll = L.layouts().of(v);
      Regs ptrs = L.operand(load, 0, &ll), mask;
      if (ir::LoadOp{load}.mask()) mask = L.operand(load, 1, &ll);
      stage_async(L, base[i], i == 0 ? p.a : p.b, load, ptrs, mask, nullptr);
      async = true;
    } else {
      stage_from_registers(L, op, p, i, base[i]);
    }
  }
  // 2. This thread's copies land, then everyone's.
  if (async) {
    L.intrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
    L.intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {L.i32(0)});
  }
  if (p.wgmma) fence_proxy_async(L);
  L.barrier();
  dot_steps(L, op, p, l, c, base[0], base[1], 0);
  L.smem_done(buf);
  return c;
}

}  // namespace tessel::lowering
