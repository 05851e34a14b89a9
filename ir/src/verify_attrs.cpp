// The attribute check of the verifier: ops.def declares which op takes which attribute (name,
// int/float, required/optional), so a misspelt or stray attribute is an error here rather
// than a value some later pass silently never reads.
#include "verify_attrs.hpp"

#include <fmt/format.h>

#include <vector>

namespace tessel::ir {
namespace {

std::string_view type_name(AttrType t) {
  switch (t) {
    case AttrType::Int: return "an integer";
    case AttrType::Float: return "a float";
    case AttrType::Number: return "a number";
  }
  return "?";
}

bool type_matches(AttrType t, const Attr& a) {
  switch (t) {
    case AttrType::Int: return std::holds_alternative<int64_t>(a.value);
    case AttrType::Float: return std::holds_alternative<double>(a.value);
    case AttrType::Number: return true;
  }
  return false;
}

// "axis", "precise", "multiple_of.<d>": what the op does take, for the message.
std::string declared_list(OpKind k) {
  std::vector<std::string> names;
  for (const AttrDecl& d : attrs_of(k))
    names.push_back(d.presence == AttrPresence::PerDim ? fmt::format("{}.<d>", d.name) : std::string(d.name));
  if (names.empty()) return fmt::format("'{}' takes no attributes", name_of(k));
  return fmt::format("'{}' takes only {}", name_of(k), fmt::join(names, ", "));
}

}  // namespace

std::string attr_problem(const Op& op) {
  for (const Attr& a : op.attrs) {
    const AttrDecl* d = find_attr_decl(op.kind, a.name);
    if (d == nullptr) return fmt::format("unexpected attribute '{}': {} (ops.def)", a.name, declared_list(op.kind));
    if (!type_matches(d->type, a))
      return fmt::format("attribute '{}' must be {}, got {}", a.name, type_name(d->type),
                         std::holds_alternative<double>(a.value) ? "a float" : "an integer");
  }
  for (const AttrDecl& d : attrs_of(op.kind))
    if (d.presence == AttrPresence::Required && op.find_attr(d.name) == nullptr)
      return fmt::format("missing attribute '{}' ({}), which '{}' requires (ops.def)", d.name, type_name(d.type),
                         name_of(op.kind));
  return "";
}

}  // namespace tessel::ir
