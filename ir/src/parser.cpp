// Recursive-descent parser for the printer's text form of the tile IR.
#include "tessel/ir/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "text_lexer.hpp"

namespace tessel::ir {
namespace {

using text::Lexer;
using text::Tok;
using text::Token;

class Parser {
 public:
  explicit Parser(std::string_view src) : lex_(src) { advance(); }

  std::unique_ptr<Function> run() {
    skip_newlines();
    expect_ident("kernel");
    if (tok_.kind != Tok::Global) expected("a kernel name '@name'");
    fn_ = std::make_unique<Function>(std::string(tok_.text));
    advance();
    push_scope();
    expect_punct('(');
    if (!tok_.is(')')) {
      do param();
      while (accept_punct(','));
    }
    expect_punct(')');
    expect_punct('{');
    expect_newline();
    block_body(fn_->body);
    expect_punct('}');
    skip_newlines();
    if (tok_.kind != Tok::End) expected("end of input");
    return std::move(fn_);
  }

 private:
  // ---- tokens -------------------------------------------------------------------------
  void advance() { tok_ = lex_.next(); }
  Token peek() const {
    Lexer copy = lex_;
    return copy.next();
  }

  [[noreturn]] void error_at(const Token& t, const std::string& message) const {
    text::parse_error(t.line, t.col, message);
  }
  [[noreturn]] void expected(std::string_view what) const {
    std::string got = tok_.kind == Tok::Newline ? "end of line"
                      : tok_.kind == Tok::End   ? "end of input"
                                                : fmt::format("'{}'", tok_.spelling);
    error_at(tok_, fmt::format("expected {}, got {}", what, got));
  }

  bool accept_punct(char c) {
    if (!tok_.is(c)) return false;
    advance();
    return true;
  }
  void expect_punct(char c) {
    if (!accept_punct(c)) expected(fmt::format("'{}'", c));
  }
  void expect_ident(std::string_view word) {
    if (!tok_.is_ident(word)) expected(fmt::format("'{}'", word));
    advance();
  }
  void expect_newline() {
    if (tok_.kind != Tok::Newline) expected("end of line");
    advance();
  }
  void skip_newlines() {
    while (tok_.kind == Tok::Newline) advance();
  }

  // ---- names: a stack of scopes, one per region, so a loop body's values vanish after it
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() {
    for (const auto& n : scopes_.back()) names_.erase(n);
    scopes_.pop_back();
  }
  void define(const Token& name, Value* v) {
    std::string key(name.text);
    if (names_.count(key)) error_at(name, fmt::format("redefinition of value %{}", key));
    names_.emplace(key, v);
    scopes_.back().push_back(std::move(key));
  }
  Value* use(const Token& name) const {
    auto it = names_.find(std::string(name.text));
    if (it == names_.end()) error_at(name, fmt::format("use of undefined value %{}", name.text));
    return it->second;
  }

  // ---- literals and types ---------------------------------------------------------------
  int64_t int_literal() {
    if (tok_.kind != Tok::Int) expected("an integer");
    int64_t v = 0;
    auto [end, ec] = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), v);
    if (ec != std::errc() || end != tok_.text.data() + tok_.text.size())
      error_at(tok_, fmt::format("integer '{}' does not fit in 64 bits", tok_.text));
    advance();
    return v;
  }

  double float_literal() {
    std::string_view s = tok_.text;
    bool neg = !s.empty() && s[0] == '-';
    std::string_view mag = neg ? s.substr(1) : s;
    double v = 0;
    if (mag == "inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (mag == "nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size())
        error_at(tok_, fmt::format("float '{}' is out of range", s));
      advance();
      return v;
    }
    advance();
    return neg ? -v : v;
  }

  Scalar scalar() {
    std::optional<Scalar> s;
    if (tok_.kind == Tok::Ident) s = scalar_from_name(tok_.text);
    if (!s) expected("an element type (i1, i8, i16, i32, i64, f16, bf16, f32, f64)");
    advance();
    return *s;
  }

  // f32 | ptr<f16> | i32[128] | ptr<f32>[64,64]
  Type type() {
    Type t;
    if (tok_.is_ident("ptr")) {
      advance();
      expect_punct('<');
      t.dtype = DType{scalar(), true};
      expect_punct('>');
    } else {
      t.dtype = DType{scalar(), false};
    }
    if (accept_punct('[')) {
      if (!tok_.is(']')) {
        do t.shape.push_back(int_literal());
        while (accept_punct(','));
      }
      expect_punct(']');
    }
    return t;
  }

  // ---- kernel parameters ----------------------------------------------------------------
  // %name: TYPE [{div16, equal1}]
  void param() {
    if (tok_.kind != Tok::Value) expected("a parameter name '%name'");
    Token name = tok_;
    advance();
    expect_punct(':');
    Type t = type();
    ParamSpec spec;
    if (accept_punct('{')) {
      do {
        bool* flag = tok_.is_ident("div16") ? &spec.div16 : tok_.is_ident("equal1") ? &spec.equal1 : nullptr;
        if (!flag) expected("'div16' or 'equal1'");
        if (*flag) error_at(tok_, fmt::format("duplicate parameter attribute '{}'", tok_.text));
        *flag = true;
        advance();
      } while (accept_punct(','));
      expect_punct('}');
    }
    define(name, fn_->add_param(std::string(name.text), std::move(t), spec));
  }

  // ---- ops ------------------------------------------------------------------------------
  // Ops up to (not including) the closing '}'; blank lines are allowed between them.
  void block_body(Block& b) {
    for (;;) {
      skip_newlines();
      if (tok_.is('}')) return;
      if (tok_.kind == Tok::End) expected("'}'");
      op(b);
    }
  }

  // {key = val, ...}; integers and floats stay distinct, as the printer wrote them.
  std::vector<Attr> attrs() {
    std::vector<Attr> out;
    expect_punct('{');
    do {
      if (tok_.kind != Tok::Ident) expected("an attribute name");
      Token name = tok_;
      for (const Attr& a : out)
        if (a.name == name.text) error_at(name, fmt::format("duplicate attribute '{}'", name.text));
      advance();
      expect_punct('=');
      Attr a{std::string(name.text), int64_t{0}};
      if (tok_.kind == Tok::Int) a.value = int_literal();
      else if (tok_.kind == Tok::Float || tok_.is_ident("inf") || tok_.is_ident("nan")) a.value = float_literal();
      else expected("an attribute value (integer or float)");
      out.push_back(std::move(a));
    } while (accept_punct(','));
    expect_punct('}');
    std::sort(out.begin(), out.end(), [](const Attr& x, const Attr& y) { return x.name < y.name; });
    return out;
  }

  // loc("file":N)
  SrcLoc loc() {
    expect_ident("loc");
    expect_punct('(');
    if (tok_.kind != Tok::String) expected("a quoted file name");
    std::string_view file = tok_.text;
    advance();
    expect_punct(':');
    Token line_tok = tok_;
    int64_t line = int_literal();
    if (line < 1 || line > std::numeric_limits<uint32_t>::max())
      error_at(line_tok, fmt::format("line number {} is out of range", line));
    expect_punct(')');
    return SrcLoc{fn_->intern(file), static_cast<uint32_t>(line)};
  }

  // { NEWLINE ^(%a: T, ...): NEWLINE ops }
  void region(Op& op) {
    expect_punct('{');
    expect_newline();
    skip_newlines();
    expect_punct('^');
    expect_punct('(');
    op.regions.push_back(std::make_unique<Block>());
    Block& body = *op.regions.back();
    body.parent_op = &op;
    push_scope();
    if (!tok_.is(')')) {
      do {
        if (tok_.kind != Tok::Value) expected("a block argument name '%name'");
        Token name = tok_;
        advance();
        expect_punct(':');
        define(name, fn_->add_block_arg(body, type()));
      } while (accept_punct(','));
    }
    expect_punct(')');
    expect_punct(':');
    expect_newline();
    block_body(body);
    expect_punct('}');
    pop_scope();
  }

  // [%r, ... =] NAME [%a, ...] [{attrs}] [: TYPE, ...] [loc("f":N)] [{ region }]* NEWLINE
  void op(Block& b) {
    std::vector<Token> result_names;
    if (tok_.kind == Tok::Value) {
      for (;;) {
        result_names.push_back(tok_);
        advance();
        if (!accept_punct(',')) break;
        if (tok_.kind != Tok::Value) expected("a result name '%name'");
      }
      expect_punct('=');
    }
    if (tok_.kind != Tok::Ident) expected("an op name");
    Token name_tok = tok_;
    std::optional<OpKind> kind = op_from_name(tok_.text);
    if (!kind) error_at(tok_, fmt::format("unknown op '{}'", tok_.text));
    advance();

    auto node = std::make_unique<Op>();
    Op& op = *node;
    op.kind = *kind;
    op.parent = &b;
    if (tok_.kind == Tok::Value) {
      for (;;) {
        op.operands.push_back(use(tok_));
        advance();
        if (!accept_punct(',')) break;
        if (tok_.kind != Tok::Value) expected("an operand '%name'");
      }
    }
    // '{' opens attributes, or a region when the line ends right after it.
    if (tok_.is('{') && peek().kind != Tok::Newline) op.attrs = attrs();

    std::vector<Type> types;
    Token colon = tok_;
    if (accept_punct(':')) {
      do types.push_back(type());
      while (accept_punct(','));
    }
    if (types.size() != result_names.size()) {
      if (types.empty()) expected(fmt::format("':' and the result types of '{}'", name_tok.text));
      error_at(colon, fmt::format("op '{}' names {} result(s) but has {} result type(s)", name_tok.text,
                                  result_names.size(), types.size()));
    }
    // Results exist (in builder order, before the body's arguments) but are named only
    // after the regions: a loop's body cannot see the loop's own results.
    for (size_t i = 0; i < types.size(); ++i) {
      Value* v = fn_->new_value(std::move(types[i]));
      v->def = &op;
      v->block = &b;
      v->index = static_cast<int>(i);
      op.results.push_back(v);
    }
    if (tok_.is_ident("loc")) op.loc = loc();
    while (tok_.is('{')) region(op);
    expect_newline();
    for (size_t i = 0; i < result_names.size(); ++i) define(result_names[i], op.results[i]);
    b.ops.push_back(std::move(node));
  }

  Lexer lex_;
  Token tok_;
  std::unique_ptr<Function> fn_;
  std::unordered_map<std::string, Value*> names_;  // lookup only; never iterated
  std::vector<std::vector<std::string>> scopes_;
};

}  // namespace

std::unique_ptr<Function> parse(std::string_view text) { return Parser(text).run(); }

}  // namespace tessel::ir
