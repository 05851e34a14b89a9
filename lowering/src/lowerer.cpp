// Lowerer infrastructure: types, value maps, layout requests and thread geometry.
#include "lowerer.hpp"

#include <fmt/format.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace tessel::lowering {

llvm::PointerType* Lowerer::global_ptr() { return llvm::PointerType::get(ctx, 1); }

llvm::Type* Lowerer::reg_type(ir::DType d) {
  if (d.ptr) return global_ptr();
  switch (d.scalar) {
    case ir::Scalar::i1: return b.getInt1Ty();
    case ir::Scalar::i8: return b.getInt8Ty();
    case ir::Scalar::i16: return b.getInt16Ty();
    case ir::Scalar::i32: return b.getInt32Ty();
    case ir::Scalar::i64: return b.getInt64Ty();
    case ir::Scalar::f16: return b.getHalfTy();
    case ir::Scalar::bf16: return b.getBFloatTy();
    case ir::Scalar::f32: return b.getFloatTy();
    case ir::Scalar::f64: return b.getDoubleTy();
  }
  internal_error(__FILE__, __LINE__, "unknown scalar type");
}

llvm::Type* Lowerer::mem_type(ir::DType d) {
  if (!d.ptr && d.scalar == ir::Scalar::i1) return b.getInt8Ty();
  return reg_type(d);
}

bool is_half(ir::DType d) { return !d.ptr && (d.scalar == ir::Scalar::f16 || d.scalar == ir::Scalar::bf16); }

llvm::Value* to_compute(Lowerer& L, llvm::Value* v, ir::DType d) {
  return is_half(d) ? L.b.CreateFPExt(v, L.b.getFloatTy()) : v;
}

llvm::Value* from_compute(Lowerer& L, llvm::Value* v, ir::DType d) {
  return is_half(d) ? L.b.CreateFPTrunc(v, L.reg_type(d)) : v;
}

llvm::Value* Lowerer::intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> types,
                                llvm::ArrayRef<llvm::Value*> args) {
  llvm::Function* f = llvm::Intrinsic::getDeclaration(mod_.get(), id, types);
  return b.CreateCall(f, args);
}

void Lowerer::bind(const ir::Value* v, Regs r) {
  if (values_.size() < irf.num_values()) values_.resize(irf.num_values());
  values_[v->id] = std::move(r);
}

llvm::Value* Lowerer::scalar(const ir::Value* v) {
  TESSEL_ASSERT(v->type.is_scalar(), "expected a scalar, got " + v->type.str());
  TESSEL_ASSERT(v->id < values_.size() && values_[v->id].size() == 1, "scalar used before it was lowered");
  return values_[v->id][0];
}

int64_t Lowerer::result_regs(const ir::Op& op, const Layout* l) {
  if (!l) return 1;
  const ir::Value* shaped = op.results.empty() ? op.operands[0] : op.results[0];
  return num_regs(*l, shaped->type.shape);
}

Regs Lowerer::operand(const ir::Op& op, int i, const Layout* l) {
  const ir::Value* v = op.operands.at(i);
  if (v->type.is_scalar()) return Regs(static_cast<size_t>(result_regs(op, l)), scalar(v));
  TESSEL_ASSERT(l != nullptr, std::string(op.name()) + ": a tile operand of a scalar op");
  auto want = operand_layout(op, i, *l);
  TESSEL_ASSERT(want.has_value(), std::string(op.name()) + ": operand has no layout request");
  return tile(v, *want);
}

bool Lowerer::can_remat(const ir::Value* v, int depth) const {
  // Worth recomputing only when the whole producer chain is cheap and rooted in scalars,
  // constants and aranges; anything else (loads, loop values) converts once instead.
  if (v->type.is_scalar()) return true;
  if (depth > 12) return false;
  const ir::Op* op = v->def;
  if (!op || !ir::is_pure(op->kind) || op->kind == ir::OpKind::Rand || op->kind == ir::OpKind::RandN)
    return false;
  for (const ir::Value* o : op->operands)
    if (!o->type.is_scalar() && !can_remat(o, depth + 1)) return false;
  return true;
}

const Regs& Lowerer::tile(const ir::Value* v, const Layout& l) {
  TESSEL_ASSERT(!v->type.is_scalar(), "tile() of a scalar");
  TESSEL_ASSERT(v->id < values_.size(), "value used before it was lowered");
  const Layout& natural = layouts.of(v);
  if (natural == l && !values_[v->id].empty()) return values_[v->id];
  auto key = std::make_pair(v->id, l.str());
  auto it = other_layouts_.find(key);
  if (it != other_layouts_.end()) return it->second;
  Regs r;
  if (natural == l) {
    // Not lowered yet in its own layout: only block arguments are bound late; a bug.
    internal_error(__FILE__, __LINE__, "tile used before it was lowered: " + v->type.str());
  } else if (can_remat(v, 0)) {
    r = std::move(lower_op(*v->def, &l).at(v->index));
  } else {
    TESSEL_ASSERT(!values_[v->id].empty(), "tile used before it was lowered: " + v->type.str());
    r = convert_layout(*this, v, values_[v->id], natural, l);
  }
  if (!scopes_.empty()) scopes_.back().push_back(key);
  return other_layouts_[key] = std::move(r);
}

void Lowerer::push_scope() { scopes_.emplace_back(); }

void Lowerer::pop_scope() {
  for (const auto& k : scopes_.back()) other_layouts_.erase(k);
  scopes_.pop_back();
}

llvm::Value* Lowerer::prologue_value(const std::string& key,
                                     const std::function<llvm::Value*(llvm::IRBuilder<>&)>& make) {
  auto it = prologue_.find(key);
  if (it != prologue_.end()) return it->second;
  llvm::Value* v = make(pb_);
  prologue_[key] = v;
  return v;
}

llvm::Value* Lowerer::tid() {
  return prologue_value("tid", [&](llvm::IRBuilder<>& p) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(mod_.get(), llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    return p.CreateCall(f, {}, "tid");
  });
}

llvm::Value* Lowerer::lane() {
  llvm::Value* t = tid();
  return prologue_value("lane", [&](llvm::IRBuilder<>& p) { return p.CreateAnd(t, kWarpSize - 1, "lane"); });
}

llvm::Value* Lowerer::warp() {
  llvm::Value* t = tid();
  return prologue_value("warp", [&](llvm::IRBuilder<>& p) { return p.CreateLShr(t, 5, "warp"); });
}

namespace {
int log2i(int64_t x) {
  int n = 0;
  while ((int64_t{1} << n) < x) ++n;
  return n;
}
int64_t stride_of(const std::vector<int>& order, const std::vector<int>& extent, int dim) {
  int64_t s = 1;
  for (int p : order) {
    if (p == dim) break;
    s *= extent[p];
  }
  return s;
}
}  // namespace

llvm::Value* Lowerer::thread_coord(const Layout& l, int p) {
  llvm::Value* ln = lane();
  llvm::Value* wp = warp();
  return prologue_value(fmt::format("tc {} {}", l.str(), p), [&](llvm::IRBuilder<>& q) -> llvm::Value* {
    int tpw = l.threads_per_warp[p], wpc = l.warps_per_cta[p];
    llvm::Value* lc = q.getInt32(0);
    if (tpw > 1) {
      lc = q.CreateLShr(ln, log2i(stride_of(l.order, l.threads_per_warp, p)));
      lc = q.CreateAnd(lc, tpw - 1);
    }
    llvm::Value* wc = q.getInt32(0);
    if (wpc > 1) {
      wc = q.CreateLShr(wp, log2i(stride_of(l.order, l.warps_per_cta, p)));
      wc = q.CreateAnd(wc, wpc - 1);
    }
    return q.CreateAdd(q.CreateMul(wc, q.getInt32(tpw)), lc);
  });
}

llvm::Value* Lowerer::coord(const Layout& l, const ir::Shape& s, int d, int64_t r_d) {
  int p = l.parent_dim(d);
  llvm::Value* base = prologue_value(fmt::format("tcs {} {}", l.str(), p), [&](llvm::IRBuilder<>& q) {
    return q.CreateMul(thread_coord(l, p), q.getInt32(l.size_per_thread[p]));
  });
  llvm::Value* c = b.CreateAdd(base, i32(reg_offset(l, s, d, r_d)));
  if (s[d] < l.footprint(p)) c = b.CreateAnd(c, i32(s[d] - 1));
  return c;
}

llvm::Value* Lowerer::linear_index(const Layout& l, const ir::Shape& s, int64_t reg) {
  std::vector<int64_t> r = reg_dims(l, s, reg);
  llvm::Value* idx = i32(0);
  int64_t stride = 1;
  for (int d = l.rank() - 1; d >= 0; --d) {
    idx = b.CreateAdd(idx, b.CreateMul(coord(l, s, d, r[d]), i32(stride)));
    stride *= s[d];
  }
  return idx;
}

llvm::Value* Lowerer::thread_owner(const Layout& l, const ir::Shape& s) {
  bool always = true;
  for (int p = 0; p < l.parent_rank(); ++p)
    always &= owner_thread_limit(l, s, p) >= int64_t{l.threads_per_warp[p]} * l.warps_per_cta[p];
  if (always) return b.getTrue();
  std::vector<llvm::Value*> coords;
  for (int p = 0; p < l.parent_rank(); ++p) coords.push_back(thread_coord(l, p));
  return prologue_value(fmt::format("own {} {}", l.str(), ir::shape_str(s)), [&](llvm::IRBuilder<>& q) {
    llvm::Value* ok = q.getTrue();
    for (int p = 0; p < l.parent_rank(); ++p) {
      int64_t lim = owner_thread_limit(l, s, p);
      if (lim >= int64_t{l.threads_per_warp[p]} * l.warps_per_cta[p]) continue;
      ok = q.CreateAnd(ok, q.CreateICmpULT(coords[p], q.getInt32(static_cast<uint32_t>(lim))));
    }
    return ok;
  });
}

llvm::Value* Lowerer::shared_scratch(int64_t bytes) {
  smem_bytes_ = std::max(smem_bytes_, bytes);
  if (!smem_)
    smem_ = new llvm::GlobalVariable(*mod_, b.getInt8Ty(), false, llvm::GlobalValue::InternalLinkage,
                                     llvm::UndefValue::get(b.getInt8Ty()), "tessel_smem_placeholder",
                                     nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  return smem_;
}

void Lowerer::barrier() {
  llvm::Function* f = llvm::Intrinsic::getDeclaration(mod_.get(), llvm::Intrinsic::nvvm_barrier0);
  b.CreateCall(f, {});
}

void Lowerer::finish_shared() {
  if (!smem_) return;
  int64_t limit = 48 * 1024;
  if (smem_bytes_ > limit)
    throw CompileError({}, fmt::format("kernel '{}' needs {} bytes of shared memory for layout conversions "
                                       "(static limit {}); use smaller tiles", irf.name, smem_bytes_, limit));
  auto* ty = llvm::ArrayType::get(b.getInt8Ty(), static_cast<uint64_t>(smem_bytes_));
  auto* real = new llvm::GlobalVariable(*mod_, ty, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::UndefValue::get(ty), "tessel_smem", nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
  real->setAlignment(llvm::Align(16));
  smem_->replaceAllUsesWith(real);
  smem_->eraseFromParent();
  smem_ = real;
}

}  // namespace tessel::lowering
