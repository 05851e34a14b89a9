// Printer -> parser -> printer round trips for every op, and the parser's error messages.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "all_ops_kernel.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"

using namespace tessel;
using namespace tessel::ir;

namespace {

std::vector<const Op*> ops_in_order(const Function& f) {
  std::vector<const Op*> out;
  walk(f.body, [&](const Op& op) { out.push_back(&op); });
  return out;
}

bool same_attr_value(const std::variant<int64_t, double>& a, const std::variant<int64_t, double>& b) {
  if (a.index() != b.index()) return false;
  if (auto* i = std::get_if<int64_t>(&a)) return *i == std::get<int64_t>(b);
  double x = std::get<double>(a), y = std::get<double>(b);
  if (std::isnan(x)) return std::isnan(y);
  return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);  // keeps -0.0 apart from 0.0
}

// Checks that `b` has the structure of `a`: same ops, attrs, types, locs and def-use edges.
void check_same_structure(const Function& a, const Function& b) {
  REQUIRE(a.name == b.name);
  REQUIRE(a.params.size() == b.params.size());
  std::unordered_map<const Value*, const Value*> map;  // lookup only
  for (size_t i = 0; i < a.params.size(); ++i) {
    CHECK(a.params[i].name == b.params[i].name);
    CHECK(a.params[i].spec == b.params[i].spec);
    CHECK(a.body.args[i]->type == b.body.args[i]->type);
    map[a.body.args[i]] = b.body.args[i];
  }
  auto oa = ops_in_order(a), ob = ops_in_order(b);
  REQUIRE(oa.size() == ob.size());
  for (size_t i = 0; i < oa.size(); ++i) {
    const Op &x = *oa[i], &y = *ob[i];
    INFO("op #", i, " '", x.name(), "'");
    REQUIRE(x.kind == y.kind);
    REQUIRE(x.attrs.size() == y.attrs.size());
    for (size_t j = 0; j < x.attrs.size(); ++j) {
      CHECK(x.attrs[j].name == y.attrs[j].name);
      CHECK(same_attr_value(x.attrs[j].value, y.attrs[j].value));
    }
    CHECK(x.loc.line == y.loc.line);
    CHECK(std::string(x.loc.file) == std::string(y.loc.file));
    REQUIRE(x.operands.size() == y.operands.size());
    for (size_t j = 0; j < x.operands.size(); ++j) {
      REQUIRE(map.count(x.operands[j]) == 1);
      CHECK(map[x.operands[j]] == y.operands[j]);
    }
    REQUIRE(x.results.size() == y.results.size());
    for (size_t j = 0; j < x.results.size(); ++j) {
      CHECK(x.results[j]->type == y.results[j]->type);
      CHECK(y.results[j]->def == &y);
      map[x.results[j]] = y.results[j];
    }
    REQUIRE(x.regions.size() == y.regions.size());
    for (size_t r = 0; r < x.regions.size(); ++r) {
      const Block &bx = *x.regions[r], &by = *y.regions[r];
      CHECK(by.parent_op == &y);
      REQUIRE(bx.args.size() == by.args.size());
      for (size_t j = 0; j < bx.args.size(); ++j) {
        CHECK(bx.args[j]->type == by.args[j]->type);
        map[bx.args[j]] = by.args[j];
      }
    }
    CHECK(y.parent != nullptr);
  }
}

std::string parse_error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "<parsed without error>";
}

}  // namespace

TEST_CASE("round trip: a kernel using every op kind prints, parses and prints identically") {
  auto f = testing::build_all_ops_kernel();
  REQUIRE_NOTHROW(verify(*f));
  for (bool locs : {false, true}) {
    INFO("locs = ", locs);
    std::string text = print(*f, PrintOptions{locs});
    auto g = parse(text);
    CHECK(print(*g, PrintOptions{locs}) == text);
    REQUIRE_NOTHROW(verify(*g));
    if (locs) check_same_structure(*f, *g);
  }
  // Without locs in the text, the parsed ops carry none.
  auto g = parse(print(*f));
  for (const Op* op : ops_in_order(*g)) CHECK(!op->loc.known());
}

TEST_CASE("round trip: every op kind in ops.def appears in the round-trip kernel") {
  auto f = testing::build_all_ops_kernel();
  auto g = parse(print(*f));
  std::vector<int> seen(num_op_kinds(), 0);
  for (const Op* op : ops_in_order(*g)) ++seen[static_cast<int>(op->kind)];
  for (int k = 0; k < num_op_kinds(); ++k)
    CHECK_MESSAGE(seen[k] > 0, "op '", name_of(static_cast<OpKind>(k)),
                  "' is missing from build_all_ops_kernel (tests/ir/all_ops_kernel.hpp)");
}

TEST_CASE("round trip: the printed text has the documented forms") {
  auto f = testing::build_all_ops_kernel();
  std::string text = print(*f, PrintOptions{true});
  CHECK(text.rfind("kernel @all_ops(%x: ptr<f32> {div16}, %y: ptr<f16>, %out: ptr<f32> {div16, equal1}, "
                   "%n: i32 {div16}, %stride: i32 {equal1}, %seed: i64) {\n", 0) == 0);
  CHECK(text.find("{value = inf}") != std::string::npos);
  CHECK(text.find("{value = -inf}") != std::string::npos);
  CHECK(text.find("{value = nan}") != std::string::npos);
  CHECK(text.find("{value = -0.0}") != std::string::npos);
  CHECK(text.find("{value = 1e-30}") != std::string::npos);
  CHECK(text.find("{value = -9223372036854775808} : i64") != std::string::npos);
  CHECK(text.find("loc(\"other file.cpp\":7)") != std::string::npos);
  CHECK(text.find("^(%") != std::string::npos);
  CHECK(text.find("{end = 7, start = 3} : i32[4]") != std::string::npos);
}

TEST_CASE("round trip: random float and integer attributes come back bit for bit") {
  std::mt19937_64 rng(20240611);
  Function f("attrs");
  Builder b(f);
  std::vector<std::variant<int64_t, double>> want;
  for (int i = 0; i < 3000; ++i) {
    uint64_t bits = rng();
    if (i % 3 == 0) {
      double d = std::bit_cast<double>(bits);  // any pattern: subnormals, huge, inf, nan
      if (i % 9 == 0) d = std::ldexp(static_cast<double>(bits >> 11), -static_cast<int>(rng() % 80));
      b.const_float(d, Type{f32(), {}});
      want.emplace_back(d);
    } else if (i % 3 == 1) {
      int64_t v = static_cast<int64_t>(bits) >> (rng() % 64);  // every magnitude, both signs
      b.const_int(v, Type{i64(), {}});
      want.emplace_back(v);
    } else {
      double d = static_cast<double>(static_cast<int64_t>(bits >> 20)) - 4e12;  // integral floats
      b.const_float(d, Type{DType{Scalar::f64}, {}});
      want.emplace_back(d);
    }
  }
  auto g = parse(print(f));
  auto ops = ops_in_order(*g);
  REQUIRE(ops.size() == want.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    INFO("constant #", i, ": ", format_attr_value(want[i]));
    CHECK(same_attr_value(ops[i]->find_attr("value")->value, want[i]));
  }
}

TEST_CASE("parser: hand-written text with comments, blank lines and odd spacing") {
  const char* text = R"(// a comment before the kernel
kernel @my::kernel<3>(%p: ptr<f32> {equal1, div16},%n: i32) {

  %c = constant {value = 5} : i32   // trailing comment
  %t = splat %c : i32[ 16 ]
  %r, %s = for %c, %n, %c, %t, %c : i32[16], i32 {
    ^(%i: i32, %a: i32[16], %b: i32):

    %a2 = add %a, %a : i32[16]
    yield %a2, %i
  }
  store %p, %n loc("x.cpp":3)
}
)";
  auto f = parse(text);
  CHECK(f->name == "my::kernel<3>");
  REQUIRE(f->params.size() == 2);
  CHECK(f->params[0].spec == ParamSpec{true, true});
  CHECK(f->params[1].spec == ParamSpec{false, false});
  REQUIRE(f->body.ops.size() == 4);
  const Op& loop = *f->body.ops[2];
  CHECK(loop.kind == OpKind::For);
  CHECK(loop.results.size() == 2);
  CHECK(loop.body().args.size() == 3);
  CHECK(loop.body().ops.size() == 2);
  CHECK(loop.body().ops[1]->operands[1] == loop.body().args[0]);
  CHECK(f->body.ops[3]->loc.line == 3);
  CHECK(std::string(f->body.ops[3]->loc.file) == "x.cpp");
  // Results are typed as the text says, even where a result rule would infer otherwise.
  CHECK(loop.body().ops[0]->results[0]->type == Type{i32(), {16}});
  CHECK_THROWS_AS(verify(*f), VerifyError);  // store of an i32 through ptr<f32>
}

TEST_CASE("parser: results typed as written, not re-inferred") {
  auto f = parse("kernel @k(%a: f32) {\n  %0 = add %a, %a : f16\n}\n");
  CHECK(f->body.ops[0]->results[0]->type == Type{DType{Scalar::f16}, {}});
  // An op line without results has none, even if its result rule would give one.
  auto g = parse("kernel @k(%a: f32) {\n  add %a, %a\n}\n");
  CHECK(g->body.ops[0]->results.empty());
}

TEST_CASE("parser: error messages name the line, the column and what was expected") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"kernal @k() {\n}\n", "line 1, column 1: expected 'kernel', got 'kernal'"},
      {"kernel k() {\n}\n", "line 1, column 8: expected a kernel name '@name', got 'k'"},
      {"kernel @k(%a i32) {\n}\n", "line 1, column 14: expected ':', got 'i32'"},
      {"kernel @k(%a: f33) {\n}\n",
       "line 1, column 15: expected an element type (i1, i8, i16, i32, i64, f16, bf16, f32, f64), got 'f33'"},
      {"kernel @k(%a: ptr<f32) {\n}\n", "line 1, column 22: expected '>', got ')'"},
      {"kernel @k(%a: i32 {div8}) {\n}\n", "line 1, column 20: expected 'div16' or 'equal1', got 'div8'"},
      {"kernel @k() {\n  %0 = add %1, %2 : i32\n}\n", "line 2, column 12: use of undefined value %1"},
      {"kernel @k() {\n  %0 = frobnicate : i32\n}\n", "line 2, column 8: unknown op 'frobnicate'"},
      {"kernel @k(%a: i32) {\n  %0 = add %a, %a\n}\n",
       "line 2, column 18: expected ':' and the result types of 'add', got end of line"},
      {"kernel @k(%a: i32) {\n  %0, %1 = add %a, %a : i32\n}\n",
       "line 2, column 23: op 'add' names 2 result(s) but has 1 result type(s)"},
      {"kernel @k(%a: i32) {\n  %a = add %a, %a : i32\n}\n", "line 2, column 3: redefinition of value %a"},
      {"kernel @k() {\n  %0 = constant {value = 1, value = 2} : i32\n}\n",
       "line 2, column 29: duplicate attribute 'value'"},
      {"kernel @k() {\n  %0 = constant {value = x} : i32\n}\n",
       "line 2, column 26: expected an attribute value (integer or float), got 'x'"},
      {"kernel @k() {\n  %0 = constant {value = 99999999999999999999} : i64\n}\n",
       "line 2, column 26: integer '99999999999999999999' does not fit in 64 bits"},
      {"kernel @k() {\n  %0 = constant {value = 1} : i32 loc(\"f.cpp\" 3)\n}\n",
       "line 2, column 47: expected ':', got '3'"},
      {"kernel @k() {\n  %0 = constant {value = 1} : i32 loc(\"f.cpp:3)\n}\n",
       "line 2, column 39: unterminated string"},
      {"kernel @k() {\n  %0 = constant {value = 1} : i32 extra\n}\n",
       "line 2, column 35: expected end of line, got 'extra'"},
      {"kernel @k() {\n  %0 = constant {value = 1} : i32\n", "line 3, column 1: expected '}', got end of input"},
      {"kernel @k() {\n}\nkernel @j() {\n}\n", "line 3, column 1: expected end of input, got 'kernel'"},
      {"kernel @k() {\n  %0 = constant {value = 1} : i32 ?\n}\n", "line 2, column 35: unexpected character '?'"},
      {"kernel @k(%n: i32) {\n  for %n, %n, %n {\n  ^(%i: i32):\n    %x = add %i, %i : i32\n    yield\n  }\n"
       "  %y = add %x, %x : i32\n}\n",
       "line 7, column 12: use of undefined value %x"},
      {"kernel @k(%n: i32) {\n  %r = for %n, %n, %n, %n : i32 {\n  ^(%i: i32, %c: i32):\n    yield %r\n  }\n}\n",
       "line 4, column 11: use of undefined value %r"},
      {"kernel @k(%n: i32) {\n  for %n, %n, %n {\n  (%i: i32):\n  }\n}\n", "line 3, column 3: expected '^', got '('"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(parse_error_of(c.text) == c.message);
  }
}

TEST_CASE("parser and verifier: damaged text throws ParseError or VerifyError, nothing else") {
  auto f = testing::build_all_ops_kernel();
  const std::string text = print(*f, PrintOptions{true});
  int parsed = 0, rejected_by_verify = 0, rejected_by_parse = 0;
  auto attempt = [&](const std::string& t) {
    INFO(t);
    try {
      auto g = parse(t);
      ++parsed;
      try {
        verify(*g);
      } catch (const VerifyError&) {
        ++rejected_by_verify;
      }
    } catch (const ParseError& e) {
      CHECK(std::string(e.what()).rfind("line ", 0) == 0);
      ++rejected_by_parse;
    }
  };
  // Every prefix that cuts the text mid-kernel is a parse error.
  for (size_t n = 0; n + 1 < text.size(); n += 7) {
    std::string t = text.substr(0, n);
    INFO("prefix of ", n, " characters");
    CHECK_THROWS_AS(parse(t), ParseError);
  }
  // Random edits: a character replaced, deleted or inserted, or two lines swapped.
  std::mt19937 rng(7);
  const std::string alphabet = "%:,{}[]()<>=^\"0123456789 \nabdefilnprstx-._";
  for (int i = 0; i < 4000; ++i) {
    std::string t = text;
    size_t pos = rng() % t.size();
    switch (rng() % 4) {
      case 0: t[pos] = alphabet[rng() % alphabet.size()]; break;
      case 1: t.erase(pos, 1); break;
      case 2: t.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      default: {
        std::vector<std::string> lines;
        size_t s = 0;
        for (size_t e; (e = t.find('\n', s)) != std::string::npos; s = e + 1) lines.push_back(t.substr(s, e - s + 1));
        std::swap(lines[rng() % lines.size()], lines[rng() % lines.size()]);
        t.clear();
        for (auto& l : lines) t += l;
      }
    }
    attempt(t);
  }
  // Both layers saw some of the damage (the edits are varied enough to reach each).
  CHECK(rejected_by_parse > 1000);
  CHECK(rejected_by_verify > 50);
  CHECK(parsed > rejected_by_verify);
}
