// Layout conversion and other exchanges through shared memory: write, one barrier, read.
#include <algorithm>

#include "lowerer.hpp"
#include "plan/shared_exchange.hpp"

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
  std::vector<int64_t> channel_bytes(nc);
  // Integers narrower than 32 bits travel as i32: NVPTX extracts lanes of the <2 x i8> loads
  // the load-store vectorizer forms through a stack slot.
  auto narrow_int = [](llvm::Type* t) { return t->isIntegerTy() && t->getIntegerBitWidth() < 32; };
  for (size_t c = 0; c < nc; ++c) {
    mem[c] = narrow_int(channels[c]) ? b.getInt32Ty() : channels[c];
    channel_bytes[c] = store_bytes(mem[c]);
  }
  const ExchangeShape shape = exchange_shape(channel_bytes, slots);
  Lowerer::SmemBuffer buf = L.smem_begin(shape.bytes);
  std::vector<llvm::Value*> base(nc);
  for (size_t c = 0; c < nc; ++c) base[c] = b.CreateConstGEP1_64(b.getInt8Ty(), buf.base, shape.offset[c]);
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

namespace {

// Runs of `w` registers holding consecutive elements along the last dim, each starting at a
// multiple of w (some registers of a run may hold copies of elements other threads own).
std::vector<std::vector<int64_t>> runs_of(const Layout& l, const ir::Shape& s, int64_t w) {
  std::vector<std::vector<int64_t>> out;
  const int64_t n = num_regs(l, s), stride = reg_stride(l, s, 1);
  for (int64_t k = 0; k < n; ++k) {
    if (reg_dims(l, s, k)[1] % w != 0) continue;
    std::vector<int64_t> run;
    for (int64_t j = 0; j < w; ++j) run.push_back(k + j * stride);
    out.push_back(std::move(run));
  }
  return out;
}

// A 2-D conversion through padded rows with vector accesses (vector_convertible,
// plan/shared_exchange.hpp): each thread writes its runs of consecutive elements along the last
// dim (the accumulator layouts: 2 per register pair) and reads its runs back in the target
// layout (16 bytes in the default layouts). Rows are padded by 16 bytes, so that threads writing
// down a column (8 rows x 4 lanes per accumulator register) hit different banks; rows stay
// 16-byte aligned. Writes the runs of `from` registers in each chunk of columns, one barrier,
// reads the `to` runs of that chunk, and a barrier before the next chunk's writes.
Regs convert_vectorised(Lowerer& L, const ir::Value* v, const Regs& src, const Layout& from, const Layout& to) {
  auto& b = L.b;
  const ir::Shape& s = v->type.shape;
  llvm::Type* et = src.at(0)->getType();
  const int64_t eb = v->type.dtype.bytes(), pad = 16 / eb;
  const int64_t C = chunk_columns(s, eb, from, to, L.smem_conversion_budget()), row = C + pad;
  Lowerer::SmemBuffer buf = L.smem_begin(s[0] * row * eb);
  // The chunk of a register: its column's, the same in every thread (chunk_columns).
  auto chunk_of = [&](const Layout& l, int64_t k) {
    return reg_dims(l, s, k)[1] / l.size_per_thread[1] * l.footprint(1) / C;
  };
  auto address = [&](const Layout& l, int64_t k, int64_t chunk) {
    std::vector<int64_t> r = reg_dims(l, s, k);
    llvm::Value* col = b.CreateSub(L.coord(l, s, 1, r[1]), L.i32(chunk * C));
    llvm::Value* slot = b.CreateAdd(b.CreateMul(L.coord(l, s, 0, r[0]), L.i32(row)), col);
    return b.CreateGEP(et, buf.base, slot);
  };
  // Runs along dim 1 only (a layout contiguous along dim 0 moves element by element here).
  auto width = [&](const Layout& l) {
    return fastest_tile_dim(l) == 1 ? std::min<int64_t>(contiguous_per_thread(l, s), 16 / eb) : int64_t{1};
  };
  const int64_t wf = width(from), wt = width(to);
  Regs out(static_cast<size_t>(num_regs(to, s)), nullptr);
  for (int64_t chunk = 0; chunk < s[1] / C; ++chunk) {
    if (chunk > 0) L.barrier();  // the previous chunk's reads are done
    for (const auto& run : runs_of(from, s, wf)) {
      if (chunk_of(from, run[0]) != chunk) continue;
      if (!std::all_of(run.begin(), run.end(), [&](int64_t k) { return reg_is_owner(from, s, k); })) {
        for (int64_t k : run)  // some are copies of other registers' elements: the owners one by one
          if (reg_is_owner(from, s, k))
            b.CreateAlignedStore(src.at(k), address(from, k, chunk), llvm::Align(static_cast<uint64_t>(eb)));
        continue;
      }
      llvm::Value* vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(et, static_cast<unsigned>(wf)));
      for (int64_t j = 0; j < wf; ++j) vec = b.CreateInsertElement(vec, src.at(run[j]), b.getInt32(static_cast<unsigned>(j)));
      b.CreateAlignedStore(vec, address(from, run[0], chunk), llvm::Align(static_cast<uint64_t>(wf * eb)));
    }
    L.barrier();
    for (const auto& run : runs_of(to, s, wt)) {
      if (chunk_of(to, run[0]) != chunk) continue;
      auto* vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(wt));
      llvm::Value* vec = b.CreateAlignedLoad(vt, address(to, run[0], chunk), llvm::Align(static_cast<uint64_t>(wt * eb)));
      for (int64_t j = 0; j < wt; ++j) out[run[j]] = b.CreateExtractElement(vec, b.getInt32(static_cast<unsigned>(j)));
    }
  }
  L.smem_done(buf);
  return out;
}

}  // namespace

Regs convert_layout(Lowerer& L, const ir::Value* v, const Regs& src, const Layout& from, const Layout& to) {
  const ir::Shape& shape = v->type.shape;
  if (vector_convertible(v->type) && from.sliced.empty() && to.sliced.empty())
    return convert_vectorised(L, v, src, from, to);
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
