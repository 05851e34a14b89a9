// dot: shape and dtype checks with the user's line, then one `dot` op (see ops.def).
#include "tessel/lang/dot.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "tessel/lang/builtins.hpp"
#include "tessel/lang/trace_context.hpp"

namespace tessel::lang {
namespace {

// A 2-D numeric tile operand of dot; CompileError at the user's line otherwise.
ir::Value* matrix(const Operand& x, const char* name) {
  const Loc& loc = x.loc();
  if (x.is_literal())
    throw CompileError(to_srcloc(loc), fmt::format("dot: `{}` must be a 2-D tile, got a literal", name));
  ir::Value* v = x.tile().use(loc);
  if (v->type.rank() != 2 || v->type.dtype.ptr)
    throw CompileError(to_srcloc(loc), fmt::format("dot: `{}` must be a 2-D numeric tile, got {}", name, v->type.str()));
  return v;
}

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The accumulator dtype for operands of dtype `d`, or nothing if dot does not take them.
std::optional<ir::DType> accumulator_for(ir::DType d) {
  switch (d.scalar) {
    case ir::Scalar::f16:
    case ir::Scalar::bf16:
    case ir::Scalar::f32:
    case ir::Scalar::f8e4m3:
    case ir::Scalar::f8e5m2: return ir::f32();
    case ir::Scalar::i8: return ir::i32();
    default: return std::nullopt;
  }
}

Tile dot_impl(const Operand& a_in, const Operand& b_in, const Operand* acc_in, DotOptions opts) {
  const Loc& loc = a_in.loc();
  TraceContext& ctx = TraceContext::current(loc, "dot");
  ctx.check_not_in_combine(loc, "dot");
  auto fail = [&](const std::string& what) { throw CompileError(to_srcloc(loc), "dot: " + what); };
  ir::Value* a = matrix(a_in, "a");
  ir::Value* b = matrix(b_in, "b");
  const ir::Type &ta = a->type, &tb = b->type;
  if (ta.dtype != tb.dtype && !(ta.dtype.is_fp8() && tb.dtype.is_fp8()))
    fail(fmt::format("a and b must have the same dtype, got {} and {} (cast one of them)", ta.str(), tb.str()));
  std::optional<ir::DType> acc_dtype = accumulator_for(ta.dtype);
  if (!acc_dtype)
    fail(fmt::format("unsupported operand dtype {} (dot takes f16, bf16, f32, f8e4m3/f8e5m2 or i8 tiles)", ta.dtype.str()));
  if (ta.shape[1] != tb.shape[0])
    fail(fmt::format("K mismatch: a is {} and b is {}; a's dim 1 must equal b's dim 0", ta.str(), tb.str()));
  const int64_t M = ta.shape[0], N = tb.shape[1], K = ta.shape[1];
  for (int64_t d : {M, N, K})
    if (d < 16 || !is_pow2(d))
      fail(fmt::format("M/N/K must be >= 16 and powers of two, got M = {}, N = {}, K = {} ({} x {})", M, N, K,
                       ta.str(), tb.str()));
  // Legal operands can still make an accumulator past the tile limit ([2048, 16] x [16, 2048]).
  detail::check_tile_shape({M, N}, "dot: the result", loc);
  const ir::Type want{*acc_dtype, {M, N}};
  ir::Value* acc = nullptr;
  if (acc_in) {
    if (acc_in->is_literal())
      fail(fmt::format("the accumulator must be a {} tile, got a literal (use zeros or full)", want.str()));
    acc = acc_in->tile().use(acc_in->loc());
    if (acc->type != want)
      fail(fmt::format("the accumulator must be {} for {} x {}, got {}", want.str(), ta.str(), tb.str(),
                       acc->type.str()));
  } else {
    ir::Builder& bld = ctx.at(loc);
    acc = want.dtype.is_float() ? bld.const_float(0.0, want) : bld.const_int(0, want);
  }
  return ctx.wrap(ctx.at(loc).dot(a, b, acc, opts.allow_tf32));
}

}  // namespace

Tile dot(const Operand& a, const Operand& b, DotOptions opts) { return dot_impl(a, b, nullptr, opts); }
Tile dot(const Operand& a, const Operand& b, const Operand& acc, DotOptions opts) {
  return dot_impl(a, b, &acc, opts);
}

}  // namespace tessel::lang
