// unpack: bit fields of u8/u16/u32 words as elements, each thread expanding the words it holds.
//
// The result's layout is the words' with `count` times longer runs along the axis
// (layout_assignment), so result register r along the axis (rep * spt + w) is field w % count
// of word register rep * spt / count + w / count, and no data moves between threads. In the
// lane-split form (a register-B dot's mma fragments: two fields per lane, four lanes per word)
// the lanes share the words and each takes its own fields (lower_unpack_lane_split).
// To f16 / bf16 from u32 words with fields of at most 8 (f16) or 4 (bf16) bits, two fields
// become one f16x2 / bf16x2 in two instructions (Kim et al., "Who says elephants can't run"):
//   (word >> s) & (field mask in both halves) | 0x6400 in both halves (one lop3) -> 1024 + x, 1024 + y
// then one subtraction of 1024 (bf16: 0x4300, 128) from both halves: exact, no I2F. A zero
// point is subtracted in the same instruction. In the lane-split form a lane's two adjacent
// f16 nibbles are a byte permute and a mask-and-or, then one f16x2 fma (nibble_pair). Where a
// thread holds neighbouring words along the tile's other dim (W4A16's weights at large M), the
// f16 nibbles of two words are unpacked together (cross_nibbles), each f16x2 then two
// neighbours along that dim, as the scaling and the row-wise stores into a stage want them.
#include <array>

#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"

namespace tessel::lowering {
namespace {

// Field j of `word` minus `zero` as an element of `to` (the generic path: shift, mask,
// subtract, convert).
llvm::Value* field_as(Lowerer& L, llvm::Value* word, int j, int bits, int64_t zero, ir::DType to) {
  auto& b = L.b;
  llvm::Type* wt = word->getType();
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  llvm::Value* f = b.CreateAnd(b.CreateLShr(word, llvm::ConstantInt::get(wt, static_cast<uint64_t>(j * bits))),
                               llvm::ConstantInt::get(wt, mask));
  llvm::Type* tt = L.reg_type(to);
  if (zero != 0) {  // a signed or float result (verifier): the difference fits the word signed
    f = b.CreateSub(f, llvm::ConstantInt::get(wt, static_cast<uint64_t>(zero)));
    return to.is_float() ? b.CreateSIToFP(f, tt) : b.CreateSExtOrTrunc(f, tt);
  }
  if (to.is_float()) return b.CreateUIToFP(f, tt);
  return b.CreateZExtOrTrunc(f, tt);
}

// (x & mask) | magic in one lop3 whose magic is a register operand: LLVM's and + or of two
// constants become two LOP3s in ptxas (one immediate each), this one instruction.
llvm::Value* mask_or(Lowerer& L, llvm::Value* x, uint32_t mask, uint32_t magic) {
  auto& b = L.b;
  auto* fty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty(), b.getInt32Ty()}, false);
  // The truth table of (a & b) | c: a = 0xF0, b = 0xCC, c = 0xAA.
  const std::string text = fmt::format("lop3.b32 $0, $1, {:#010x}, $2, 0xea;", mask);
  auto* call = b.CreateCall(llvm::InlineAsm::get(fty, text, "=r,r,r", false), {x, b.getInt32(magic)});
  call->setDoesNotAccessMemory();
  return call;
}

// Two fields at bits 0 and 16 of `x & mask` (each below 2^bits) minus `zero`, as (lo, hi) by
// the magic number: one lop3 keeps them under the exponent bits of 1024 (bf16: 128) in both
// halves, then one f16x2 / bf16x2 subtraction of (magic + zero) gives x - zero exactly (both
// terms and the difference are integers the format holds).
std::pair<llvm::Value*, llvm::Value*> magic_pair(Lowerer& L, llvm::Value* x, uint32_t mask, int64_t zero, ir::DType to) {
  auto& b = L.b;
  const bool f16 = to.scalar == ir::Scalar::f16;
  const uint32_t magic = f16 ? 0x6400u : 0x4300u;  // 1024.0 in f16, 128.0 in bf16
  llvm::Value* v = mask_or(L, x, mask, magic * 0x00010001u);
  llvm::Type* ht = L.reg_type(to);
  llvm::Value* h2 = b.CreateBitCast(v, llvm::FixedVectorType::get(ht, 2));
  llvm::Value* bias = llvm::ConstantFP::get(llvm::FixedVectorType::get(ht, 2), (f16 ? 1024.0 : 128.0) + zero);
  llvm::Value* d = b.CreateFSub(h2, bias);
  return {b.CreateExtractElement(d, uint64_t{0}), b.CreateExtractElement(d, uint64_t{1})};
}

// Fields j and j + count / 2 of a u32 word minus `zero`, as (lo, hi): one shift and one mask
// put them at bits 0 and 16.
std::pair<llvm::Value*, llvm::Value*> field_pair(Lowerer& L, llvm::Value* word, int j, int bits, int64_t zero,
                                                 ir::DType to) {
  auto& b = L.b;
  const uint32_t mask = ((1u << bits) - 1) * 0x00010001u;
  llvm::Value* shifted = j == 0 ? word : b.CreateLShr(word, b.getInt32(static_cast<uint32_t>(j * bits)));
  return magic_pair(L, shifted, mask, zero, to);
}

// Fields 0 and 1 of `x` minus `zero`, as (lo, hi): field 1 moves to the high half.
std::pair<llvm::Value*, llvm::Value*> adjacent_pair(Lowerer& L, llvm::Value* x, int bits, int64_t zero, ir::DType to) {
  auto& b = L.b;
  const uint32_t mask = (1u << bits) - 1;
  llvm::Value* lo = b.CreateAnd(x, b.getInt32(mask));
  llvm::Value* hi = b.CreateAnd(b.CreateShl(x, b.getInt32(static_cast<uint32_t>(16 - bits))), b.getInt32(mask << 16));
  return magic_pair(L, b.CreateOr(lo, hi), 0xFFFFFFFFu, zero, to);
}

// Fields f and f + 1 (f even, the lane's: a runtime value) of a u32 word of 4-bit fields minus
// `zero`, as f16 (lo, hi). `sel` = (f / 2) * 0x0101, the byte permute's selector (its nibble i
// picks the source byte of result byte i; bytes 1 and 3 are masked) copying byte f / 2 to bytes
// 0 and 2; one mask-and-or keeps the low nibble of one and the high nibble of the other under
// the exponent bits of 1024, one f16x2 fma ends it:
//   v = (1024 + x, 1024 + 16 y)  ->  v * (1, 1/16) - (1024 + zero, 64 + zero) = (x - zero, y - zero)
// Every step is exact (integers below 2048 in f16, a power-of-two scaling, one rounding of an
// exact result).
std::pair<llvm::Value*, llvm::Value*> nibble_pair(Lowerer& L, llvm::Value* word, llvm::Value* sel, int64_t zero) {
  auto& b = L.b;
  llvm::Value* bytes = L.intrinsic(llvm::Intrinsic::nvvm_prmt, {}, {word, word, sel});
  llvm::Value* v = mask_or(L, bytes, 0x00F0000Fu, 0x64006400u);
  llvm::Type* h = L.reg_type(ir::DType{ir::Scalar::f16});
  llvm::Type* h2 = llvm::FixedVectorType::get(h, 2);
  auto pair = [&](double lo, double hi) {
    return llvm::ConstantVector::get({llvm::ConstantFP::get(h, lo), llvm::ConstantFP::get(h, hi)});
  };
  const double z = static_cast<double>(zero);
  llvm::Value* x = b.CreateIntrinsic(llvm::Intrinsic::fma, {h2},
                                     {b.CreateBitCast(v, h2), pair(1.0, 1.0 / 16.0), pair(-1024.0 - z, -64.0 - z)});
  return {b.CreateExtractElement(x, uint64_t{0}), b.CreateExtractElement(x, uint64_t{1})};
}

// Fields 2b and 2b + 1 (the nibbles of byte b) of two u32 words of 4-bit fields minus `zero`,
// as f16: ((lo of w0, lo of w1), (hi of w0, hi of w1)), each pair one f16x2 of the two words'
// elements. The byte permute copies byte b of w0 to bytes 0 and 1 and byte b of w1 to bytes 2
// and 3; one mask-and-or keeps the low nibbles under 1024's exponent bits, another the high
// nibbles (1024 + 16 y), and one f16x2 subtraction and one fma end them:
//   (1024 + x0, 1024 + x1) - (1024 + zero);   (1024 + 16 y0, 1024 + 16 y1) / 16 - (64 + zero)
// All exact, as in nibble_pair. The words are neighbours along the tile's other dim, so each
// pair holds two neighbouring elements of the same field row: what the scaling by a row of
// scales and the stores of a row take as they are (no halves to regroup).
std::array<std::pair<llvm::Value*, llvm::Value*>, 2> cross_nibbles(Lowerer& L, llvm::Value* w0, llvm::Value* w1, int b,
                                                                   int64_t zero) {
  auto& bld = L.b;
  const uint32_t sel = static_cast<uint32_t>(b * 0x11 + (4 + b) * 0x1100);
  llvm::Value* bytes = L.intrinsic(llvm::Intrinsic::nvvm_prmt, {}, {w0, w1, bld.getInt32(sel)});
  llvm::Type* h = L.reg_type(ir::DType{ir::Scalar::f16});
  llvm::Type* h2 = llvm::FixedVectorType::get(h, 2);
  const double z = static_cast<double>(zero);
  auto both = [&](double v) { return llvm::ConstantFP::get(h2, v); };
  llvm::Value* lo = bld.CreateFSub(bld.CreateBitCast(mask_or(L, bytes, 0x000F000Fu, 0x64006400u), h2), both(1024.0 + z));
  llvm::Value* hi = bld.CreateIntrinsic(
      llvm::Intrinsic::fma, {h2},
      {bld.CreateBitCast(mask_or(L, bytes, 0x00F000F0u, 0x64006400u), h2), both(1.0 / 16.0), both(-64.0 - z)});
  auto split = [&](llvm::Value* v) {
    return std::pair{bld.CreateExtractElement(v, uint64_t{0}), bld.CreateExtractElement(v, uint64_t{1})};
  };
  return {split(lo), split(hi)};
}

// The lane-split form (is_lane_split_unpack): the t lanes along the axis hold the same words
// (unpack_operand_layout), and lane c of them takes fields c*s .. c*s + s - 1 of each (s: the
// result's run along the axis). Result register (rep, w) along the axis is field c*s + w of
// word register rep: the word shifted right by c*s*bits once, then its fields 0 .. s-1.
Regs lower_unpack_lane_split(Lowerer& L, const ir::Op& op, const Layout& l, const Regs& words, const Layout& wl) {
  auto& b = L.b;
  const ir::Value* x = op.operands[0];
  const ir::Type& rt = op.results[0]->type;
  const int axis = static_cast<int>(op.int_attr("axis"));
  const int bits = static_cast<int>(op.int_attr("bits"));
  const int64_t zero = op.has_attr("zero") ? op.int_attr("zero") : 0;
  const int p = l.parent_dim(axis);
  const int s = l.size_per_thread[p];
  const ir::DType to = rt.dtype;
  const bool pairs = s % 2 == 0 && ir::bit_width(x->type.dtype.scalar) == 32 &&
                     ((to.scalar == ir::Scalar::f16 && bits <= 8) || (to.scalar == ir::Scalar::bf16 && bits <= 4));
  // f16 from 4-bit fields of u32 words (a zero point is a field value): the byte-permute form,
  // no shifts.
  const bool permute = pairs && to.scalar == ir::Scalar::f16 && bits == 4 && zero >= 0 && zero < 16;
  llvm::Type* wt = words.at(0)->getType();
  llvm::Value* lane = L.thread_coord(l, p);
  llvm::Value* shift = b.CreateZExtOrTrunc(b.CreateMul(lane, L.i32(s * bits)), wt);
  // The permute's selector of pair j / 2: byte (lane * s + j) / 2 to bytes 0 and 2.
  std::vector<llvm::Value*> sel;
  if (permute)
    for (int j = 0; j < s; j += 2)
      sel.push_back(b.CreateMul(b.CreateAdd(b.CreateMul(lane, L.i32(s / 2)), L.i32(j / 2)), L.i32(0x0101)));
  std::vector<std::vector<llvm::Value*>> fields(words.size());
  const int64_t n = num_regs(l, rt.shape);
  Regs out(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    std::vector<int64_t> rd = reg_dims(l, rt.shape, k);
    const int64_t w = rd[axis] % s;
    rd[axis] /= s;
    const int64_t wk = reg_index(wl, x->type.shape, rd);
    auto& f = fields.at(static_cast<size_t>(wk));
    if (f.empty()) {
      f.resize(static_cast<size_t>(s));
      if (permute) {
        for (int j = 0; j < s; j += 2)
          std::tie(f[j], f[j + 1]) = nibble_pair(L, words[wk], sel[static_cast<size_t>(j / 2)], zero);
        out[k] = f[static_cast<size_t>(w)];
        continue;
      }
      llvm::Value* mine = b.CreateLShr(words[wk], shift);
      for (int j = 0; j < s; j += pairs ? 2 : 1) {
        llvm::Value* y = j == 0 ? mine : b.CreateLShr(mine, llvm::ConstantInt::get(wt, static_cast<uint64_t>(j * bits)));
        if (pairs) std::tie(f[j], f[j + 1]) = adjacent_pair(L, y, bits, zero, to);
        else f[j] = field_as(L, y, 0, bits, zero, to);
      }
    }
    out[k] = f[static_cast<size_t>(w)];
  }
  return out;
}

}  // namespace

Regs lower_unpack(Lowerer& L, const ir::Op& op, const Layout* l) {
  if (op.kind != ir::OpKind::Unpack) ir::unexpected_op(__FILE__, __LINE__, "lower_unpack", op.kind);
  TESSEL_ASSERT(l != nullptr, "unpack of a scalar");
  const ir::Value* x = op.operands[0];
  const ir::Type& rt = op.results[0]->type;
  const int axis = static_cast<int>(op.int_attr("axis"));
  const int bits = static_cast<int>(op.int_attr("bits"));
  const int count = unpack_count(op);
  const int64_t zero = op.has_attr("zero") ? op.int_attr("zero") : 0;
  // The plan's result layout keeps a word's fields in one thread, so the operand has one.
  const Regs words = L.operand(op, 0, l);
  const Layout wl = *operand_layout(op, 0, *l);
  if (is_lane_split_unpack(*l, axis, count)) return lower_unpack_lane_split(L, op, *l, words, wl);
  const int64_t spt = l->size_per_thread[l->parent_dim(axis)];  // result elements per run
  const int64_t n = num_regs(*l, rt.shape);
  const ir::DType to = rt.dtype;
  const bool pairs = ir::bit_width(x->type.dtype.scalar) == 32 &&
                     ((to.scalar == ir::Scalar::f16 && bits <= 8) || (to.scalar == ir::Scalar::bf16 && bits <= 4));
  // f16 from eight 4-bit fields of u32 words where each thread holds neighbouring words along
  // the other dim of a 2-d tile (an even run there): the fields of two such words at a time
  // (cross_nibbles), each f16x2 two neighbours along that dim.
  const int other = 1 - axis;
  const bool across = pairs && to.scalar == ir::Scalar::f16 && bits == 4 && count == 8 && zero >= 0 && zero < 16 &&
                      rt.shape.size() == 2 && !l->is_sliced(l->parent_dim(other)) &&
                      l->size_per_thread[l->parent_dim(other)] % 2 == 0;
  // Each word's fields, made once: word register -> its `count` field values.
  std::vector<std::vector<llvm::Value*>> fields(words.size());
  Regs out(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    std::vector<int64_t> rd = reg_dims(*l, rt.shape, k);
    const int64_t rep = rd[axis] / spt, w = rd[axis] % spt;
    rd[axis] = rep * (spt / count) + w / count;
    const int64_t wk = reg_index(wl, x->type.shape, rd);
    const int j = static_cast<int>(w % count);
    auto& f = fields.at(static_cast<size_t>(wk));
    if (f.empty()) {
      f.resize(static_cast<size_t>(count));
      if (across) {
        // The word beside this one along the other dim (its register differs in the lowest bit
        // there: runs along it are even), and both words' fields at once.
        std::vector<int64_t> nd = rd;
        nd[other] ^= 1;
        const int64_t wn = reg_index(wl, x->type.shape, nd);
        auto& g = fields.at(static_cast<size_t>(wn));
        g.resize(static_cast<size_t>(count));
        const bool first = rd[other] % 2 == 0;
        llvm::Value* w0 = words[first ? wk : wn];
        llvm::Value* w1 = words[first ? wn : wk];
        auto& f0 = first ? f : g;
        auto& f1 = first ? g : f;
        for (int byte = 0; byte < count / 2; ++byte) {
          const auto [lo, hi] = cross_nibbles(L, w0, w1, byte, zero);
          std::tie(f0[2 * byte], f1[2 * byte]) = lo;
          std::tie(f0[2 * byte + 1], f1[2 * byte + 1]) = hi;
        }
      } else if (pairs) {
        for (int p = 0; p < count / 2; ++p) std::tie(f[p], f[p + count / 2]) = field_pair(L, words[wk], p, bits, zero, to);
      } else {
        for (int p = 0; p < count; ++p) f[p] = field_as(L, words[wk], p, bits, zero, to);
      }
    }
    out[k] = f[static_cast<size_t>(j)];
  }
  return out;
}

}  // namespace tessel::lowering
