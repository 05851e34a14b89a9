// multiple_of / max_contiguous: checks the promise's form at trace time and records a hint op.
#include "tessel/lang/hints.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tessel/ir/accessors.hpp"
#include "tessel/lang/trace_context.hpp"

namespace tessel::lang {
namespace {

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The traced value of `x` after checking it can carry a hint at all.
ir::Value* hinted_value(const Operand& x, const char* what) {
  const SrcLoc where = to_srcloc(x.loc());
  if (x.is_literal())
    throw CompileError(where, fmt::format("{} takes a traced integer or pointer value, not a literal", what));
  const ir::Type& t = x.tile().type();
  if (!(t.dtype.ptr || (t.dtype.is_int() && !t.dtype.is_bool())))
    throw CompileError(where, fmt::format("{} takes an integer or pointer value, got {}", what, t.str()));
  return x.tile().use(x.loc());
}

Tile hint(const Operand& x, std::vector<int64_t> values, bool contiguity, bool per_dim_form) {
  const char* what = contiguity ? "max_contiguous" : "multiple_of";
  TraceContext& ctx = TraceContext::current(x.loc(), what);
  ir::Value* v = hinted_value(x, what);
  const SrcLoc where = to_srcloc(x.loc());
  const ir::Type& t = v->type;
  const size_t dims = t.is_scalar() ? 1 : t.shape.size();
  if (!per_dim_form && dims != 1)
    throw CompileError(where, fmt::format("{}: {} has {} dims; pass one value per dim, e.g. {}(x, {{{}}})", what,
                                          t.str(), dims, what, fmt::join(std::vector<int>(dims, 1), ", ")));
  if (values.size() != dims)
    throw CompileError(where, fmt::format("{}: {} needs {} value(s), one per dim, got {} ({})", what, t.str(), dims,
                                          values.size(), fmt::join(values, ", ")));
  for (size_t d = 0; d < dims; ++d) {
    if (!is_pow2(values[d]))
      throw CompileError(where, fmt::format("{}: the value for dim {} must be a positive power of two, got {}", what,
                                            d, values[d]));
    const int64_t size = t.is_scalar() ? 1 : t.shape[d];
    if (contiguity && size % values[d] != 0)
      throw CompileError(where, fmt::format("{}: a run of {} does not fit dim {} of {} (size {})", what, values[d], d,
                                            t.str(), size));
  }
  std::vector<int64_t> mult = contiguity ? std::vector<int64_t>{} : values;
  std::vector<int64_t> contig = contiguity ? values : std::vector<int64_t>{};
  // A hint of a hint becomes one op holding both promises (the larger where both give one), so
  // max_contiguous(multiple_of(x, 4), 4) is read, and checked by the interpreter, as one claim.
  if (v->def && v->def->kind == ir::OpKind::Hint) {
    ir::HintOp inner{*v->def};
    auto merge = [](std::vector<int64_t>& mine, const std::vector<int64_t>& theirs) {
      if (mine.empty()) mine = theirs;
      else if (theirs.size() == mine.size())
        for (size_t d = 0; d < mine.size(); ++d) mine[d] = std::max(mine[d], theirs[d]);
    };
    merge(mult, inner.multiple_of());
    merge(contig, inner.max_contiguous());
    v = v->def->operand(0);
  }
  return ctx.wrap(ctx.at(x.loc()).hint(v, mult, contig));
}

}  // namespace

Tile multiple_of(const Operand& x, int64_t n) { return hint(x, {n}, false, false); }
Tile multiple_of(const Operand& x, const std::vector<int64_t>& per_dim) { return hint(x, per_dim, false, true); }
Tile max_contiguous(const Operand& x, int64_t c) { return hint(x, {c}, true, false); }
Tile max_contiguous(const Operand& x, const std::vector<int64_t>& per_dim) { return hint(x, per_dim, true, true); }

Tile multicast(const Tile& loaded, Loc loc) {
  ir::Value* v = loaded.use(loc);
  if (!v->def || v->def->kind != ir::OpKind::Load)
    throw CompileError(to_srcloc(loc), fmt::format("multicast takes the result of a load, got {}{}",
                                                            v->def ? "the result of " : "",
                                                            v->def ? std::string(v->def->name()) : v->type.str()));
  v->def->set_attr("multicast", int64_t{1});
  return loaded;
}

}  // namespace tessel::lang
