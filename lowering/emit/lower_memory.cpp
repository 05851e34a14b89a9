// Global memory: addptr, vectorised and predicated load and store.
//
// A thread's registers along the tile's last dim that hold consecutive addresses are moved
// by one instruction of up to 16 bytes; the width comes from the axis analysis (pointer
// contiguity and alignment, mask constancy). Unpredicated accesses are plain LLVM vector
// loads and stores (NVPTX emits ld.global.v4.f32 and friends). Predicated ones are inline
// PTX, `@p ld.global.v4.b32 {..}, [addr]` with the `other` values tied to the outputs, so
// masked-off lanes keep `other` and no branch is needed. Stores of replicated tiles are
// predicated to the element's owner thread.
#include <fmt/format.h>
#include <algorithm>
#include <optional>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "tessel/ir/accessors.hpp"
#include "lowerer.hpp"
#include "plan/shared_exchange.hpp"
#include "pipeline.hpp"
#include "plan/access.hpp"

namespace tessel::lowering {
namespace {

// How a vector of `width` elements of `elem_bits` travels through PTX registers.
struct Packing {
  int width = 1;
  int elem_bits = 32;
  int word_bits = 32;  // register width of one PTX operand
  int words = 1;
  bool byte = false;   // 8-bit elements one at a time: u8 through a 16-bit register

  static Packing of(int width, int elem_bits) {
    Packing p{width, elem_bits};
    int total = width * elem_bits;
    p.word_bits = total >= 32 ? (elem_bits == 64 ? 64 : 32) : total;
    if (p.word_bits == 8) {
      p.byte = true;
      p.word_bits = 16;
      p.words = 1;
    } else {
      p.words = total / p.word_bits;
    }
    return p;
  }
  char constraint() const { return word_bits == 64 ? 'l' : word_bits == 32 ? 'r' : 'h'; }
  std::string ptx_type() const { return byte ? "u8" : fmt::format("b{}", word_bits); }
  std::string operands(int first) const {
    if (words == 1) return fmt::format("${}", first);
    std::string s = "{";
    for (int i = 0; i < words; ++i) s += fmt::format("{}${}", i ? ", " : "", first + i);
    return s + "}";
  }
  std::string vec() const { return words > 1 ? fmt::format(".v{}", words) : ""; }
};

llvm::Type* word_type(Lowerer& L, const Packing& p) { return L.b.getIntNTy(p.word_bits); }

// Element values (memory types) -> PTX words.
std::vector<llvm::Value*> pack(Lowerer& L, const Packing& p, const std::vector<llvm::Value*>& elems, llvm::Type* mt) {
  auto& b = L.b;
  if (p.byte) return {b.CreateZExt(elems[0], b.getInt16Ty())};
  llvm::Type* wt = word_type(L, p);
  llvm::Value* vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, p.width));
  for (int i = 0; i < p.width; ++i) vec = b.CreateInsertElement(vec, elems[i], b.getInt32(i));
  if (p.words == 1) return {b.CreateBitCast(vec, wt)};
  llvm::Value* words = b.CreateBitCast(vec, llvm::FixedVectorType::get(wt, p.words));
  std::vector<llvm::Value*> out;
  for (int i = 0; i < p.words; ++i) out.push_back(b.CreateExtractElement(words, b.getInt32(i)));
  return out;
}

// PTX words -> element values (memory types).
std::vector<llvm::Value*> unpack(Lowerer& L, const Packing& p, const std::vector<llvm::Value*>& words, llvm::Type* mt) {
  auto& b = L.b;
  if (p.byte) return {b.CreateTrunc(words[0], mt)};
  llvm::Type* wt = word_type(L, p);
  llvm::Value* wv;
  if (p.words == 1) {
    wv = words[0];
  } else {
    wv = llvm::PoisonValue::get(llvm::FixedVectorType::get(wt, p.words));
    for (int i = 0; i < p.words; ++i) wv = b.CreateInsertElement(wv, words[i], b.getInt32(i));
  }
  llvm::Value* vec = b.CreateBitCast(wv, llvm::FixedVectorType::get(mt, p.width));
  std::vector<llvm::Value*> out;
  for (int i = 0; i < p.width; ++i) out.push_back(b.CreateExtractElement(vec, b.getInt32(i)));
  return out;
}

llvm::Value* as_address(Lowerer& L, llvm::Value* ptr) { return L.b.CreatePtrToInt(ptr, L.b.getInt64Ty()); }

std::vector<llvm::Value*> predicated_load(Lowerer& L, const Packing& p, llvm::Value* ptr, llvm::Value* pred,
                                          const std::vector<llvm::Value*>& other_words) {
  auto& b = L.b;
  const int n = p.words;
  std::string text = fmt::format("@${} ld.global{}.{} {}, [${}];", n + 1, p.vec(), p.ptx_type(), p.operands(0), n);
  std::string cons;
  for (int i = 0; i < n; ++i) cons += fmt::format("={},", p.constraint());
  cons += "l,b";
  for (int i = 0; i < n; ++i) cons += fmt::format(",{}", i);  // tie `other` to the outputs
  llvm::Type* wt = word_type(L, p);
  llvm::Type* ret = wt;
  if (n > 1) ret = llvm::StructType::get(L.ctx, std::vector<llvm::Type*>(n, wt));
  std::vector<llvm::Type*> arg_types{b.getInt64Ty(), b.getInt1Ty()};
  std::vector<llvm::Value*> args{as_address(L, ptr), pred};
  for (int i = 0; i < n; ++i) {
    arg_types.push_back(wt);
    args.push_back(other_words[i]);
  }
  auto* asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(ret, arg_types, false), text, cons,
                                      /*hasSideEffects=*/false);
  llvm::CallInst* call = b.CreateCall(asm_fn, args);
  // Reads memory: keeps it ordered after earlier stores, but lets unused loads go.
  call->setOnlyReadsMemory();
  call->addFnAttr(llvm::Attribute::NoUnwind);
  std::vector<llvm::Value*> words;
  if (n == 1) words.push_back(call);
  else
    for (int i = 0; i < n; ++i) words.push_back(b.CreateExtractValue(call, i));
  return words;
}

void predicated_store(Lowerer& L, const Packing& p, llvm::Value* ptr, llvm::Value* pred,
                      const std::vector<llvm::Value*>& words) {
  auto& b = L.b;
  const int n = p.words;
  std::string text = fmt::format("@$0 st.global{}.{} [$1], {};", p.vec(), p.ptx_type(), p.operands(2));
  std::string cons = "b,l";
  for (int i = 0; i < n; ++i) cons += fmt::format(",{}", p.constraint());
  std::vector<llvm::Type*> arg_types{b.getInt1Ty(), b.getInt64Ty()};
  std::vector<llvm::Value*> args{pred, as_address(L, ptr)};
  for (int i = 0; i < n; ++i) {
    arg_types.push_back(word_type(L, p));
    args.push_back(words[i]);
  }
  auto* asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(b.getVoidTy(), arg_types, false), text, cons,
                                      /*hasSideEffects=*/true);
  b.CreateCall(asm_fn, args)->addFnAttr(llvm::Attribute::NoUnwind);
}

bool is_true(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
  return c && c->isOne();
}

// The widest vector (in elements) the analysis proves safe for this access (plan/access.hpp).
int64_t vector_width(Lowerer& L, const ir::Op& op, const ir::Value* mask, const Layout& l, const ir::Shape& s,
                     int64_t eb) {
  return access_vector_width(L.axis, op.operands[0], mask, l, s, eb);
}

struct Group {
  int64_t first;                // register holding the lowest address
  std::vector<int64_t> members;  // registers in address order
};

std::vector<Group> vector_groups(const Layout& l, const ir::Shape& s, int64_t w) {
  std::vector<Group> out;
  const int fast = fastest_tile_dim(l);
  const int64_t n = num_regs(l, s), stride = reg_stride(l, s, fast);
  for (int64_t k = 0; k < n; ++k) {
    if (reg_dims(l, s, k)[fast] % w != 0) continue;
    Group g{k, {}};
    for (int64_t j = 0; j < w; ++j) g.members.push_back(k + j * stride);
    out.push_back(std::move(g));
  }
  return out;
}

Regs lower_load(Lowerer& L, const ir::Op& op, const Layout* l) {
  ir::LoadOp ld{op};
  auto& b = L.b;
  const ir::DType d = op.results[0]->type.dtype;
  llvm::Type* mt = L.mem_type(d);
  const int64_t eb = d.bytes();
  const int elem_bits = static_cast<int>(eb * 8);
  Regs ptrs = L.operand(op, 0, l);
  Regs mask, other;
  if (ld.mask()) mask = L.operand(op, 1, l);
  if (ld.other()) other = L.operand(op, 2, l);
  auto to_mem = [&](llvm::Value* v) { return d.is_bool() ? b.CreateZExt(v, mt) : v; };
  auto to_reg = [&](llvm::Value* v) { return d.is_bool() ? b.CreateICmpNE(v, llvm::ConstantInt::get(mt, 0)) : v; };

  std::vector<Group> groups;
  int64_t w = 1;
  if (l) {
    const ir::Shape& s = op.results[0]->type.shape;
    w = vector_width(L, op, ld.mask(), *l, s, eb);
    groups = vector_groups(*l, s, w);
  } else {
    groups.push_back(Group{0, {0}});
  }
  Regs out(ptrs.size());
  for (const Group& g : groups) {
    std::vector<llvm::Value*> vals;
    llvm::Value* ptr = ptrs[g.first];
    if (mask.empty()) {
      llvm::Type* t = w == 1 ? mt : llvm::FixedVectorType::get(mt, static_cast<unsigned>(w));
      llvm::Value* v = b.CreateAlignedLoad(t, ptr, llvm::Align(static_cast<uint64_t>(w * eb)));
      if (w == 1) vals.push_back(v);
      else
        for (int64_t j = 0; j < w; ++j) vals.push_back(b.CreateExtractElement(v, b.getInt32(static_cast<uint32_t>(j))));
    } else {
      Packing p = Packing::of(static_cast<int>(w), elem_bits);
      std::vector<llvm::Value*> o;
      for (int64_t m : g.members)
        o.push_back(other.empty() ? llvm::Constant::getNullValue(mt) : to_mem(other[m]));
      vals = unpack(L, p, predicated_load(L, p, ptr, mask[g.first], pack(L, p, o, mt)), mt);
    }
    for (size_t j = 0; j < g.members.size(); ++j) out[g.members[j]] = to_reg(vals[j]);
  }
  return out;
}

// A prefetched load (PipelinedOperand::prefetch, not dense): vector g (vector_groups' order)
// of thread t at base + (g * threads + t) * vec_bytes.
llvm::Value* prefetch_slot(Lowerer& L, const PipelinedOperand& po, llvm::Value* base, int64_t g) {
  auto& b = L.b;
  llvm::Value* idx = b.CreateAdd(L.i32(g * L.program_threads()), L.tid());
  return b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(idx, L.i32(po.vec_bytes)));
}

// Element-by-element reads of a dense prefetch's row-major tile at `base` in layout `l`.
Regs read_dense(Lowerer& L, const ir::Value* v, const Layout& l, llvm::Value* base) {
  auto& b = L.b;
  llvm::Type* mt = L.mem_type(v->type.dtype);
  const int64_t eb = v->type.dtype.bytes();
  Regs out(static_cast<size_t>(num_regs(l, v->type.shape)));
  for (int64_t r = 0; r < static_cast<int64_t>(out.size()); ++r) {
    llvm::Value* at = b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(L.linear_index(l, v->type.shape, r), L.i32(eb)));
    out[r] = b.CreateAlignedLoad(mt, at, llvm::Align(static_cast<uint64_t>(eb)));
  }
  return out;
}

// A dot's accumulator stored from 16-byte vectors, converted through shared memory that costs
// no occupancy (the K loop's freed stages, or room beside pinned rings), as Triton converts its
// accumulators (plan/shared_exchange.hpp). Not in the producer warps.
std::optional<Layout> wider_store_layout(Lowerer& L, const ir::Op& op, const Layout& l) {
  if (L.role == Lowerer::Role::Producer) return std::nullopt;
  return wider_store_layout(L.layouts(), L.axis, op, l, L.smem_conversion_budget());
}

Regs lower_store(Lowerer& L, const ir::Op& op, const Layout* l) {
  ir::StoreOp st{op};
  auto& b = L.b;
  const ir::DType d = st.value()->type.dtype;
  llvm::Type* mt = L.mem_type(d);
  const int64_t eb = d.bytes();
  std::optional<Layout> wide;
  if (l) wide = wider_store_layout(L, op, *l);
  if (wide) l = &*wide;
  Regs ptrs = L.operand(op, 0, l);
  Regs vals = L.operand(op, 1, l);
  Regs mask;
  if (st.mask()) mask = L.operand(op, 2, l);

  std::vector<Group> groups;
  int64_t w = 1;
  llvm::Value* owner;
  if (l) {
    const ir::Shape& s = st.ptr()->type.shape;
    w = vector_width(L, op, st.mask(), *l, s, eb);
    for (Group& g : vector_groups(*l, s, w))
      if (reg_is_owner(*l, s, g.first)) groups.push_back(std::move(g));
    owner = L.thread_owner(*l, s);
  } else {
    groups.push_back(Group{0, {0}});
    owner = b.CreateICmpEQ(L.tid(), L.i32(0));  // a scalar store: one thread writes
  }
  for (const Group& g : groups) {
    llvm::Value* pred = owner;
    if (!mask.empty()) pred = is_true(pred) ? mask[g.first] : b.CreateAnd(pred, mask[g.first]);
    std::vector<llvm::Value*> elems;
    for (int64_t m : g.members) elems.push_back(d.is_bool() ? b.CreateZExt(vals[m], mt) : vals[m]);
    llvm::Value* ptr = ptrs[g.first];
    if (is_true(pred)) {
      llvm::Value* v = elems[0];
      if (w > 1) {
        v = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, static_cast<unsigned>(w)));
        for (int64_t j = 0; j < w; ++j) v = b.CreateInsertElement(v, elems[j], b.getInt32(static_cast<uint32_t>(j)));
      }
      b.CreateAlignedStore(v, ptr, llvm::Align(static_cast<uint64_t>(w * eb)));
    } else {
      Packing p = Packing::of(static_cast<int>(w), static_cast<int>(eb * 8));
      predicated_store(L, p, ptr, pred, pack(L, p, elems, mt));
    }
  }
  return {};
}

}  // namespace

Regs lower_memory(Lowerer& L, const ir::Op& op, const Layout* l) {
  switch (op.kind) {
    case ir::OpKind::AddPtr: {
      Regs p = L.operand(op, 0, l), off = L.operand(op, 1, l);
      llvm::Type* et = L.mem_type(op.results[0]->type.dtype.pointee());
      Regs out(p.size());
      for (size_t k = 0; k < p.size(); ++k) out[k] = L.b.CreateGEP(et, p[k], off[k]);
      return out;
    }
    case ir::OpKind::Load: return lower_load(L, op, l);
    case ir::OpKind::Store: return lower_store(L, op, l);
    case ir::OpKind::Constant: case ir::OpKind::ProgramId: case ir::OpKind::NumPrograms:
    case ir::OpKind::Arange: case ir::OpKind::Splat: case ir::OpKind::Broadcast: case ir::OpKind::ExpandDims:
    case ir::OpKind::Cast: case ir::OpKind::Add: case ir::OpKind::Sub: case ir::OpKind::Mul:
    case ir::OpKind::Div: case ir::OpKind::Rem: case ir::OpKind::Min: case ir::OpKind::Max:
    case ir::OpKind::And: case ir::OpKind::Or: case ir::OpKind::Xor: case ir::OpKind::Shl:
    case ir::OpKind::Shr: case ir::OpKind::CmpEq: case ir::OpKind::CmpNe: case ir::OpKind::CmpLt:
    case ir::OpKind::CmpLe: case ir::OpKind::CmpGt: case ir::OpKind::CmpGe: case ir::OpKind::Neg:
    case ir::OpKind::Abs: case ir::OpKind::Not: case ir::OpKind::Exp: case ir::OpKind::Exp2:
    case ir::OpKind::Log: case ir::OpKind::Log2: case ir::OpKind::Sqrt: case ir::OpKind::Rsqrt:
    case ir::OpKind::Sin: case ir::OpKind::Cos: case ir::OpKind::Tanh: case ir::OpKind::Sigmoid:
    case ir::OpKind::Erf: case ir::OpKind::Floor: case ir::OpKind::Ceil: case ir::OpKind::Fma:
    case ir::OpKind::Select: case ir::OpKind::Rand: case ir::OpKind::RandN: case ir::OpKind::ReduceSum:
    case ir::OpKind::ReduceMax: case ir::OpKind::ReduceMin: case ir::OpKind::ArgMax: case ir::OpKind::ArgMin:
    case ir::OpKind::Reduce: case ir::OpKind::CumSum: case ir::OpKind::Reshape: case ir::OpKind::Trans:
    case ir::OpKind::Dot: case ir::OpKind::AtomicAdd: case ir::OpKind::AtomicMax: case ir::OpKind::For:
    case ir::OpKind::Yield: case ir::OpKind::Hint: case ir::OpKind::Bitcast: case ir::OpKind::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "lower_memory", op.kind);
}

void prefetch_copy(Lowerer& L, const PipelinedOperand& po, llvm::Value* base, const Regs& ptrs, const Regs& mask,
                   llvm::Value* guard) {
  auto& b = L.b;
  const int64_t vec_bytes = po.vec_bytes;
  const ir::Value* v = po.load->results[0];
  const Layout& l = po.dense ? *po.dense : L.layouts().of(v);
  const int64_t eb = v->type.dtype.bytes();
  std::vector<Group> groups = vector_groups(l, v->type.shape, vec_bytes / eb);
  if (po.dense)  // each element once, by its owner, at its row-major place
    groups.erase(std::remove_if(groups.begin(), groups.end(),
                                [&](const Group& g) { return !reg_is_owner(l, v->type.shape, g.first); }),
                 groups.end());
  // A dense copy is made by the owners only: a thread that is not one copies nothing (its size
  // 0 would zero-fill the owner's bytes).
  llvm::BasicBlock* after = nullptr;
  if (po.dense && !is_true(L.thread_owner(l, v->type.shape))) {
    llvm::Function* fn = b.GetInsertBlock()->getParent();
    auto* copy = llvm::BasicBlock::Create(L.ctx, "prefetch.owner", fn);
    after = llvm::BasicBlock::Create(L.ctx, "prefetch.done", fn);
    b.CreateCondBr(L.thread_owner(l, v->type.shape), copy, after);
    b.SetInsertPoint(copy);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    llvm::Value* dst =
        po.dense ? b.CreateGEP(b.getInt8Ty(), base,
                               b.CreateMul(L.linear_index(l, v->type.shape, groups[g].first), L.i32(eb)))
                 : prefetch_slot(L, po, base, static_cast<int64_t>(g));
    const int64_t r = groups[g].first;
    cp_async(L, dst, ptrs[r], vec_bytes, mask.empty() ? nullptr : mask[r], guard);
  }
  if (after) {
    b.CreateBr(after);
    b.SetInsertPoint(after);
  }
}

Regs read_prefetched(Lowerer& L, const PipelinedOperand& po, llvm::Value* base) {
  auto& b = L.b;
  const int64_t vec_bytes = po.vec_bytes;
  const ir::Value* v = po.load->results[0];
  if (po.dense) {
    // Everyone's copies of the trip, then each element at its place in the row-major tile, in
    // the value's layout and in each other layout a user reads it in.
    if (po.barrier_before_read) L.barrier();
    for (const Layout& r : po.reads) L.bind_in(v, r, read_dense(L, v, r, base));
    return read_dense(L, v, L.layouts().of(v), base);
  }
  const Layout& l = L.layouts().of(v);
  const ir::DType d = v->type.dtype;
  llvm::Type* mt = L.mem_type(d);
  const int64_t w = vec_bytes / d.bytes();
  const std::vector<Group> groups = vector_groups(l, v->type.shape, w);
  Regs out(static_cast<size_t>(num_regs(l, v->type.shape)));
  llvm::Type* vt = llvm::FixedVectorType::get(mt, static_cast<unsigned>(w));
  for (size_t g = 0; g < groups.size(); ++g) {
    llvm::Value* x = b.CreateAlignedLoad(vt, prefetch_slot(L, po, base, static_cast<int64_t>(g)),
                                         llvm::Align(static_cast<uint64_t>(vec_bytes)));
    for (size_t j = 0; j < groups[g].members.size(); ++j)
      out[groups[g].members[j]] = b.CreateExtractElement(x, b.getInt32(static_cast<uint32_t>(j)));
  }
  return out;
}

}  // namespace tessel::lowering
