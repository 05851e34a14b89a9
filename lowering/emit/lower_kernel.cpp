// The lowering driver: kernel signature, prologue, op dispatch and kernel metadata.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Metadata.h>

#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"
#include "pipeline.hpp"

namespace tessel::lowering {

namespace {
std::string sanitize(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "k_" + s;
  return s;
}
}  // namespace

Lowerer::Lowerer(const KernelPlan& p, llvm::LLVMContext& c)
    : ctx(c),
      b(c),
      plan(p),
      irf(p.f),
      opts(p.opts),
      axis(p.axis),
      layouts_(&p.layouts),
      pb_(c),
      shared_steps_(p.shared, p.f.name) {
  mod_ = std::make_unique<llvm::Module>(sanitize(irf.name), ctx);
  mod_->setTargetTriple("nvptx64-nvidia-cuda");
  values_.resize(irf.num_values());
}

void Lowerer::build_signature() {
  std::vector<llvm::Type*> params;
  for (const ir::Value* a : irf.body.args) {
    TESSEL_ASSERT(a->type.is_scalar(), "kernel parameters are scalars");
    // Bools travel as a byte: a kernel parameter of type i1 has no portable launch layout.
    params.push_back(a->type.dtype.is_bool() ? b.getInt8Ty() : reg_type(a->type.dtype));
  }
  // Tensor maps after them: 128 bytes each, 64-aligned, read in place (grid_constant).
  const std::vector<TensorMapRecipe>& maps = plan.launch.tensor_maps;
  auto* map_ty = llvm::ArrayType::get(b.getInt8Ty(), 128);
  for (size_t m = 0; m < maps.size(); ++m) params.push_back(b.getPtrTy());
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, plan.launch.symbol, mod_.get());
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t m = 0; m < maps.size(); ++m) {
    llvm::Argument* arg = fn_->getArg(static_cast<unsigned>(irf.body.args.size() + m));
    arg->addAttr(llvm::Attribute::getWithByValType(ctx, map_ty));
    arg->addAttr(llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
    arg->setName(fmt::format("tma_map{}", m));
  }
  entry_ = llvm::BasicBlock::Create(ctx, "entry", fn_);
  pb_.SetInsertPoint(entry_);
  for (size_t i = 0; i < irf.body.args.size(); ++i) {
    const ir::Value* a = irf.body.args[i];
    const ir::Param& p = irf.params.at(i);
    llvm::Argument* arg = fn_->getArg(static_cast<unsigned>(i));
    arg->setName(sanitize(p.name));
    llvm::Value* v = arg;
    if (a->type.dtype.ptr && p.spec.div16) arg->addAttr(llvm::Attribute::getWithAlignment(ctx, llvm::Align(16)));
    if (a->type.dtype.is_bool()) v = pb_.CreateICmpNE(arg, pb_.getInt8(0));
    // Specialised "== 1": the kernel computes with the constant (Triton drops the use).
    if (p.spec.equal1 && a->type.dtype.is_int()) v = llvm::ConstantInt::get(reg_type(a->type.dtype), 1);
    bind(a, {v});
  }
}

void Lowerer::annotate_kernel() {
  llvm::NamedMDNode* md = mod_->getOrInsertNamedMetadata("nvvm.annotations");
  auto add = [&](const char* key, int v) {
    llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(ctx, key),
                             llvm::ValueAsMetadata::get(b.getInt32(v))};
    md->addOperand(llvm::MDNode::get(ctx, ops));
  };
  add("kernel", 1);
  add("maxntidx", plan.launch.threads);
  add("maxntidy", 1);
  add("maxntidz", 1);
  // ptxas .maxnreg: the option's, or under consumer_registers the CTA's share (KernelPlan::registers)
  const int maxnreg = plan.registers.kernel ? plan.registers.kernel : opts.max_registers;
  if (maxnreg != 0) add("maxnreg", maxnreg);
  if (!plan.launch.tensor_maps.empty()) {
    // The tensor maps stay in the parameter space: TMA reads them through a generic address.
    std::vector<llvm::Metadata*> idx;
    for (size_t m = 0; m < plan.launch.tensor_maps.size(); ++m)
      idx.push_back(llvm::ValueAsMetadata::get(b.getInt32(static_cast<uint32_t>(irf.body.args.size() + m + 1))));
    llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(ctx, "grid_constant"),
                             llvm::MDNode::get(ctx, idx)};
    md->addOperand(llvm::MDNode::get(ctx, ops));
  }
}

std::unique_ptr<llvm::Module> Lowerer::run() {
  build_signature();
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx, "body", fn_);
  b.SetInsertPoint(body);
  if (opts.warp_specialize) {
    lower_roles();
  } else {
    lower_block(irf.body);
    retire();
    b.CreateRetVoid();
  }
  pb_.CreateBr(turn_var_ || !rings_.empty() || !stage_barriers_.empty() ? init_barriers(body) : body);
  finish_shared();
  annotate_kernel();
  return std::move(mod_);
}

void Lowerer::lower_block(const ir::Block& blk, const PipelineState* pipe) {
  for (const auto& op_ptr : blk.ops) {
    const ir::Op& op = *op_ptr;
    if (op.kind == ir::OpKind::Yield) continue;  // lower_for reads it
    if (!producer_lowers(op)) continue;          // producer warps: not among their needs
    if (op.kind == ir::OpKind::For) {
      lower_for(*this, op);
      continue;
    }
    if (op.kind == ir::OpKind::Load && plan.stages_load(op)) continue;  // the dot issues it
    if (const PipelinedOperand* po = op.kind == ir::OpKind::Load && pipe && pipe->plan
                                         ? pipe->plan->prefetch_of(&op)
                                         : nullptr) {
      // Prefetched trips ahead: this thread's own copies of this trip have landed after the
      // wait (no barrier: it reads only what it copied; a dense one's reads follow a barrier
      // in read_prefetched).
      intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {i32(pipe->ahead - 1)});
      llvm::Value* stage = b.CreateGEP(b.getInt8Ty(), pipe->base, b.CreateMul(pipe->read_slot, i32(pipe->stage_bytes)));
      bind(op.results[0], read_prefetched(*this, *po, b.CreateConstGEP1_64(b.getInt8Ty(), stage, po->offset)));
      continue;
    }
    if (op.kind == ir::OpKind::Dot) convert_operands(op, layouts().of_op(op));  // lower_op converts the others'
    std::vector<Regs> r = op.kind == ir::OpKind::Dot ? std::vector<Regs>{lower_dot(*this, op, layouts().of_op(op), pipe)}
                                                     : lower_op(op, layouts().of_op(op));
    for (size_t i = 0; i < op.results.size(); ++i) bind(op.results[i], std::move(r.at(i)));
    if (op.kind == ir::OpKind::Dot && pipe && pipe->plan && pipe->plan->defers(&op)) defer_wgmma(op.results[0]);
  }
  if (pipe) {
    settle_all_wgmma();  // a pipelined trip's deferred groups end with it
    turn_pass();
  }
}

std::vector<Regs> Lowerer::lower_op(const ir::Op& op, const Layout* l) {
  using K = ir::OpKind;
  convert_operands(op, l);
  switch (op.kind) {
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat:
    case K::Broadcast: case K::ExpandDims:
      return {lower_shape(*this, op, l)};
    case K::Cast:
      return {lower_cast(*this, op, l)};
    case K::Exp: case K::Exp2: case K::Log: case K::Log2: case K::Sqrt: case K::Rsqrt: case K::Sin:
    case K::Cos: case K::Tanh: case K::Sigmoid: case K::Erf: case K::Floor: case K::Ceil:
      return {lower_math(*this, op, l)};
    case K::AddPtr: case K::Load: case K::Store:
      return {lower_memory(*this, op, l)};
    case K::Rand: case K::RandN:
      return {lower_random(*this, op, l)};
    case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax: case K::ArgMin: case K::Reduce:
      return {lower_reduce(*this, op, l)};
    case K::CumSum:
      return {lower_scan(*this, op, l)};
    case K::Reshape: case K::Trans:
      return {lower_reshape(*this, op, l)};
    case K::AtomicAdd: case K::AtomicMax:
      return {lower_atomic(*this, op, l)};
    case K::Dot:
      return {lower_dot(*this, op, l, nullptr)};
    case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem: case K::Min: case K::Max: case K::And:
    case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq: case K::CmpNe: case K::CmpLt: case K::CmpLe:
    case K::CmpGt: case K::CmpGe: case K::Neg: case K::Abs: case K::Not: case K::Fma: case K::Select: case K::Hint:
    case K::Bitcast:
      return {lower_elementwise(*this, op, l)};
    case K::Unpack:
      return {lower_unpack(*this, op, l)};
    case K::For: case K::Yield:  // loops are lowered by lower_block
      break;
  }
  // Every kind is listed above, with no default: a kind added to ops.def is a -Wswitch error here.
  ir::unexpected_op(__FILE__, __LINE__, "lower_op", op.kind);
}

}  // namespace tessel::lowering
