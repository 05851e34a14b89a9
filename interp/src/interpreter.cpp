// The interpreter's driver: checks arguments and the grid, runs each program, executes blocks and loops.
#include "tessel/interp/interpreter.hpp"

#include <fmt/format.h>

#include "machine.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/ir/accessors.hpp"

namespace tessel::interp {
namespace {

// Copies a tile's elements into another value's slot (block arguments, loop results).
void assign(Machine& m, const ir::Value* to, const Tile& from) {
  Tile& t = m.out(to);
  if (holds_floats(to->type.dtype)) t.f = from.f;
  else t.i = from.i;
}

int64_t loop_bound(Machine& m, const ir::Op& op, int k) {
  const ir::Value* v = op.operand(k);
  if (!v->type.dtype.is_int() || !v->type.is_scalar() || v->type.dtype != op.operand(0)->type.dtype)
    m.malformed(op, fmt::format("lo, hi and step must be integer scalars of one type; operand {} is {}",
                                k, v->type.str()));
  return m.in(op, k).i[0];
}

void exec_for(Machine& m, const ir::Op& op) {
  if (op.num_operands() < 3 || op.regions.size() != 1)
    m.malformed(op, "a loop needs lo, hi, step and one body region");
  ir::ForOp loop{op};
  const ir::Block& body = loop.body();
  const int nc = loop.num_carried();
  const ir::Op* y = body.terminator();
  if (static_cast<int>(body.args.size()) != 1 + nc || static_cast<int>(op.results.size()) != nc ||
      !y || y->kind != ir::OpKind::Yield || y->num_operands() != nc)
    m.malformed(op, fmt::format("a loop with {} carried values needs {} body args, {} results and a "
                                "yield of {}", nc, 1 + nc, nc, nc));
  const int64_t lo = loop_bound(m, op, 0), hi = loop_bound(m, op, 1), step = loop_bound(m, op, 2);
  if (step <= 0)
    m.fail(op, fmt::format("loop step is {} (from {} to {}); it must be positive", step, lo, hi));

  for (int c = 0; c < nc; ++c) assign(m, loop.carried(c), m.in(op, 3 + c));
  std::vector<Tile> next(static_cast<size_t>(nc));  // yielded values, copied before any is overwritten
  for (int64_t iv = lo; iv < hi;) {
    m.out(loop.induction_var()).i[0] = iv;
    exec_block(m, body);
    for (int c = 0; c < nc; ++c) next[c] = m.in(*y, c);
    for (int c = 0; c < nc; ++c) assign(m, loop.carried(c), next[c]);
    if (__builtin_add_overflow(iv, step, &iv)) break;  // past every representable hi
  }
  for (int c = 0; c < nc; ++c) assign(m, op.result(c), m.slot(loop.carried(c)));
}

void exec_op(Machine& m, const ir::Op& op) {
  switch (op.info().rule) {
    case ir::Rule::Constant:
    case ir::Rule::Axis:
    case ir::Rule::Arange: return exec_source(m, op);
    case ir::Rule::Splat:
    case ir::Rule::Broadcast:
    case ir::Rule::ExpandDims: return exec_shape(m, op);
    case ir::Rule::Cast: return exec_cast(m, op);
    case ir::Rule::Arith:
    case ir::Rule::Bitwise:
    case ir::Rule::Compare: return exec_binary(m, op);
    case ir::Rule::UnaryNumeric:
    case ir::Rule::UnaryInt:
    case ir::Rule::UnaryFloat: return exec_unary(m, op);
    case ir::Rule::Fma:
    case ir::Rule::Select: return exec_ternary(m, op);
    case ir::Rule::AddPtr:
    case ir::Rule::Load:
    case ir::Rule::Store: return exec_memory(m, op);
    case ir::Rule::Rand: return exec_random(m, op);
    case ir::Rule::For: return exec_for(m, op);
    case ir::Rule::Yield: break;  // handled by the enclosing loop or reduce
    case ir::Rule::Reduce:
    case ir::Rule::ArgReduce:
    case ir::Rule::ReduceRegion:
    case ir::Rule::Scan: return exec_reduce(m, op);
    case ir::Rule::Reshape:
    case ir::Rule::Trans: return exec_shape(m, op);
    case ir::Rule::Atomic: return exec_atomic(m, op);
    case ir::Rule::Dot: return exec_dot(m, op);
    case ir::Rule::Hint: return exec_hint(m, op);
    case ir::Rule::Bitcast:
    case ir::Rule::Unpack: return exec_bits(m, op);
  }
}

}  // namespace

void exec_block(Machine& m, const ir::Block& b) {
  for (const auto& op : b.ops) {
    if (op->kind == ir::OpKind::Yield) {
      if (op.get() != b.terminator()) m.malformed(*op, "yield must be the last op of its block");
      return;
    }
    if (static_cast<int>(op->results.size()) != (op->info().result == ir::ResultRule::None ? 0 : 1) &&
        op->kind != ir::OpKind::For)
      m.malformed(*op, fmt::format("has {} results", op->results.size()));
    exec_op(m, *op);
  }
}

namespace {

std::string_view kind_name(ArgValue::Kind k) {
  switch (k) {
    case ArgValue::Int: return "an integer";
    case ArgValue::Float: return "a float";
    case ArgValue::Pointer: return "a pointer";
  }
  return "an unknown kind of argument";
}

// Binds each argument to its parameter's slot, checking count, kind and integer range.
void bind_arguments(Machine& m, const ir::Function& f, std::span<const ArgValue> args) {
  TESSEL_ASSERT(f.params.size() == f.body.args.size(), "params and entry block args differ");
  if (args.size() != f.params.size()) {
    std::vector<std::string> names;
    for (const auto& p : f.params) names.push_back(p.name);
    throw InterpError(fmt::format("interpreter: kernel '{}' takes {} arguments ({}) but was given {}",
                                  f.name, f.params.size(), fmt::join(names, ", "), args.size()));
  }
  for (size_t k = 0; k < args.size(); ++k) {
    const ir::Value* p = f.body.args[k];
    const ir::DType d = p->type.dtype;
    auto where = [&] {
      return fmt::format("interpreter: kernel '{}': argument {} ('{}', {})", f.name, k,
                         f.params[k].name, p->type.str());
    };
    if (!p->type.is_scalar())
      throw VerifyError(where() + ": parameters must be scalars or pointers");
    ArgValue::Kind want = d.ptr ? ArgValue::Pointer : d.is_int() ? ArgValue::Int : ArgValue::Float;
    if (args[k].kind != want)
      throw InterpError(fmt::format("{} needs {}, but was given {}", where(), kind_name(want),
                                    kind_name(args[k].kind)));
    Tile& t = m.out(p);
    if (d.ptr) {
      t.i[0] = static_cast<int64_t>(args[k].addr);
    } else if (d.is_int()) {
      int64_t v = args[k].i;
      if (wrap_to(v, d.scalar) != v)
        throw InterpError(fmt::format("{}: the value {} does not fit {}", where(), v, d.str()));
      t.i[0] = v;
    } else {
      t.f[0] = round_to_float(args[k].f, d.scalar);
    }
  }
}

void check_grid(const ir::Function& f, Grid g) {
  const int64_t limit[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
  const int64_t ext[3] = {g.x, g.y, g.z};
  for (int a = 0; a < 3; ++a)
    if (ext[a] < 0 || ext[a] > limit[a])
      throw InterpError(fmt::format("interpreter: kernel '{}': grid ({},{},{}) is invalid: axis {} "
                                    "must be between 0 and {}", f.name, g.x, g.y, g.z, a, limit[a]));
}

void check_memory(const ir::Function& f, std::span<const MemRegion> memory) {
  for (size_t r = 0; r < memory.size(); ++r) {
    uint64_t base = reinterpret_cast<uintptr_t>(memory[r].base);
    if (memory[r].bytes > 0 && (base == 0 || base + memory[r].bytes < base))
      throw InterpError(fmt::format("interpreter: kernel '{}': memory region #{} ({} bytes at {:#x}) "
                                    "is not a valid host buffer", f.name, r, memory[r].bytes, base));
  }
}

}  // namespace

void run(const ir::Function& f, Grid grid, std::span<const ArgValue> args,
         std::span<const MemRegion> memory) {
  check_grid(f, grid);
  check_memory(f, memory);
  Machine m(f, grid, memory);
  bind_arguments(m, f, args);
  for (int64_t z = 0; z < grid.z; ++z)
    for (int64_t y = 0; y < grid.y; ++y)
      for (int64_t x = 0; x < grid.x; ++x) {
        m.pid = {x, y, z};
        exec_block(m, f.body);
      }
}

}  // namespace tessel::interp
