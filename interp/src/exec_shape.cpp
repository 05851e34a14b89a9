// Shape ops, which move elements without changing them: splat, broadcast, expand_dims, reshape, trans.
#include <fmt/format.h>

#include <algorithm>

#include "machine.hpp"

namespace tessel::interp {
namespace {

// The element array of `t` that a value of dtype `d` uses.
template <class F>
void with_elements(const ir::DType& d, const Tile& src, Tile& dst, F&& f) {
  if (holds_floats(d)) f(src.f, dst.f);
  else f(src.i, dst.i);
}

void splat(Machine& m, const ir::Op& op) {
  const ir::Value* v = op.operand(0);
  const ir::Value* r = op.result();
  if (v->type.numel() != 1 || v->type.dtype != r->type.dtype)
    m.malformed(op, fmt::format("cannot splat {} to {}", v->type.str(), r->type.str()));
  with_elements(r->type.dtype, m.in(op, 0), m.out(r),
                [](const auto& s, auto& d) { std::fill(d.begin(), d.end(), s[0]); });
}

// Row-major copy where source dims of size 1 repeat along the result's dims. A source of
// lower rank is aligned to the result's trailing dims.
void broadcast(Machine& m, const ir::Op& op) {
  const ir::Value* v = op.operand(0);
  const ir::Value* r = op.result();
  const ir::Shape& to = r->type.shape;
  ir::Shape from = v->type.shape;
  bool ok = v->type.dtype == r->type.dtype && from.size() <= to.size();
  if (ok) from.insert(from.begin(), to.size() - from.size(), 1);
  for (size_t d = 0; ok && d < to.size(); ++d) ok = from[d] == to[d] || from[d] == 1;
  if (!ok) m.malformed(op, fmt::format("cannot broadcast {} to {}", v->type.str(), r->type.str()));

  size_t rank = to.size();
  std::vector<int64_t> stride(rank, 0);  // source stride per result dim; 0 where repeated
  for (int64_t d = static_cast<int64_t>(rank) - 1, s = 1; d >= 0; --d) {
    stride[d] = from[d] == 1 ? 0 : s;
    s *= from[d];
  }
  with_elements(r->type.dtype, m.in(op, 0), m.out(r), [&](const auto& src, auto& dst) {
    if (rank == 0) {
      dst[0] = src[0];
      return;
    }
    // Walk the outer dims with an odometer; the innermost dim is one tight loop.
    int64_t inner = to[rank - 1], inner_stride = stride[rank - 1];
    std::vector<int64_t> idx(rank, 0);
    int64_t base = 0;  // source offset of the outer index
    for (int64_t out = 0; out < static_cast<int64_t>(dst.size()); out += inner) {
      for (int64_t k = 0; k < inner; ++k) dst[out + k] = src[base + k * inner_stride];
      for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
        base += stride[d];
        if (++idx[d] < to[d]) break;
        base -= stride[d] * to[d];
        idx[d] = 0;
      }
    }
  });
}

void expand_dims(Machine& m, const ir::Op& op) {
  const ir::Value* v = op.operand(0);
  const ir::Value* r = op.result();
  int64_t axis = m.int_attr(op, "axis");
  ir::Shape want = v->type.shape;
  bool ok = axis >= 0 && axis <= static_cast<int64_t>(want.size());
  if (ok) want.insert(want.begin() + axis, 1);
  if (!ok || r->type.shape != want || r->type.dtype != v->type.dtype)
    m.malformed(op, fmt::format("expand_dims of {} at axis {} cannot give {}", v->type.str(), axis,
                                r->type.str()));
  // Inserting a dim of size 1 keeps the row-major element order.
  with_elements(r->type.dtype, m.in(op, 0), m.out(r),
                [](const auto& s, auto& d) { std::copy(s.begin(), s.end(), d.begin()); });
}

// Same elements in the same row-major order, seen with another shape.
void reshape(Machine& m, const ir::Op& op) {
  const ir::Value* v = op.operand(0);
  const ir::Value* r = op.result();
  if (v->type.numel() != r->type.numel() || r->type.dtype != v->type.dtype)
    m.malformed(op, fmt::format("cannot reshape {} to {}", v->type.str(), r->type.str()));
  with_elements(r->type.dtype, m.in(op, 0), m.out(r),
                [](const auto& s, auto& d) { std::copy(s.begin(), s.end(), d.begin()); });
}

// 2-D transpose: result[j, i] = x[i, j].
void trans(Machine& m, const ir::Op& op) {
  const ir::Value* v = op.operand(0);
  const ir::Value* r = op.result();
  const ir::Shape& a = v->type.shape;
  if (a.size() != 2 || r->type != v->type.with_shape(ir::Shape{a[1], a[0]}))
    m.malformed(op, fmt::format("cannot transpose {} to {}", v->type.str(), r->type.str()));
  with_elements(r->type.dtype, m.in(op, 0), m.out(r), [&](const auto& s, auto& d) {
    for (int64_t i = 0; i < a[0]; ++i)
      for (int64_t j = 0; j < a[1]; ++j) d[j * a[0] + i] = s[i * a[1] + j];
  });
}

}  // namespace

void exec_shape(Machine& m, const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::Splat: return splat(m, op);
    case ir::OpKind::Broadcast: return broadcast(m, op);
    case ir::OpKind::ExpandDims: return expand_dims(m, op);
    case ir::OpKind::Reshape: return reshape(m, op);
    case ir::OpKind::Trans: return trans(m, op);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "exec_shape on " + std::string(op.name()));
}

}  // namespace tessel::interp
