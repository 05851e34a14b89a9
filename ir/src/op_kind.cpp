// The static op table generated from ops.def.
#include "tessel/ir/op_kind.hpp"

#include <array>

namespace tessel::ir {
namespace {
constexpr OpInfo kInfos[] = {
#define TESSEL_OP(E, text, lo, hi, res, eff, rule) \
  {OpKind::E, text, lo, hi, ResultRule::res, Effect::eff, Rule::rule},
#include "tessel/ir/ops.def"
#undef TESSEL_OP
};
}  // namespace

const OpInfo& info(OpKind k) { return kInfos[static_cast<size_t>(k)]; }
std::string_view name_of(OpKind k) { return info(k).name; }
int num_op_kinds() { return static_cast<int>(std::size(kInfos)); }

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const auto& i : kInfos)
    if (i.name == name) return i.kind;
  return std::nullopt;
}

}  // namespace tessel::ir
