// Lowerer infrastructure: types, value maps, layout requests and thread geometry.
#include "lowerer.hpp"

#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

#include "pipeline.hpp"

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
    case ir::Scalar::u8: return b.getInt8Ty();
    case ir::Scalar::u16: return b.getInt16Ty();
    case ir::Scalar::u32: return b.getInt32Ty();
    case ir::Scalar::u64: return b.getInt64Ty();
    case ir::Scalar::f8e4m3: case ir::Scalar::f8e5m2: return b.getInt8Ty();  // bits; cast converts
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

void Lowerer::bind_in(const ir::Value* v, const Layout& l, Regs r) {
  TESSEL_ASSERT(!(layouts().of(v) == l), "bind_in: the value's own layout");
  auto key = std::make_pair(v->id, l.str());
  if (!scopes_.empty()) scopes_.back().push_back(key);
  other_layouts_[key] = std::move(r);
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

void Lowerer::convert_operands(const ir::Op& op, const Layout* l) {
  for (const auto& [i, want] : operands_converted_first(op, l)) tile(op.operands[static_cast<size_t>(i)], want);
}

// A block boundary ptxas keeps: a branch, on a condition it cannot decide (the grid being
// 123456789 programs wide: uniform, and harmless if ever true), around a CTA memory barrier.
// ptxas schedules each basic block on its own, and within one block it moves instructions across
// a wgmma wait or a named barrier's arrive as if they cost nothing: it moves a deferred wgmma
// wait up to the previous wait, so the work written between a group's issue and its wait
// (attention's softmax beside P V) runs after it; and it sinks a warpgroup turn's hand-over
// (bar.arrive) below the work after it (the softmax), so the next warpgroup waits for that work.
// A boundary before such a wait and after such an arrive keeps the work where the program put
// it (read in the SASS; the wgmma stay unserialised).
// The grid's width comes in as the asm's last operand (grid_width, read once in the prologue):
// read in the asm, ptxas loaded it from the constant bank at every boundary, and the branch's
// compare waited for that load.
void Lowerer::kept_block_end(const std::string& before, const std::string& label, std::vector<llvm::Value*> args,
                             const std::string& constraints) {
  const size_t grid_x = args.size();
  args.push_back(grid_width());
  std::vector<llvm::Type*> types;
  for (llvm::Value* a : args) types.push_back(a->getType());
  const std::string text = "{\n.reg .pred q;\n" + before +
                           fmt::format("setp.ne.u32 q, ${}, 123456789;\n@q bra.uni {}_${{:uid}};\n", grid_x, label) +
                           "membar.cta;\n" + label + "_${:uid}:\n}";
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), types, false);
  const std::string cons = constraints + (constraints.empty() ? "" : ",") + "r,~{memory}";
  llvm::CallInst* c = b.CreateCall(llvm::InlineAsm::get(fty, text, cons, true), args);
  c->addFnAttr(llvm::Attribute::NoDuplicate);  // (its labels are unique per call)
}

llvm::Value* Lowerer::grid_width() {
  return prologue_value("nctaid.x", [&](llvm::IRBuilder<>& p) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(mod_.get(), llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
    return p.CreateCall(f, {}, "nctaid.x");
  });
}

void Lowerer::block_boundary() { kept_block_end("", "tessel_keep", {}, ""); }

void Lowerer::settle_wgmma(const ir::Value* v) {
  if (std::find(wgmma_pending_.begin(), wgmma_pending_.end(), v) == wgmma_pending_.end()) return;
  turn_pass();  // the wait below must not hold the other warpgroups' turns (it may issue copies)
  auto it = std::find(wgmma_pending_.begin(), wgmma_pending_.end(), v);
  if (it == wgmma_pending_.end()) return;
  block_boundary();
  const auto upto = static_cast<size_t>(it - wgmma_pending_.begin()) + 1;
  Regs regs;
  for (size_t g = 0; g < upto; ++g) {
    const Regs& r = values_.at(wgmma_pending_[g]->id);
    regs.insert(regs.end(), r.begin(), r.end());
  }
  Regs out = wgmma_wait(*this, regs, static_cast<int>(wgmma_pending_.size() - upto));
  size_t at = 0;
  for (size_t g = 0; g < upto; ++g)
    for (llvm::Value*& r : values_.at(wgmma_pending_[g]->id)) r = out.at(at++);
  wgmma_pending_.erase(wgmma_pending_.begin(), wgmma_pending_.begin() + static_cast<std::ptrdiff_t>(upto));
}

void Lowerer::settle_all_wgmma() {
  if (!wgmma_pending_.empty()) settle_wgmma(wgmma_pending_.back());
}

const Regs& Lowerer::tile(const ir::Value* v, const Layout& l) {
  TESSEL_ASSERT(!v->type.is_scalar(), "tile() of a scalar");
  if (!wgmma_pending_.empty()) settle_wgmma(v);
  TESSEL_ASSERT(v->id < values_.size(), "value used before it was lowered");
  const Layout& natural = layouts().of(v);
  if (natural == l && !values_[v->id].empty()) return values_[v->id];
  auto key = std::make_pair(v->id, l.str());
  auto it = other_layouts_.find(key);
  if (it != other_layouts_.end()) return it->second;
  Regs r;
  if (natural == l) {
    // Not lowered yet in its own layout: only block arguments are bound late; a bug.
    internal_error(__FILE__, __LINE__, "tile used before it was lowered: " + v->type.str());
  } else if (plan.recomputed(v)) {
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
  // A producer thread's geometry (tid, warp, its layouts' coordinates) is its own.
  const std::string k = role == Role::Producer ? "producer " + key : key;
  auto it = prologue_.find(k);
  if (it != prologue_.end()) return it->second;
  llvm::Value* v = make(pb_);
  prologue_[k] = v;
  return v;
}

llvm::Value* Lowerer::cta_tid() {
  return prologue_value("tid.x", [&](llvm::IRBuilder<>& p) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(mod_.get(), llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    return p.CreateCall(f, {}, "tid.x");
  });
}

// The programs' warps come first, program by program; the producer warpgroup (warp_specialize)
// last, producer_threads() per program.
llvm::Value* Lowerer::tid() {
  llvm::Value* t = cta_tid();
  if (role == Role::Producer)
    return prologue_value("tid", [&](llvm::IRBuilder<>& p) {
      return p.CreateAnd(p.CreateSub(t, p.getInt32(consumer_threads())), producer_threads() - 1, "tid");
    });
  if (opts.programs_per_cta == 1) return t;
  return prologue_value("tid", [&](llvm::IRBuilder<>& p) { return p.CreateAnd(t, program_threads() - 1, "tid"); });
}

llvm::Value* Lowerer::group() {
  if (opts.programs_per_cta == 1) return b.getInt32(0);
  llvm::Value* t = cta_tid();
  if (role == Role::Producer)
    return prologue_value("group", [&](llvm::IRBuilder<>& p) {
      return p.CreateLShr(p.CreateSub(t, p.getInt32(consumer_threads())), log2i(producer_threads()), "group");
    });
  return prologue_value("group", [&](llvm::IRBuilder<>& p) { return p.CreateLShr(t, log2i(program_threads()), "group"); });
}

llvm::Value* Lowerer::lane() {
  llvm::Value* t = tid();
  return prologue_value("lane", [&](llvm::IRBuilder<>& p) { return p.CreateAnd(t, kWarpSize - 1, "lane"); });
}

llvm::Value* Lowerer::warp() {
  llvm::Value* t = tid();
  return prologue_value("warp", [&](llvm::IRBuilder<>& p) { return p.CreateLShr(t, 5, "warp"); });
}

// warp() read back from lane 0 (shfl.sync in the prologue, where every lane runs), as CUTLASS's
// canonical_warp_idx_sync does: ptxas then knows it is the same in every lane and keeps what
// derives from it in uniform registers. The wgmma descriptors of a warpgroup's rows built from
// warp() were computed per thread and moved across (R2UR) before every wgmma: 97 R2UR in
// attention's 128x128 d128 loop with producer warps, 4 with this. Only there: the layouts'
// thread coordinates stay on warp() (uniform registers are few; spills where they ran out).
llvm::Value* Lowerer::warp_uniform() {
  llvm::Value* w = warp();
  return prologue_value("warp.uniform", [&](llvm::IRBuilder<>& p) {
    llvm::Function* shfl = llvm::Intrinsic::getDeclaration(mod_.get(), llvm::Intrinsic::nvvm_shfl_sync_idx_i32);
    return p.CreateCall(shfl, {p.getInt32(-1), w, p.getInt32(0), p.getInt32(31)}, "warp.uniform");
  });
}

namespace {
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
  if (every_thread_owns(l, s)) return b.getTrue();
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

llvm::GlobalVariable* Lowerer::slot_var(int s) {
  if (smem_vars_.size() <= static_cast<size_t>(s)) smem_vars_.resize(s + 1, nullptr);
  if (!smem_vars_[s])
    smem_vars_[s] = new llvm::GlobalVariable(*mod_, b.getInt8Ty(), false, llvm::GlobalValue::InternalLinkage,
                                             llvm::UndefValue::get(b.getInt8Ty()),
                                             fmt::format("tessel_smem{}_placeholder", s), nullptr,
                                             llvm::GlobalValue::NotThreadLocal, 3);
  return smem_vars_[s];
}

Lowerer::SmemBuffer Lowerer::smem_begin(int64_t bytes, int64_t align) {
  settle_all_wgmma();
  const SharedSlots::Choice c = shared_steps_.next_request();
  if (c.barrier_first) barrier();
  shared_steps_.step({SharedSlots::Event::Kind::Take, c.slot, bytes, align});
  return SmemBuffer{c.slot, slot_base(c.slot)};
}

int64_t Lowerer::smem_conversion_budget() { return shared_steps_.next_budget(); }

Lowerer::SmemBuffer Lowerer::smem_pinned(int64_t bytes, int64_t align) {
  settle_all_wgmma();
  const SharedSlots::Choice c = shared_steps_.next_request();
  if (c.barrier_first) barrier();
  shared_steps_.step({SharedSlots::Event::Kind::Pin, c.slot, bytes, align});
  return SmemBuffer{c.slot, slot_base(c.slot)};
}

void Lowerer::smem_unpin(const SmemBuffer& s) { shared_steps_.step({SharedSlots::Event::Kind::Unpin, s.slot}); }

void Lowerer::with_rebound(const std::vector<std::pair<const ir::Value*, Regs>>& subst,
                           const std::vector<const ir::Op*>& ops, const std::function<void()>& use) {
  // A wgmma group in flight whose result these ops read, or that is rebound here, is waited for
  // first (its registers pass through the wait before anything reads them); the others stay in
  // flight (a trip's copies issued beside its products: warpgroup turns).
  for (const auto& [v, r] : subst) settle_wgmma(v);
  for (const ir::Op* op : ops) {
    for (const ir::Value* v : op->operands) settle_wgmma(v);
    for (const ir::Value* v : op->results) settle_wgmma(v);
  }
  if (values_.size() < irf.num_values()) values_.resize(irf.num_values());
  std::vector<uint32_t> ids;
  for (const auto& [v, r] : subst) ids.push_back(v->id);
  for (const ir::Op* op : ops)
    for (const ir::Value* v : op->results) ids.push_back(v->id);
  // Save and forget everything known about these values, so tile() computes them afresh.
  std::vector<Regs> saved_natural;
  std::vector<std::pair<std::pair<uint32_t, std::string>, Regs>> saved_other;
  for (uint32_t id : ids) {
    saved_natural.push_back(values_[id]);
    values_[id].clear();
    auto it = other_layouts_.lower_bound({id, std::string()});
    while (it != other_layouts_.end() && it->first.first == id) {
      saved_other.emplace_back(it->first, std::move(it->second));
      it = other_layouts_.erase(it);
    }
  }
  push_scope();
  for (const auto& [v, r] : subst) bind(v, r);
  for (const ir::Op* op : ops) {
    TESSEL_ASSERT(ir::is_pure(op->kind) && op->regions.empty(), "with_rebound: only pure ops are lowered again");
    std::vector<Regs> r = lower_op(*op, layouts().of_op(*op));
    for (size_t i = 0; i < op->results.size(); ++i) bind(op->results[i], std::move(r.at(i)));
  }
  use();
  pop_scope();
  for (size_t i = 0; i < ids.size(); ++i) {
    values_[ids[i]] = std::move(saved_natural[i]);
    auto it = other_layouts_.lower_bound({ids[i], std::string()});
    while (it != other_layouts_.end() && it->first.first == ids[i]) it = other_layouts_.erase(it);
  }
  for (auto& [k, r] : saved_other) other_layouts_[k] = std::move(r);
}

void Lowerer::smem_done(const SmemBuffer& s) { shared_steps_.step({SharedSlots::Event::Kind::Touch, s.slot}); }

void Lowerer::barrier() {
  turn_pass();  // a warpgroup turn held across a barrier would deadlock the next warpgroup
  settle_all_wgmma();
  if (role == Role::Producer)
    throw CompileError({}, fmt::format("kernel '{}': with warp_specialize the producer warps would need a barrier "
                                       "(a reduction or layout change through shared memory) to compute the "
                                       "K loops' bounds or addresses; compute them elementwise instead",
                                       irf.name));
  if (opts.programs_per_cta == 1 && !opts.warp_specialize) {
    intrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  } else {
    // The program's own warps only: named barrier 1 + group (0 is the CTA-wide one).
    intrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {}, {b.CreateAdd(group(), i32(1)), i32(program_threads())});
  }
  shared_steps_.step({SharedSlots::Event::Kind::Barrier});
}

void Lowerer::smem_loop_begin() { shared_steps_.step({SharedSlots::Event::Kind::LoopBegin}); }

void Lowerer::smem_loop_latch() {
  if (shared_steps_.next_latch_barrier()) barrier();
  shared_steps_.step({SharedSlots::Event::Kind::Latch});
}

void Lowerer::smem_loop_exit() { shared_steps_.step({SharedSlots::Event::Kind::LoopExit}); }

void Lowerer::if_then(llvm::Value* cond, const std::function<void()>& body) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(cond)) {
    if (c->isOne()) body();
    return;
  }
  auto* then = llvm::BasicBlock::Create(ctx, "if.then", fn_);
  auto* cont = llvm::BasicBlock::Create(ctx, "if.end", fn_);
  b.CreateCondBr(cond, then, cont);
  b.SetInsertPoint(then);
  body();
  b.CreateBr(cont);
  b.SetInsertPoint(cont);
}

llvm::Value* Lowerer::slot_base(int s) {
  llvm::GlobalVariable* var = slot_var(s);
  if (opts.programs_per_cta == 1 || plan.shared.slots.at(static_cast<size_t>(s)).cta) return var;
  llvm::Value* g = group();
  llvm::BinaryOperator*& offset = group_offset_[role];
  if (!offset) {
    // The constant (one program's bytes) is not known yet; finish_shared sets it.
    offset = llvm::BinaryOperator::CreateMul(g, pb_.getInt32(0), "smem.group.offset");
    pb_.Insert(offset);
  }
  return prologue_value(fmt::format("smem.base {}", s), [&](llvm::IRBuilder<>& p) {
    return p.CreateGEP(p.getInt8Ty(), var, offset, fmt::format("smem{}", s));
  });
}

void Lowerer::finish_shared() {
  // One dynamic shared array (the launch passes Compiled::shared_bytes), the slots at fixed
  // offsets in it: no 48 KiB static limit, and nothing allocated twice.
  // Every planned step taken; the turn words laid out where the plan put them.
  shared_steps_.finish();
  TESSEL_ASSERT((turn_var_ != nullptr) == (plan.shared.turn_bytes > 0), "the programs' turn words are the plan's");
  const SharedSlots::Placement& at = plan.shared.placement;
  if (opts.programs_per_cta > 1)
    for (auto& [role, offset] : group_offset_) offset->setOperand(1, b.getInt32(static_cast<uint32_t>(at.region)));
  if (at.total == 0) return;
  auto* ty = llvm::ArrayType::get(b.getInt8Ty(), 0);
  auto* base = new llvm::GlobalVariable(*mod_, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, "tessel_smem",
                                        nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  base->setAlignment(llvm::Align(static_cast<uint64_t>(at.align)));
  for (size_t s = 0; s < smem_vars_.size(); ++s) {
    llvm::GlobalVariable*& var = smem_vars_[s];
    if (!var) continue;
    var->replaceAllUsesWith(llvm::ConstantExpr::getGetElementPtr(b.getInt8Ty(), base, b.getInt64(at.offset.at(s))));
    var->eraseFromParent();
    var = nullptr;
  }
  if (turn_var_) {
    turn_var_->replaceAllUsesWith(llvm::ConstantExpr::getGetElementPtr(b.getInt8Ty(), base, b.getInt64(at.turns)));
    turn_var_->eraseFromParent();
    turn_var_ = nullptr;
  }
}

}  // namespace tessel::lowering
