// Ops that make values from nothing: constant, program_id, num_programs, arange.
#include <fmt/format.h>

#include <algorithm>

#include "machine.hpp"
#include "tessel/interp/float_formats.hpp"

namespace tessel::interp {
namespace {

void constant(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  const ir::Attr* a = op.find_attr("value");
  if (!a) m.malformed(op, "constant without a 'value' attribute");
  Tile& t = m.out(r);
  const ir::DType& d = r->type.dtype;
  if (d.is_float()) {
    double v = std::holds_alternative<double>(a->value)
                   ? round_to_float(std::get<double>(a->value), d.scalar)
                   : int_to_float(std::get<int64_t>(a->value), d.scalar);
    std::fill(t.f.begin(), t.f.end(), v);
    return;
  }
  if (!std::holds_alternative<int64_t>(a->value))
    m.malformed(op, fmt::format("a float value for a {} constant", d.str()));
  int64_t v = std::get<int64_t>(a->value);
  std::fill(t.i.begin(), t.i.end(), d.ptr ? v : wrap_to(v, d.scalar));
}

int axis_of(const Machine& m, const ir::Op& op) {
  int64_t axis = m.int_attr(op, "axis");
  if (axis < 0 || axis > 2) m.malformed(op, fmt::format("axis {} is not 0, 1 or 2", axis));
  return static_cast<int>(axis);
}

void set_scalar_int(Machine& m, const ir::Op& op, int64_t v) {
  const ir::Value* r = op.result();
  if (!r->type.dtype.is_int() || !r->type.is_scalar()) m.malformed(op, "result must be an integer scalar");
  m.out(r).i[0] = wrap_to(v, r->type.dtype.scalar);
}

void arange(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  int64_t start = m.int_attr(op, "start"), end = m.int_attr(op, "end");
  if (!r->type.dtype.is_int() || r->type.rank() != 1 || r->type.shape[0] != end - start)
    m.malformed(op, fmt::format("result type {} does not hold {}..{}", r->type.str(), start, end));
  Tile& t = m.out(r);
  const ir::Scalar s = r->type.dtype.scalar;
  for (int64_t k = 0; k < end - start; ++k) t.i[k] = wrap_to(start + k, s);
}

}  // namespace

void exec_source(Machine& m, const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::Constant: return constant(m, op);
    case ir::OpKind::ProgramId: return set_scalar_int(m, op, m.pid[axis_of(m, op)]);
    case ir::OpKind::NumPrograms: {
      int axis = axis_of(m, op);
      int64_t n = axis == 0 ? m.grid.x : axis == 1 ? m.grid.y : m.grid.z;
      return set_scalar_int(m, op, n);
    }
    case ir::OpKind::Arange: return arange(m, op);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "exec_source on " + std::string(op.name()));
}

}  // namespace tessel::interp
