// atomic_add / atomic_max on global memory: one predicated atom (or red) per element.
//
// Each element is updated exactly once: only its owner (layout.hpp) issues the atomic, and
// only where the mask holds; a scalar atomic is issued by thread 0. When the old values are
// unused the update is a `red` (no return); otherwise `atom`, and masked-off elements read 0.
// Threads holding copies of a replicated element get its old value from the owner through
// shared memory.
//
// Memory semantics are PTX's defaults for atom/red: relaxed, gpu scope (no fences; Triton's
// default is acq_rel). With the op's acq_rel attribute the program's threads meet at a barrier
// first (so every access of the program before it precedes the atomic), the atomics are
// `atom.acq_rel.gpu` (an unused result too: red has no acquire), and a barrier after them
// orders every thread's later accesses after the acquire.
//
// f32 atomic_max has no PTX instruction: for a non-negative value (sign
// bit clear) max.s32 on the bit pattern orders like the floats, and for a negative one
// min.u32 does (larger magnitudes have larger patterns), whatever the sign of the value in
// memory. NaN is unspecified (ops.def).
#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>

#include "lowerer.hpp"

namespace tessel::lowering {
namespace {

bool is_true(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
  return c && c->isOne();
}

char constraint(llvm::Type* t) {
  if (t->isFloatTy()) return 'f';
  if (t->isDoubleTy()) return 'd';
  return t->isIntegerTy(64) ? 'l' : 'r';
}

// One `atom.global.<op>.<ty>` (or `red` when !used), predicated by `pred`; returns the old
// value (0 where the predicate is false), or null when !used.
llvm::Value* atomic_asm(Lowerer& L, const std::string& what, llvm::Value* ptr, llvm::Value* v, llvm::Value* pred,
                        bool used, bool acq_rel) {
  auto& b = L.b;
  llvm::Type* t = v->getType();
  const char c = constraint(t);
  const bool always = is_true(pred);
  std::vector<llvm::Type*> types;
  std::vector<llvm::Value*> args;
  std::string text, cons;
  int next = 0;
  const bool ret = used || acq_rel;  // acq_rel: atom, whose result may go unused
  if (ret) {
    cons = fmt::format("={},", c);
    ++next;
  }
  std::string guard;
  if (!always) {
    guard = fmt::format("@${} ", next++);
    cons += "b,";
    types.push_back(b.getInt1Ty());
    args.push_back(pred);
  }
  const int addr = next++, val = next++;
  cons += fmt::format("l,{}", c);
  types.push_back(b.getInt64Ty());
  args.push_back(b.CreatePtrToInt(ptr, b.getInt64Ty()));
  types.push_back(t);
  args.push_back(v);
  if (ret) {
    text = fmt::format("{}atom{}.global.{} $0, [${}], ${};", guard, acq_rel ? ".acq_rel.gpu" : "", what, addr, val);
    if (!always) {
      cons += ",0";  // where the predicate is false the result keeps 0
      types.push_back(t);
      args.push_back(llvm::Constant::getNullValue(t));
    }
  } else {
    text = fmt::format("{}red.global.{} [${}], ${};", guard, what, addr, val);
  }
  cons += ",~{memory}";
  auto* fty = llvm::FunctionType::get(ret ? t : b.getVoidTy(), types, false);
  auto* call = b.CreateCall(llvm::InlineAsm::get(fty, text, cons, /*hasSideEffects=*/true), args);
  call->addFnAttr(llvm::Attribute::NoUnwind);
  return used ? call : nullptr;
}

llvm::Value* atomic_one(Lowerer& L, ir::OpKind k, ir::DType d, llvm::Value* ptr, llvm::Value* v, llvm::Value* pred,
                        bool used, bool acq_rel) {
  auto& b = L.b;
  if (k != ir::OpKind::AtomicAdd && k != ir::OpKind::AtomicMax) ir::unexpected_op(__FILE__, __LINE__, "atomic_one", k);
  const bool add = k == ir::OpKind::AtomicAdd;
  switch (d.scalar) {
    case ir::Scalar::i32: return atomic_asm(L, add ? "add.s32" : "max.s32", ptr, v, pred, used, acq_rel);
    case ir::Scalar::i64: return atomic_asm(L, add ? "add.u64" : "max.s64", ptr, v, pred, used, acq_rel);
    case ir::Scalar::f64:
      TESSEL_ASSERT(add, "atomic_max on f64 is not supported");
      return atomic_asm(L, "add.f64", ptr, v, pred, used, acq_rel);
    case ir::Scalar::f32: {
      if (add) return atomic_asm(L, "add.f32", ptr, v, pred, used, acq_rel);
      llvm::Value* bits = b.CreateBitCast(v, b.getInt32Ty());
      llvm::Value* neg = b.CreateICmpSLT(bits, b.getInt32(0));
      llvm::Value* pos_pred = b.CreateAnd(pred, b.CreateNot(neg));
      llvm::Value* neg_pred = b.CreateAnd(pred, neg);
      llvm::Value* r1 = atomic_asm(L, "max.s32", ptr, bits, pos_pred, used, acq_rel);
      llvm::Value* r2 = atomic_asm(L, "min.u32", ptr, bits, neg_pred, used, acq_rel);
      if (!used) return nullptr;
      return b.CreateBitCast(b.CreateSelect(neg, r2, r1), b.getFloatTy());
    }
    // The verifier (rule Atomic) admits only the element types above.
    case ir::Scalar::i1: case ir::Scalar::i8: case ir::Scalar::i16: case ir::Scalar::f16: case ir::Scalar::bf16:
    case ir::Scalar::u8: case ir::Scalar::u16: case ir::Scalar::u32: case ir::Scalar::u64: case ir::Scalar::f8e4m3:
    case ir::Scalar::f8e5m2:
      break;
  }
  throw CompileError({}, fmt::format("atomics on {} elements are not supported", d.str()));
}

}  // namespace

Regs lower_atomic(Lowerer& L, const ir::Op& op, const Layout* l) {
  auto& b = L.b;
  const ir::Value* ptr = op.operands[0];
  const ir::DType d = ptr->type.dtype.pointee();
  const ir::Shape& shape = ptr->type.shape;
  const bool used = L.is_used(op.results[0]);
  const bool acq_rel = op.has_attr("acq_rel") && op.int_attr("acq_rel") == 1;
  if (acq_rel) L.barrier();  // the program's accesses so far precede the release
  Regs ptrs = L.operand(op, 0, l), vals = L.operand(op, 1, l), mask;
  if (op.num_operands() > 2) mask = L.operand(op, 2, l);
  llvm::Value* owner = l ? L.thread_owner(*l, shape) : b.CreateICmpEQ(L.tid(), L.i32(0));
  bool replicated = !is_true(owner);
  const int64_t n = static_cast<int64_t>(ptrs.size());
  llvm::Type* vt = L.reg_type(d);
  Regs out(n, llvm::Constant::getNullValue(vt));
  std::vector<int64_t> owned;
  for (int64_t k = 0; k < n; ++k) {
    if (l && !reg_is_owner(*l, shape, k)) {
      replicated = true;
      continue;
    }
    owned.push_back(k);
    llvm::Value* pred = owner;
    if (!mask.empty()) pred = is_true(pred) ? mask[k] : b.CreateAnd(pred, mask[k]);
    llvm::Value* old = atomic_one(L, op.kind, d, ptrs[k], vals[k], pred, used, acq_rel);
    if (old) out[k] = old;
  }
  if (!used || !replicated) {
    if (acq_rel) L.barrier();  // every thread's later accesses follow the acquire
    return out;
  }

  // Copies of an element learn its old value from the owner.
  std::vector<SmemWrite> writes;
  std::vector<llvm::Value*> reads;
  if (!l) {
    writes.push_back({L.i32(0), {out[0]}});
    reads.push_back(L.i32(0));
  } else {
    for (int64_t k : owned) writes.push_back({L.linear_index(*l, shape, k), {out[k]}});
    for (int64_t k = 0; k < n; ++k) reads.push_back(L.linear_index(*l, shape, k));
  }
  const int64_t slots = l ? ptr->type.numel() : 1;
  // (Its barrier, between the owners' writes and everyone's reads, also orders every thread's
  // later accesses after an acq_rel atomic.)
  auto got = exchange_through_smem(L, {vt}, slots, writes, owner, reads);
  for (int64_t k = 0; k < n; ++k) out[k] = got[k][0];
  return out;
}

}  // namespace tessel::lowering
