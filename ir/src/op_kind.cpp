// The static op table generated from ops.def.
#include "tessel/ir/op_kind.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "tessel/ir/error.hpp"

namespace tessel::ir {
namespace {
constexpr OpInfo kInfos[] = {
#define TESSEL_OP(E, text, lo, hi, res, eff, rule) \
  {OpKind::E, text, lo, hi, ResultRule::res, Effect::eff, Rule::rule},
#include "tessel/ir/ops.def"
#undef TESSEL_OP
};

constexpr AttrDecl kAttrs[] = {
#define TESSEL_ATTR(E, name, type, presence) {OpKind::E, name, AttrType::type, AttrPresence::presence},
#include "tessel/ir/ops.def"
#undef TESSEL_ATTR
};

// attrs_of returns one contiguous run: an op's TESSEL_ATTRs must stand together.
constexpr bool attrs_grouped() {
  for (size_t i = 1; i < std::size(kAttrs); ++i)
    if (kAttrs[i].kind != kAttrs[i - 1].kind)
      for (size_t j = 0; j + 1 < i; ++j)
        if (kAttrs[j].kind == kAttrs[i].kind) return false;
  return true;
}
static_assert(attrs_grouped(), "ops.def: list an op's TESSEL_ATTR lines together, right after its TESSEL_OP");

// "family.<d>": the family part, when the rest is all digits.
std::string_view family_of(std::string_view name) {
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot + 1 == name.size()) return {};
  if (name.substr(dot + 1).find_first_not_of("0123456789") != std::string_view::npos) return {};
  return name.substr(0, dot);
}
}  // namespace

const OpInfo& info(OpKind k) { return kInfos[static_cast<size_t>(k)]; }
std::string_view name_of(OpKind k) { return info(k).name; }
int num_op_kinds() { return static_cast<int>(std::size(kInfos)); }

std::span<const AttrDecl> attrs_of(OpKind k) {
  // ops.def lists an op's attributes right after it, so they are one contiguous run.
  const AttrDecl* first = std::find_if(std::begin(kAttrs), std::end(kAttrs), [&](const AttrDecl& a) { return a.kind == k; });
  const AttrDecl* last = std::find_if(first, std::end(kAttrs), [&](const AttrDecl& a) { return a.kind != k; });
  return {first, last};
}

const AttrDecl* find_attr_decl(OpKind k, std::string_view name) {
  for (const AttrDecl& a : attrs_of(k)) {
    if (a.presence != AttrPresence::PerDim && a.name == name) return &a;
    if (a.presence == AttrPresence::PerDim && family_of(name) == a.name) return &a;
  }
  return nullptr;
}

void unexpected_op(const char* file, int line, std::string_view where, OpKind k) {
  internal_error(file, line, std::string(where) + ": unexpected op '" + std::string(name_of(k)) + "'");
}

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const auto& i : kInfos)
    if (i.name == name) return i.kind;
  return std::nullopt;
}

}  // namespace tessel::ir
