// Axis analysis transfer functions, one per op family.
#include <algorithm>
#include <numeric>

#include "tessel/ir/accessors.hpp"
#include "plan/axis_analysis.hpp"

namespace tessel::lowering {
namespace {

using ir::OpKind;

int64_t cap(int64_t v) { return std::min(std::max<int64_t>(v, 1), kMaxDivisibility); }
int64_t gcd2(int64_t a, int64_t b) { return std::gcd(a, b); }

// An operand's info viewed with the result's rank: a scalar used by a tile op is uniform.
AxisInfo widen(const AxisInfo& in, const ir::Shape& shape) {
  int n = shape.empty() ? 1 : static_cast<int>(shape.size());
  if (in.dims() == n) return in;
  AxisInfo o = AxisInfo::unknown(static_cast<int>(shape.size()));
  for (int d = 0; d < n; ++d) {
    o.divisibility[d] = in.divisibility[0];
    o.constancy[d] = shape.empty() ? 1 : shape[d];
  }
  o.constant = in.constant;
  return o;
}

// Divisibility that holds at every element (all positions are group starts where c == 1).
int64_t elem_div(const AxisInfo& a) {
  int64_t best = 1;
  for (int d = 0; d < a.dims(); ++d)
    if (a.contiguity[d] == 1) best = std::max(best, a.divisibility[d]);
  return best;
}

// Divisibility at positions that are multiples of g along d. Inside a contiguous group the
// values step by one, so a group start only inherits gcd(D, g). `scale` turns element
// steps into bytes for pointers.
int64_t start_div(const AxisInfo& a, int d, int64_t g, int64_t scale = 1) {
  return a.contiguity[d] > g ? gcd2(a.divisibility[d], g * scale) : a.divisibility[d];
}

AxisInfo base(const ir::Op& op) {
  return AxisInfo::unknown(op.results[0]->type.rank());
}

// Constancy shared by every same-shaped operand; contiguity and divisibility unknown.
AxisInfo elementwise_constancy(const ir::Op& op, const std::vector<AxisInfo>& in) {
  AxisInfo o = base(op);
  for (int d = 0; d < o.dims(); ++d) {
    int64_t k = op.results[0]->type.is_scalar() ? 1 : op.results[0]->type.shape[d];
    for (const AxisInfo& a : in) k = gcd2(k, a.constancy[d]);
    o.constancy[d] = k;
  }
  return o;
}

AxisInfo add_like(const ir::Op& op, const AxisInfo& l, const AxisInfo& r, bool sub, int64_t rscale = 1,
                  int64_t lscale = 1) {
  AxisInfo o = base(op);
  for (int d = 0; d < o.dims(); ++d) {
    int64_t c = gcd2(l.contiguity[d], r.constancy[d]);
    if (!sub) c = std::max(c, gcd2(l.constancy[d], r.contiguity[d]));
    o.contiguity[d] = c;
    o.divisibility[d] = cap(gcd2(start_div(l, d, c, lscale), start_div(r, d, c) * rscale));
    o.constancy[d] = gcd2(l.constancy[d], r.constancy[d]);
  }
  return o;
}

AxisInfo transfer_binary_int(const ir::Op& op, const AxisInfo& l, const AxisInfo& r) {
  const bool is_int = op.operands[0]->type.dtype.is_int();
  AxisInfo o = elementwise_constancy(op, {l, r});
  if (!is_int) return o;
  auto fold = [&](auto f) {
    if (l.constant && r.constant) {
      o.constant = f(*l.constant, *r.constant);
      for (int d = 0; d < o.dims(); ++d) o.divisibility[d] = pow2_divisor(*o.constant);
    }
  };
  switch (op.kind) {
    case OpKind::Add:
      o = add_like(op, l, r, false);
      fold([](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); });
      return o;
    case OpKind::Sub:
      o = add_like(op, l, r, true);
      fold([](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); });
      return o;
    case OpKind::Mul:
      if (r.constant == 1) return l;
      if (l.constant == 1) return r;
      for (int d = 0; d < o.dims(); ++d) o.divisibility[d] = cap(elem_div(l) * elem_div(r));
      if (l.constant == 0 || r.constant == 0) {
        o.constant = 0;
        std::fill(o.divisibility.begin(), o.divisibility.end(), kMaxDivisibility);
      }
      fold([](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); });
      return o;
    case OpKind::Div:
      if (r.constant == 1) return l;
      return o;
    case OpKind::Rem:
      // x % m with m a known constant keeps runs of x that do not cross a multiple of m
      // (for x >= 0, as Triton assumes).
      if (r.constant && *r.constant != 0) {
        int64_t pm = pow2_divisor(*r.constant);
        for (int d = 0; d < o.dims(); ++d) {
          int64_t c = std::min({l.contiguity[d], l.divisibility[d], pm});
          o.contiguity[d] = c;
          o.divisibility[d] = cap(gcd2(start_div(l, d, c), pm));
          o.constancy[d] = l.constancy[d];
        }
      }
      return o;
    case OpKind::Min:
    case OpKind::Max:
    case OpKind::Or:
    case OpKind::Xor:
      for (int d = 0; d < o.dims(); ++d) o.divisibility[d] = std::min(elem_div(l), elem_div(r));
      return o;
    case OpKind::And:
      for (int d = 0; d < o.dims(); ++d) o.divisibility[d] = std::max(elem_div(l), elem_div(r));
      return o;
    case OpKind::Shl:
      for (int d = 0; d < o.dims(); ++d) {
        int64_t s = r.constant && *r.constant >= 0 && *r.constant < 31 ? *r.constant : 0;
        o.divisibility[d] = cap(elem_div(l) << s);
      }
      return o;
    case OpKind::Shr:  // nothing known beyond the operands' constancy
      return o;
    case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
    case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Cast: case OpKind::CmpEq:
    case OpKind::CmpNe: case OpKind::CmpLt: case OpKind::CmpLe: case OpKind::CmpGt: case OpKind::CmpGe:
    case OpKind::Neg: case OpKind::Abs: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2:
    case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Sin:
    case OpKind::Cos: case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf: case OpKind::Floor:
    case OpKind::Ceil: case OpKind::Fma: case OpKind::Select: case OpKind::AddPtr: case OpKind::Load:
    case OpKind::Store: case OpKind::Rand: case OpKind::RandN: case OpKind::ReduceSum: case OpKind::ReduceMax:
    case OpKind::ReduceMin: case OpKind::ArgMax: case OpKind::ArgMin: case OpKind::Reduce: case OpKind::CumSum:
    case OpKind::Reshape: case OpKind::Trans: case OpKind::Dot: case OpKind::AtomicAdd: case OpKind::AtomicMax:
    case OpKind::For: case OpKind::Yield: case OpKind::Hint: case OpKind::Bitcast: case OpKind::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "transfer_binary_int", op.kind);
}

AxisInfo transfer_compare(const ir::Op& op, const AxisInfo& l, const AxisInfo& r) {
  AxisInfo o = elementwise_constancy(op, {l, r});
  // x < n over an aligned run of consecutive x whose start and n are both multiples of
  // the run length is one value for the whole run (the mask of `offs < n`).
  auto run = [](const AxisInfo& x, const AxisInfo& n, int d) {
    return std::min({x.contiguity[d], x.divisibility[d], n.constancy[d], n.divisibility[d]});
  };
  for (int d = 0; d < o.dims(); ++d) {
    int64_t g = 1;
    switch (op.kind) {
      case OpKind::CmpLt:
      case OpKind::CmpGe: g = run(l, r, d); break;  // x < n, x >= n
      case OpKind::CmpGt:
      case OpKind::CmpLe: g = run(r, l, d); break;  // n > x, n <= x
      case OpKind::CmpEq: case OpKind::CmpNe: break;
      case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
      case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Cast: case OpKind::Add:
      case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem: case OpKind::Min:
      case OpKind::Max: case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl:
      case OpKind::Shr: case OpKind::Neg: case OpKind::Abs: case OpKind::Not: case OpKind::Exp:
      case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt:
      case OpKind::Sin: case OpKind::Cos: case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf:
      case OpKind::Floor: case OpKind::Ceil: case OpKind::Fma: case OpKind::Select: case OpKind::AddPtr:
      case OpKind::Load: case OpKind::Store: case OpKind::Rand: case OpKind::RandN: case OpKind::ReduceSum:
      case OpKind::ReduceMax: case OpKind::ReduceMin: case OpKind::ArgMax: case OpKind::ArgMin:
      case OpKind::Reduce: case OpKind::CumSum: case OpKind::Reshape: case OpKind::Trans: case OpKind::Dot:
      case OpKind::AtomicAdd: case OpKind::AtomicMax: case OpKind::For: case OpKind::Yield: case OpKind::Hint:
      case OpKind::Bitcast: case OpKind::Unpack:
        ir::unexpected_op(__FILE__, __LINE__, "transfer_compare", op.kind);
    }
    if (op.operands[0]->type.dtype.is_int()) o.constancy[d] = std::max(o.constancy[d], g);
  }
  return o;
}

}  // namespace

namespace {

// Broadcast: a dimension broadcast from size 1 (or added) is constant along it.
AxisInfo transfer_broadcast(const ir::Op& op, const std::vector<AxisInfo>& in, const ir::Type& rt, int rank) {
  AxisInfo o = AxisInfo::unknown(rank);
  const AxisInfo& s = in[0];
  const ir::Shape& ss = op.operands[0]->type.shape;
  int extra = rank - static_cast<int>(ss.size());
  for (int d = 0; d < rank; ++d) {
    if (d < extra || ss.empty()) {
      o.divisibility[d] = elem_div(s);
      o.constancy[d] = rt.shape[d];
    } else if (ss[d - extra] == 1 && rt.shape[d] != 1) {
      o.divisibility[d] = s.divisibility[d - extra];
      o.constancy[d] = rt.shape[d];
    } else {
      o.contiguity[d] = s.contiguity[d - extra];
      o.divisibility[d] = s.divisibility[d - extra];
      o.constancy[d] = s.constancy[d - extra];
    }
  }
  o.constant = s.constant;
  return o;
}

// ExpandDims: the new dimension has size 1; the others keep their facts.
AxisInfo transfer_expand_dims(const ir::Op& op, const std::vector<AxisInfo>& in, const ir::Type& rt, int rank) {
  AxisInfo o = AxisInfo::unknown(rank);
  const AxisInfo& s = in[0];
  int axis = static_cast<int>(op.int_attr("axis"));
  int64_t ed = elem_div(s);
  for (int d = 0, sd = 0; d < rank; ++d) {
    if (d == axis) {
      o.divisibility[d] = ed;
      continue;
    }
    if (op.operands[0]->type.is_scalar()) {
      o.divisibility[d] = s.divisibility[0];
    } else {
      o.contiguity[d] = s.contiguity[sd];
      o.divisibility[d] = s.divisibility[sd];
      o.constancy[d] = s.constancy[sd];
    }
    ++sd;
  }
  o.constant = s.constant;
  return o;
}

// Cast: integer widths keep the facts (divisibility capped); pointer <-> integer keep divisibility.
AxisInfo transfer_cast(const ir::Op& op, const std::vector<AxisInfo>& in, const ir::Type& rt, int rank) {
  AxisInfo o = AxisInfo::unknown(rank);
  ir::DType from = op.operands[0]->type.dtype, to = rt.dtype;
  o = elementwise_constancy(op, {in[0]});
  if (from.is_int() && to.is_int() && from.scalar != ir::Scalar::i1 && to.scalar != ir::Scalar::i1) {
    o = in[0];
    int64_t limit = int64_t{1} << std::min(30, ir::bit_width(to.scalar) - 1);
    for (auto& dv : o.divisibility) dv = std::min(dv, limit);
    if (ir::bit_width(to.scalar) < ir::bit_width(from.scalar)) o.constant.reset();
  } else if ((from.ptr && to.is_int()) || (from.is_int() && to.ptr)) {
    for (int d = 0; d < o.dims(); ++d) o.divisibility[d] = elem_div(in[0]);
  } else if (from.ptr && to.ptr) {
    for (int d = 0; d < o.dims(); ++d) o.divisibility[d] = elem_div(in[0]);
  }
  return o;
}

// Select: runs where the condition is constant and both sides are contiguous.
AxisInfo transfer_select(const ir::Op& op, const std::vector<AxisInfo>& in, const ir::Type& rt, int rank) {
  AxisInfo o = AxisInfo::unknown(rank);
  const AxisInfo &c = in[0], &a = in[1], &b = in[2];
  o = elementwise_constancy(op, {c, a, b});
  if (!rt.dtype.is_int() && !rt.dtype.ptr) return o;
  int64_t scale = rt.dtype.ptr ? rt.dtype.pointee().bytes() : 1;
  for (int d = 0; d < o.dims(); ++d) {
    int64_t g = std::min({c.constancy[d], a.contiguity[d], b.contiguity[d]});
    o.contiguity[d] = g;
    o.divisibility[d] = cap(std::min(start_div(a, d, g, scale), start_div(b, d, g, scale)));
  }
  return o;
}

// Hint: the user's promise raises what is known, never lowers it.
AxisInfo transfer_hint(const ir::Op& op, const std::vector<AxisInfo>& in, const ir::Type& rt, int rank) {
  AxisInfo o = AxisInfo::unknown(rank);
  // The user's promise raises what is known, never lowers it. Raising contiguity keeps the
  // divisibility valid: it then holds at fewer positions (the starts of longer runs).
  ir::HintOp h{op};
  const std::vector<int64_t> mult = h.multiple_of(), contig = h.max_contiguous();
  o = in[0];
  for (int d = 0; d < o.dims(); ++d) {
    const int64_t size = rank == 0 ? 1 : rt.shape[d];
    if (d < static_cast<int>(contig.size()) && contig[d] > o.contiguity[d]) {
      o.contiguity[d] = std::min(contig[d], size);
      if (o.contiguity[d] > 1) o.constancy[d] = 1;  // consecutive values are not constant
    }
    if (d < static_cast<int>(mult.size())) o.divisibility[d] = cap(std::max(o.divisibility[d], mult[d]));
  }
  return o;
}

}  // namespace

AxisInfo axis_transfer(const ir::Op& op, const std::vector<const AxisInfo*>& in_ptrs) {
  TESSEL_ASSERT(!op.results.empty(), "axis transfer of an op without results");
  const ir::Type& rt = op.results[0]->type;
  const int rank = rt.rank();
  std::vector<AxisInfo> in;
  for (size_t i = 0; i < in_ptrs.size(); ++i)
    in.push_back(op.kind == OpKind::Splat || op.kind == OpKind::Broadcast || op.kind == OpKind::ExpandDims ||
                         op.kind == OpKind::For
                     ? *in_ptrs[i]
                     : widen(*in_ptrs[i], rt.shape));
  AxisInfo o = AxisInfo::unknown(rank);
  auto full_constancy = [&](AxisInfo& a) {
    for (int d = 0; d < rank; ++d) a.constancy[d] = rt.shape[d];
  };

  switch (op.kind) {
    case OpKind::Constant: {
      ir::ConstantOp c{op};
      full_constancy(o);
      if (!c.is_float() && rt.dtype.is_int()) {
        o.constant = c.int_value();
        std::fill(o.divisibility.begin(), o.divisibility.end(), pow2_divisor(c.int_value()));
      }
      return o;
    }
    case OpKind::ProgramId:
    case OpKind::NumPrograms: return o;
    case OpKind::Arange: {
      ir::ArangeOp a{op};
      o.contiguity[0] = rt.shape[0];
      o.divisibility[0] = pow2_divisor(a.start());
      return o;
    }
    case OpKind::Splat: {
      full_constancy(o);
      std::fill(o.divisibility.begin(), o.divisibility.end(), in[0].divisibility[0]);
      o.constant = in[0].constant;
      return o;
    }
    case OpKind::Broadcast:
      return transfer_broadcast(op, in, rt, rank);
    case OpKind::ExpandDims:
      return transfer_expand_dims(op, in, rt, rank);
    case OpKind::Cast:
      return transfer_cast(op, in, rt, rank);
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
    case OpKind::Min: case OpKind::Max: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr:
      return transfer_binary_int(op, in[0], in[1]);
    case OpKind::CmpEq: case OpKind::CmpNe: case OpKind::CmpLt: case OpKind::CmpLe:
    case OpKind::CmpGt: case OpKind::CmpGe:
      return transfer_compare(op, in[0], in[1]);
    case OpKind::Neg:
    case OpKind::Abs:
      o = elementwise_constancy(op, {in[0]});
      if (rt.dtype.is_int())
        for (int d = 0; d < o.dims(); ++d) o.divisibility[d] = elem_div(in[0]);
      return o;
    case OpKind::Select:
      return transfer_select(op, in, rt, rank);
    case OpKind::AddPtr: {
      int64_t bytes = rt.dtype.pointee().bytes();
      return add_like(op, in[0], in[1], false, bytes, bytes);
    }
    case OpKind::Load:
      return elementwise_constancy(op, in);
    // Reductions, scans and reshapes change what lives where along each dim: nothing is known.
    case OpKind::ReduceSum: case OpKind::ReduceMax: case OpKind::ReduceMin: case OpKind::ArgMax:
    case OpKind::ArgMin: case OpKind::Reduce: case OpKind::CumSum: case OpKind::Reshape:
    case OpKind::AtomicAdd: case OpKind::AtomicMax:
    case OpKind::Unpack:  // values from bit fields: nothing known
      return base(op);
    case OpKind::Bitcast:  // the same bits, other values: only constancy carries over
      return elementwise_constancy(op, in);
    case OpKind::Trans: {
      const AxisInfo& s = in[0];
      for (int d = 0; d < 2; ++d) {
        o.contiguity[d] = s.contiguity[1 - d];
        o.divisibility[d] = s.divisibility[1 - d];
        o.constancy[d] = s.constancy[1 - d];
      }
      o.constant = s.constant;
      return o;
    }
    case OpKind::Rand:
    case OpKind::RandN:
      return elementwise_constancy(op, in);
    case OpKind::Hint:
      return transfer_hint(op, in, rt, rank);
    // Elementwise: the result keeps only what is constant in every operand.
    case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt:
    case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos: case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf:
    case OpKind::Floor: case OpKind::Ceil: case OpKind::Fma:
      return elementwise_constancy(op, in);
    // A dot (and a loop, should one come here: AxisAnalysis::loop handles them) keeps the same.
    case OpKind::Dot: case OpKind::For:
      return elementwise_constancy(op, in);
    case OpKind::Store: case OpKind::Yield:  // no results: asserted above
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "axis_transfer", op.kind);
}

}  // namespace tessel::lowering
