// Value, Op, Block and Function bookkeeping; use replacement and counting.
#include "tessel/ir/ir.hpp"

#include <algorithm>

namespace tessel::ir {

const Attr* Op::find_attr(std::string_view n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

bool Op::has_attr(std::string_view n) const { return find_attr(n) != nullptr; }

int64_t Op::int_attr(std::string_view n) const {
  const Attr* a = find_attr(n);
  TESSEL_ASSERT(a && std::holds_alternative<int64_t>(a->value),
                std::string(name()) + " needs integer attribute " + std::string(n));
  return std::get<int64_t>(a->value);
}

double Op::float_attr(std::string_view n) const {
  const Attr* a = find_attr(n);
  TESSEL_ASSERT(a, std::string(name()) + " needs attribute " + std::string(n));
  if (auto* i = std::get_if<int64_t>(&a->value)) return static_cast<double>(*i);
  return std::get<double>(a->value);
}

void Op::set_attr(std::string_view n, std::variant<int64_t, double> v) {
  for (auto& a : attrs)
    if (a.name == n) {
      a.value = v;
      return;
    }
  attrs.push_back(Attr{std::string(n), v});
  std::sort(attrs.begin(), attrs.end(), [](const Attr& x, const Attr& y) { return x.name < y.name; });
}

bool Block::is_within(const Block* outer) const {
  for (const Block* b = this; b; b = b->parent_op ? b->parent_op->parent : nullptr)
    if (b == outer) return true;
  return false;
}

Function::Function(std::string n) : name(std::move(n)) {}

Value* Function::new_value(Type t) {
  auto v = std::make_unique<Value>();
  v->type = std::move(t);
  v->id = static_cast<uint32_t>(values_.size());
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Function::add_block_arg(Block& b, Type t) {
  Value* v = new_value(std::move(t));
  v->block = &b;
  v->index = static_cast<int>(b.args.size());
  b.args.push_back(v);
  return v;
}

Value* Function::add_param(std::string pname, Type t, ParamSpec spec) {
  params.push_back(Param{std::move(pname), spec});
  return add_block_arg(body, std::move(t));
}

const char* Function::intern(std::string_view s) {
  for (const auto& x : strings_)
    if (x == s) return x.c_str();
  strings_.emplace_back(s);
  return strings_.back().c_str();
}

void replace_all_uses(Block& b, Value* from, Value* to) {
  walk(b, [&](Op& op) {
    for (auto& v : op.operands)
      if (v == from) v = to;
  });
}

std::vector<int> count_uses(const Function& f) {
  std::vector<int> uses(f.num_values(), 0);
  walk(f.body, [&](const Op& op) {
    for (const Value* v : op.operands) ++uses[v->id];
  });
  return uses;
}

}  // namespace tessel::ir
