// Layout conversion through shared memory: every thread writes its elements, then reads.
#include "lowerer.hpp"

namespace tessel::lowering {

Regs convert_layout(Lowerer& L, const ir::Value* v, const Regs& src, const Layout& from, const Layout& to) {
  const ir::Shape& shape = v->type.shape;
  const ir::DType d = v->type.dtype;
  llvm::Type* mt = L.mem_type(d);
  const int64_t bytes = v->type.numel() * (d.ptr ? 8 : d.bytes());
  llvm::Value* base = L.shared_scratch(bytes);
  auto& b = L.b;
  // The first barrier keeps this write away from the reads of an earlier conversion.
  L.barrier();
  for (int64_t k = 0; k < static_cast<int64_t>(src.size()); ++k) {
    if (!reg_is_owner(from, shape, k)) continue;  // a duplicate register of this thread
    llvm::Value* x = src[k];
    if (d.is_bool()) x = b.CreateZExt(x, mt);
    b.CreateStore(x, b.CreateGEP(mt, base, L.linear_index(from, shape, k)));
  }
  L.barrier();
  const int64_t n = num_regs(to, shape);
  Regs out(n);
  for (int64_t k = 0; k < n; ++k) {
    llvm::Value* x = b.CreateLoad(mt, b.CreateGEP(mt, base, L.linear_index(to, shape, k)));
    out[k] = d.is_bool() ? b.CreateICmpNE(x, llvm::ConstantInt::get(mt, 0)) : x;
  }
  return out;
}

}  // namespace tessel::lowering
