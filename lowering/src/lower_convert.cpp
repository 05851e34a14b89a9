// Layout conversion and other exchanges through shared memory: write, one barrier, read.
#include <algorithm>

#include "lowerer.hpp"

namespace tessel::lowering {

namespace {
int64_t store_bytes(llvm::Type* t) {
  if (t->isPointerTy()) return 8;
  return std::max<int64_t>(1, static_cast<int64_t>(t->getPrimitiveSizeInBits()) / 8);
}
}  // namespace

std::vector<std::vector<llvm::Value*>> exchange_through_smem(Lowerer& L, const std::vector<llvm::Type*>& channels,
                                                             int64_t slots, const std::vector<SmemWrite>& writes,
                                                             llvm::Value* pred, const std::vector<llvm::Value*>& reads) {
  auto& b = L.b;
  const size_t nc = channels.size();
  std::vector<llvm::Type*> mem(nc);
  std::vector<int64_t> offset(nc);
  int64_t bytes = 0;
  // Integers narrower than 32 bits travel as i32: NVPTX extracts lanes of the <2 x i8> loads
  // the load-store vectorizer forms through a stack slot.
  auto narrow_int = [](llvm::Type* t) { return t->isIntegerTy() && t->getIntegerBitWidth() < 32; };
  for (size_t c = 0; c < nc; ++c) {
    mem[c] = narrow_int(channels[c]) ? b.getInt32Ty() : channels[c];
    offset[c] = bytes;
    bytes += (slots * store_bytes(mem[c]) + 15) / 16 * 16;
  }
  Lowerer::SmemBuffer buf = L.smem_begin(bytes);
  std::vector<llvm::Value*> base(nc);
  for (size_t c = 0; c < nc; ++c) base[c] = b.CreateConstGEP1_64(b.getInt8Ty(), buf.base, offset[c]);
  auto store_all = [&] {
    for (const SmemWrite& w : writes)
      for (size_t c = 0; c < nc; ++c) {
        llvm::Value* x = w.values.at(c);
        if (narrow_int(channels[c])) x = b.CreateZExt(x, mem[c]);
        b.CreateStore(x, b.CreateGEP(mem[c], base[c], w.slot));
      }
  };
  if (pred) L.if_then(pred, store_all);
  else store_all();
  L.barrier();
  std::vector<std::vector<llvm::Value*>> out;
  for (llvm::Value* slot : reads) {
    std::vector<llvm::Value*> item;
    for (size_t c = 0; c < nc; ++c) {
      llvm::Value* x = b.CreateLoad(mem[c], b.CreateGEP(mem[c], base[c], slot));
      item.push_back(narrow_int(channels[c]) ? b.CreateTrunc(x, channels[c]) : x);
    }
    out.push_back(std::move(item));
  }
  L.smem_done(buf);
  return out;
}

Regs convert_layout(Lowerer& L, const ir::Value* v, const Regs& src, const Layout& from, const Layout& to) {
  const ir::Shape& shape = v->type.shape;
  std::vector<SmemWrite> writes;
  for (int64_t k = 0; k < static_cast<int64_t>(src.size()); ++k) {
    if (!reg_is_owner(from, shape, k)) continue;  // a duplicate register of this thread
    writes.push_back({L.linear_index(from, shape, k), {src[k]}});
  }
  std::vector<llvm::Value*> reads;
  for (int64_t k = 0, n = num_regs(to, shape); k < n; ++k) reads.push_back(L.linear_index(to, shape, k));
  // Threads holding copies of an element write the same value to the same slot.
  auto got = exchange_through_smem(L, {src.at(0)->getType()}, v->type.numel(), writes, nullptr, reads);
  Regs out;
  for (auto& item : got) out.push_back(item[0]);
  return out;
}

}  // namespace tessel::lowering
