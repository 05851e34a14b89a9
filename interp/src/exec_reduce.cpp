// Reductions along one axis (sum, max, min, argmax, argmin, the generic reduce) and cumsum.
//
// Order. Every reduction combines the elements of one row (the elements along `axis` at a
// fixed position of the other dims) in one fixed pairwise tree: adjacent pairs
// (x0 . x1), (x2 . x3), ... first, then adjacent pairs of those, up to the root, with the
// left operand always the lower-index side. The GPU combines in its own order, so float
// sums agree only up to rounding. cumsum adds left to right. Every combine rounds (floats)
// or wraps (integers) to the dtype, so an f16 sum accumulates in f16.
#include <cmath>

#include "elementwise.hpp"

namespace tessel::interp {
namespace {

using ir::OpKind;

// How the row-major elements of a tile split around `axis`: element (o, k, i) with o over the
// dims before the axis, k along it and i over the dims after lies at (o * len + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit split_at(Machine& m, const ir::Op& op, int64_t axis) {
  const ir::Type& t = op.operand(0)->type;
  if (axis < 0 || axis >= t.rank())
    m.malformed(op, fmt::format("axis {} is out of range for {}", axis, t.str()));
  AxisSplit s;
  for (int d = 0; d < t.rank(); ++d) {
    if (d < axis) s.outer *= t.shape[d];
    else if (d == axis) s.len = t.shape[d];
    else s.inner *= t.shape[d];
  }
  return s;
}

// Folds row[0..n) in place in the pairwise tree described above; returns the root.
template <class T, class F>
T tree_fold(std::vector<T>& row, F&& combine) {
  size_t n = row.size();
  while (n > 1) {
    size_t half = n / 2;
    for (size_t k = 0; k < half; ++k) row[k] = combine(row[2 * k], row[2 * k + 1]);
    if (n % 2) row[half++] = row[n - 1];  // only for non-power-of-two rows: carried up as is
    n = half;
  }
  return row[0];
}

// result[o, i] = tree_fold(x[o, :, i]) for elements of type T (double or int64_t).
template <class T, class F>
void reduce_rows(Machine& m, const ir::Op& op, std::vector<T> Tile::*member, F&& combine) {
  const AxisSplit s = split_at(m, op, m.int_attr(op, "axis"));
  const std::vector<T>& x = m.in(op, 0).*member;
  std::vector<T>& out = m.out(op.result()).*member;
  std::vector<T> row(static_cast<size_t>(s.len));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      for (int64_t k = 0; k < s.len; ++k) row[k] = x[(o * s.len + k) * s.inner + i];
      out[o * s.inner + i] = tree_fold(row, combine);
    }
}

void require_reduced_type(Machine& m, const ir::Op& op, ir::DType want) {
  const ir::Type& a = op.operand(0)->type;
  int64_t axis = m.int_attr(op, "axis");
  ir::Shape s = a.shape;
  if (axis >= 0 && axis < a.rank()) s.erase(s.begin() + axis);
  if (a.dtype.ptr || op.result()->type != ir::Type{want, s})
    m.malformed(op, fmt::format("reducing {} along axis {} cannot give {}", a.str(), axis,
                                op.result()->type.str()));
}

void reduce_builtin(Machine& m, const ir::Op& op) {
  const ir::DType d = op.operand(0)->type.dtype;
  require_reduced_type(m, op, d);
  if (d.is_float()) {
    with_rounding(d.scalar, [&](auto round) {
      switch (op.kind) {
        case OpKind::ReduceSum: return reduce_rows(m, op, &Tile::f, [&](double a, double b) { return round(a + b); });
        case OpKind::ReduceMax: return reduce_rows(m, op, &Tile::f, nan_max);
        default: return reduce_rows(m, op, &Tile::f, nan_min);
      }
    });
    return;
  }
  const ir::Scalar ws = d.scalar;
  // Unsigned slots hold values below 2^width, except u64's bit patterns: compare those unsigned.
  const bool u64 = ws == ir::Scalar::u64;
  auto less = [u64](int64_t a, int64_t b) {
    return u64 ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
  };
  switch (op.kind) {
    case OpKind::ReduceSum:
      return reduce_rows(m, op, &Tile::i, [&](int64_t a, int64_t b) { return wrap_to(wrapping_add(a, b), ws); });
    case OpKind::ReduceMax: return reduce_rows(m, op, &Tile::i, [&](int64_t a, int64_t b) { return less(a, b) ? b : a; });
    default: return reduce_rows(m, op, &Tile::i, [&](int64_t a, int64_t b) { return less(b, a) ? b : a; });
  }
}

// Index of the max (min) along the axis: ties keep the smallest index, and NaN beats every
// number (argmax: NaN is the largest; argmin: NaN is the smallest), so the first NaN wins.
template <class T>
void arg_rows(Machine& m, const ir::Op& op, const std::vector<T>& x, bool want_max) {
  const AxisSplit s = split_at(m, op, m.int_attr(op, "axis"));
  std::vector<int64_t>& out = m.out(op.result()).i;
  auto beats = [want_max](T a, T b) {  // does a replace the current best b?
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(b)) return false;
      if (std::isnan(a)) return true;
    }
    return want_max ? a > b : a < b;
  };
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < s.len; ++k)
        if (beats(x[(o * s.len + k) * s.inner + i], x[(o * s.len + best) * s.inner + i])) best = k;
      out[o * s.inner + i] = best;
    }
}

void arg_reduce(Machine& m, const ir::Op& op) {
  require_reduced_type(m, op, ir::i32());
  const bool want_max = op.kind == OpKind::ArgMax;
  const ir::DType d = op.operand(0)->type.dtype;
  if (d.is_float()) {
    arg_rows(m, op, m.in(op, 0).f, want_max);
  } else if (d.scalar == ir::Scalar::u64) {  // bit patterns: compare unsigned
    const std::vector<int64_t>& x = m.in(op, 0).i;
    arg_rows(m, op, std::vector<uint64_t>(x.begin(), x.end()), want_max);
  } else {
    arg_rows(m, op, m.in(op, 0).i, want_max);
  }
}

// The generic reduce: the body maps (acc, elem) scalars to the combined scalar; it runs once
// per combine of the tree, with acc the lower-index side.
void reduce_region(Machine& m, const ir::Op& op) {
  const ir::DType d = op.operand(0)->type.dtype;
  require_reduced_type(m, op, d);
  if (op.regions.size() != 1) m.malformed(op, "a reduce needs one body region");
  const ir::Block& body = *op.regions[0];
  const ir::Op* y = body.terminator();
  const ir::Type elem{d, {}};
  if (body.args.size() != 2 || body.args[0]->type != elem || body.args[1]->type != elem || !y ||
      y->kind != OpKind::Yield || y->num_operands() != 1 || y->operand(0)->type != elem)
    m.malformed(op, fmt::format("the body must take (acc, elem) of {} and yield one {}", elem.str(), elem.str()));
  auto run_body = [&](auto member) {
    return [&, member](auto a, auto b) {
      (m.out(body.args[0]).*member)[0] = a;
      (m.out(body.args[1]).*member)[0] = b;
      exec_block(m, body);
      return (m.in(*y, 0).*member)[0];
    };
  };
  if (holds_floats(d)) reduce_rows(m, op, &Tile::f, run_body(&Tile::f));
  else reduce_rows(m, op, &Tile::i, run_body(&Tile::i));
}

// Inclusive prefix sum along the axis, left to right, rounding or wrapping at every step.
void cumsum(Machine& m, const ir::Op& op) {
  const ir::Type& t = op.operand(0)->type;
  if (t.dtype.ptr || op.result()->type != t)
    m.malformed(op, fmt::format("cumsum of {} cannot give {}", t.str(), op.result()->type.str()));
  const AxisSplit s = split_at(m, op, m.int_attr(op, "axis"));
  auto scan = [&](auto member, auto add) {
    const auto& x = m.in(op, 0).*member;
    auto& out = m.out(op.result()).*member;
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t at = o * s.len * s.inner + i;
        out[at] = x[at];
        for (int64_t k = 1; k < s.len; ++k, at += s.inner) out[at + s.inner] = add(out[at], x[at + s.inner]);
      }
  };
  if (t.dtype.is_float()) {
    with_rounding(t.dtype.scalar, [&](auto round) {
      scan(&Tile::f, [&](double a, double b) { return round(a + b); });
    });
  } else {
    const ir::Scalar ws = t.dtype.scalar;
    scan(&Tile::i, [ws](int64_t a, int64_t b) { return wrap_to(wrapping_add(a, b), ws); });
  }
}

}  // namespace

void exec_reduce(Machine& m, const ir::Op& op) {
  switch (op.info().rule) {
    case ir::Rule::Reduce: return reduce_builtin(m, op);
    case ir::Rule::ArgReduce: return arg_reduce(m, op);
    case ir::Rule::ReduceRegion: return reduce_region(m, op);
    case ir::Rule::Scan: return cumsum(m, op);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "exec_reduce on " + std::string(op.name()));
}

}  // namespace tessel::interp
