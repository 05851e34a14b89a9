// Memory ops: addptr, load/store and atomics, with masks, bounds, alignment and writability checks.
#include <cstring>

#include "elementwise.hpp"

namespace tessel::interp {
namespace {

using ir::Scalar;

void addptr(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  require_same_numel(m, op, r->type.numel());
  const ir::DType p = op.operand(0)->type.dtype;
  if (!p.ptr || r->type.dtype != p || !op.operand(1)->type.dtype.is_int())
    m.malformed(op, fmt::format("addptr needs (ptr, int), got ({}, {})", op.operand(0)->type.str(),
                                op.operand(1)->type.str()));
  const uint64_t size = static_cast<uint64_t>(p.pointee().bytes());
  const std::vector<int64_t>& base = m.in(op, 0).i;
  const std::vector<int64_t>& off = m.in(op, 1).i;
  std::vector<int64_t>& out = m.out(r).i;
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = static_cast<int64_t>(static_cast<uint64_t>(base[k]) + static_cast<uint64_t>(off[k]) * size);
}

inline const void* host(int64_t addr) { return reinterpret_cast<const void*>(static_cast<uintptr_t>(addr)); }

// Reads elements stored as `Mem` in memory into slots of type `Slot` through `decode`.
template <class Mem, class Slot, class Decode>
void load_as(Machine& m, const ir::Op& op, std::vector<Slot> Tile::*member, Decode decode) {
  const std::vector<int64_t>& ptr = m.in(op, 0).i;
  const std::vector<int64_t>* mask = op.num_operands() > 1 ? &m.in(op, 1).i : nullptr;
  const std::vector<Slot>* other = op.num_operands() > 2 ? &(m.in(op, 2).*member) : nullptr;
  std::vector<Slot>& out = m.out(op.result()).*member;
  for (size_t k = 0; k < out.size(); ++k) {
    if (mask && !(*mask)[k]) {
      out[k] = other ? (*other)[k] : Slot{0};
      continue;
    }
    m.check_access(op, static_cast<int64_t>(k), static_cast<uint64_t>(ptr[k]), sizeof(Mem),
                   /*write=*/false, mask != nullptr);
    Mem v;
    std::memcpy(&v, host(ptr[k]), sizeof(Mem));
    out[k] = decode(v);
  }
}

// Writes slots of type `Slot` as `Mem` through `encode`, skipping masked-off elements.
template <class Mem, class Slot, class Encode>
void store_as(Machine& m, const ir::Op& op, std::vector<Slot> Tile::*member, Encode encode) {
  const std::vector<int64_t>& ptr = m.in(op, 0).i;
  const std::vector<Slot>& val = m.in(op, 1).*member;
  const std::vector<int64_t>* mask = op.num_operands() > 2 ? &m.in(op, 2).i : nullptr;
  for (size_t k = 0; k < val.size(); ++k) {
    if (mask && !(*mask)[k]) continue;
    m.check_access(op, static_cast<int64_t>(k), static_cast<uint64_t>(ptr[k]), sizeof(Mem),
                   /*write=*/true, mask != nullptr);
    Mem v = encode(val[k]);
    std::memcpy(const_cast<void*>(host(ptr[k])), &v, sizeof(Mem));
  }
}

// Calls f(Mem{}, member, decode, encode) with the memory representation of `s`.
template <class F>
void with_memory_type(Scalar s, F&& f) {
  auto id_i = [](auto v) { return static_cast<int64_t>(v); };
  auto id_f = [](auto v) { return static_cast<double>(v); };
  switch (s) {
    case Scalar::i1:
      return f(uint8_t{}, &Tile::i, [](uint8_t v) { return int64_t{v != 0}; },
               [](int64_t v) { return static_cast<uint8_t>(v != 0); });
    case Scalar::i8: return f(int8_t{}, &Tile::i, id_i, [](int64_t v) { return static_cast<int8_t>(v); });
    case Scalar::i16: return f(int16_t{}, &Tile::i, id_i, [](int64_t v) { return static_cast<int16_t>(v); });
    case Scalar::i32: return f(int32_t{}, &Tile::i, id_i, [](int64_t v) { return static_cast<int32_t>(v); });
    case Scalar::i64: return f(int64_t{}, &Tile::i, id_i, [](int64_t v) { return v; });
    case Scalar::f16: return f(uint16_t{}, &Tile::f, f16_to_double, f16_from_double);
    case Scalar::bf16: return f(uint16_t{}, &Tile::f, bf16_to_double, bf16_from_double);
    case Scalar::f32: return f(float{}, &Tile::f, id_f, [](double v) { return static_cast<float>(v); });
    case Scalar::f64: return f(double{}, &Tile::f, id_f, [](double v) { return v; });
    case Scalar::u8: return f(uint8_t{}, &Tile::i, id_i, [](int64_t v) { return static_cast<uint8_t>(v); });
    case Scalar::u16: return f(uint16_t{}, &Tile::i, id_i, [](int64_t v) { return static_cast<uint16_t>(v); });
    case Scalar::u32: return f(uint32_t{}, &Tile::i, id_i, [](int64_t v) { return static_cast<uint32_t>(v); });
    case Scalar::u64: return f(uint64_t{}, &Tile::i, id_i, [](int64_t v) { return static_cast<uint64_t>(v); });
    case Scalar::f8e4m3: return f(uint8_t{}, &Tile::f, f8e4m3_to_double, f8e4m3_from_double);
    case Scalar::f8e5m2: return f(uint8_t{}, &Tile::f, f8e5m2_to_double, f8e5m2_from_double);
  }
}

void load(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  require_same_numel(m, op, r->type.numel());
  const ir::DType p = op.operand(0)->type.dtype;
  bool ok = p.ptr && r->type.dtype == p.pointee();
  if (op.num_operands() > 1) ok = ok && op.operand(1)->type.dtype.is_bool();
  if (op.num_operands() > 2) ok = ok && op.operand(2)->type.dtype == r->type.dtype;
  if (!ok) m.malformed(op, fmt::format("load of {} into {} with a bad pointer, mask or other",
                                       op.operand(0)->type.str(), r->type.str()));
  with_memory_type(r->type.dtype.scalar, [&](auto mem, auto member, auto decode, auto) {
    load_as<decltype(mem)>(m, op, member, decode);
  });
}

void store(Machine& m, const ir::Op& op) {
  require_same_numel(m, op, op.operand(0)->type.numel());
  const ir::DType p = op.operand(0)->type.dtype;
  bool ok = p.ptr && op.operand(1)->type.dtype == p.pointee();
  if (op.num_operands() > 2) ok = ok && op.operand(2)->type.dtype.is_bool();
  if (!ok) m.malformed(op, fmt::format("store of {} through {} with a bad value or mask",
                                       op.operand(1)->type.str(), op.operand(0)->type.str()));
  with_memory_type(p.scalar, [&](auto mem, auto member, auto, auto encode) {
    store_as<decltype(mem)>(m, op, member, encode);
  });
}

// Sequential read-modify-write per element, in element order (so duplicate addresses within
// one tile each apply); result = the old values, 0 where masked off. Checked like a store.
template <class Mem, class Slot, class Decode, class Encode, class Combine>
void atomic_as(Machine& m, const ir::Op& op, std::vector<Slot> Tile::*member, Decode decode, Encode encode,
               Combine combine) {
  const std::vector<int64_t>& ptr = m.in(op, 0).i;
  const std::vector<Slot>& val = m.in(op, 1).*member;
  const std::vector<int64_t>* mask = op.num_operands() > 2 ? &m.in(op, 2).i : nullptr;
  std::vector<Slot>& out = m.out(op.result()).*member;
  for (size_t k = 0; k < val.size(); ++k) {
    if (mask && !(*mask)[k]) {
      out[k] = Slot{0};
      continue;
    }
    m.check_access(op, static_cast<int64_t>(k), static_cast<uint64_t>(ptr[k]), sizeof(Mem),
                   /*write=*/true, mask != nullptr);
    Mem v;
    std::memcpy(&v, host(ptr[k]), sizeof(Mem));
    out[k] = decode(v);
    Mem nv = encode(combine(out[k], val[k]));
    std::memcpy(const_cast<void*>(host(ptr[k])), &nv, sizeof(Mem));
  }
}

void atomic(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  require_same_numel(m, op, op.operand(0)->type.numel());
  const ir::DType p = op.operand(0)->type.dtype;
  bool ok = p.ptr && op.operand(1)->type.dtype == p.pointee() && r->type.dtype == p.pointee();
  if (op.num_operands() > 2) ok = ok && op.operand(2)->type.dtype.is_bool();
  if (!ok) m.malformed(op, fmt::format("{} of {} through {} with a bad value, mask or result", op.name(),
                                       op.operand(1)->type.str(), op.operand(0)->type.str()));
  const bool add = op.kind == ir::OpKind::AtomicAdd;
  const int w = bit_width(p.scalar);
  with_memory_type(p.scalar, [&](auto mem, auto member, auto decode, auto encode) {
    using Mem = decltype(mem);
    using Slot = typename std::remove_reference_t<decltype(Tile{}.*member)>::value_type;
    if constexpr (std::is_same_v<Slot, double>)  // rounded to the element type by `encode`
      atomic_as<Mem>(m, op, member, decode, encode, [add](double a, double b) { return add ? a + b : nan_max(a, b); });
    else
      atomic_as<Mem>(m, op, member, decode, encode, [add, w](int64_t a, int64_t b) {
        return add ? wrap_int(wrapping_add(a, b), w) : (b > a ? b : a);
      });
  });
}

}  // namespace

void exec_atomic(Machine& m, const ir::Op& op) {
  if (op.kind == ir::OpKind::AtomicAdd || op.kind == ir::OpKind::AtomicMax) return atomic(m, op);
  internal_error(__FILE__, __LINE__, "exec_atomic on " + std::string(op.name()));
}

void exec_memory(Machine& m, const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::AddPtr: return addptr(m, op);
    case ir::OpKind::Load: return load(m, op);
    case ir::OpKind::Store: return store(m, op);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "exec_memory on " + std::string(op.name()));
}

}  // namespace tessel::interp
