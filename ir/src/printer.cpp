// Text printer for the tile IR; output depends only on the IR's structure.
#include "tessel/ir/printer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <unordered_map>

namespace tessel::ir {

std::string format_attr_value(const std::variant<int64_t, double>& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  double d = std::get<double>(v);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);  // shortest round-trip form
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

namespace {

class Printer {
 public:
  Printer(const Function& f, PrintOptions o) : fn_(f), opts_(o) {}

  std::string run() {
    out_ += fmt::format("kernel @{}(", fn_.name);
    for (size_t i = 0; i < fn_.body.args.size(); ++i) {
      const Value* a = fn_.body.args[i];
      names_[a] = "%" + fn_.params[i].name;
      if (i) out_ += ", ";
      out_ += fmt::format("{}: {}", names_[a], a->type.str());
      const ParamSpec& s = fn_.params[i].spec;
      if (s.div16 && s.equal1) out_ += " {div16, equal1}";
      else if (s.div16) out_ += " {div16}";
      else if (s.equal1) out_ += " {equal1}";
    }
    out_ += ") {\n";
    block(fn_.body, 1);
    out_ += "}\n";
    return std::move(out_);
  }
  std::unordered_map<const Value*, std::string> names() && { return std::move(names_); }

 private:
  const std::string& name(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    return names_[v] = fmt::format("%{}", next_++);
  }

  void block(const Block& b, int depth) {
    for (const auto& op : b.ops) line(*op, depth);
  }

  void line(const Op& op, int depth) {
    std::string s(2 * depth, ' ');
    for (size_t i = 0; i < op.results.size(); ++i) s += (i ? ", " : "") + name(op.results[i]);
    if (!op.results.empty()) s += " = ";
    s += op.name();
    for (size_t i = 0; i < op.operands.size(); ++i) s += (i ? ", " : " ") + name(op.operands[i]);
    if (!op.attrs.empty()) {
      s += " {";
      for (size_t i = 0; i < op.attrs.size(); ++i)
        s += fmt::format("{}{} = {}", i ? ", " : "", op.attrs[i].name, format_attr_value(op.attrs[i].value));
      s += "}";
    }
    if (!op.results.empty()) {
      s += " : ";
      for (size_t i = 0; i < op.results.size(); ++i) s += (i ? ", " : "") + op.results[i]->type.str();
    }
    if (opts_.locs && op.loc.known()) s += fmt::format(" loc(\"{}\":{})", op.loc.file, op.loc.line);
    if (!op.regions.empty()) {
      for (const auto& r : op.regions) {
        s += " {\n" + std::string(2 * depth, ' ') + "^(";
        for (size_t i = 0; i < r->args.size(); ++i)
          s += fmt::format("{}{}: {}", i ? ", " : "", name(r->args[i]), r->args[i]->type.str());
        s += "):\n";
        out_ += s;
        block(*r, depth + 1);
        s = std::string(2 * depth, ' ') + "}";
      }
    }
    out_ += s + "\n";
  }

  const Function& fn_;
  PrintOptions opts_;
  std::string out_;
  std::unordered_map<const Value*, std::string> names_;  // lookup only; never iterated
  int next_ = 0;
};

}  // namespace

std::string print(const Function& f, PrintOptions opts) { return Printer(f, opts).run(); }

std::unordered_map<const Value*, std::string> value_names(const Function& f) {
  Printer p(f, {});
  p.run();
  return std::move(p).names();
}

}  // namespace tessel::ir
