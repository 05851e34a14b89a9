// Tokenizer for the tile IR's text form; private to parser.cpp.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tessel/ir/error.hpp"

namespace tessel::ir::text {

enum class Tok : uint8_t {
  Ident,    // op names, type names, keywords, attribute names, inf, nan
  Value,    // %name          (text holds "name")
  Global,   // @name          (text holds "name")
  Int,      // -?[0-9]+
  Float,    // -?[0-9]+(.[0-9]*)?(e[+-]?[0-9]+)?  with '.' or 'e', or -inf / -nan
  String,   // "..."          (text holds the contents)
  Punct,    // one of ( ) { } [ ] < > , : = ^
  Newline,  // ops are line-oriented, so line ends are tokens
  End,
};

struct Token {
  Tok kind = Tok::End;
  std::string_view text;      // contents (without % @ or quotes)
  std::string_view spelling;  // exactly as written, for error messages
  int line = 1;
  int col = 1;

  bool is(char punct) const { return kind == Tok::Punct && text.size() == 1 && text[0] == punct; }
  bool is_ident(std::string_view word) const { return kind == Tok::Ident && text == word; }
};

// "line L, column C: message", the prefix of every ParseError.
[[noreturn]] inline void parse_error(int line, int col, const std::string& message) {
  throw ParseError(fmt::format("line {}, column {}: {}", line, col, message));
}

// A value type: copying it is how the parser peeks one token ahead.
class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token next() {
    skip_blanks_and_comments();
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= src_.size()) return finish(t, Tok::End, pos_, pos_);
    size_t start = pos_;
    char c = src_[pos_];
    if (c == '\n') {
      bump();
      return finish(t, Tok::Newline, start, start);
    }
    if (c == '%' || c == '@') {
      bump();
      size_t name_start = pos_;
      // Kernel names come from C++ identifiers, maybe qualified or templated, so an
      // @name runs to the '(' that opens the parameter list.
      if (c == '@')
        while (pos_ < src_.size() && src_[pos_] != '(' && !is_space(src_[pos_])) bump();
      else
        while (pos_ < src_.size() && is_ident_char(src_[pos_])) bump();
      if (pos_ == name_start)
        parse_error(t.line, t.col, fmt::format("expected a name after '{}'", c));
      t.text = src_.substr(name_start, pos_ - name_start);
      t.spelling = src_.substr(start, pos_ - start);
      t.kind = c == '%' ? Tok::Value : Tok::Global;
      return t;
    }
    if (is_digit(c) || (c == '-' && pos_ + 1 < src_.size() && is_digit(src_[pos_ + 1])))
      return number(t);
    if (c == '-' && (word_at(pos_ + 1, "inf") || word_at(pos_ + 1, "nan"))) {
      for (int i = 0; i < 4; ++i) bump();
      return finish(t, Tok::Float, start, pos_);
    }
    if (is_ident_start(c)) {
      while (pos_ < src_.size() && is_ident_char(src_[pos_])) bump();
      return finish(t, Tok::Ident, start, pos_);
    }
    if (c == '"') {
      bump();
      size_t body = pos_;
      while (pos_ < src_.size() && src_[pos_] != '"' && src_[pos_] != '\n') bump();
      if (pos_ >= src_.size() || src_[pos_] != '"')
        parse_error(t.line, t.col, "unterminated string");
      t.text = src_.substr(body, pos_ - body);
      bump();
      t.spelling = src_.substr(start, pos_ - start);
      t.kind = Tok::String;
      return t;
    }
    if (std::string_view("(){}[]<>,:=^").find(c) != std::string_view::npos) {
      bump();
      return finish(t, Tok::Punct, start, pos_);
    }
    parse_error(t.line, t.col, fmt::format("unexpected character '{}'", c));
  }

 private:
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
  static bool is_ident_start(char c) { return is_alpha(c) || c == '_'; }
  static bool is_ident_char(char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '$'; }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

  bool word_at(size_t p, std::string_view w) const {
    return src_.substr(p, w.size()) == w &&
           (p + w.size() >= src_.size() || !is_ident_char(src_[p + w.size()]));
  }

  void bump() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skip_blanks_and_comments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        bump();
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') bump();  // the '\n' stays a token
      } else {
        break;
      }
    }
  }

  Token number(Token t) {
    size_t start = pos_;
    bool is_float = false;
    if (src_[pos_] == '-') bump();
    while (pos_ < src_.size() && is_digit(src_[pos_])) bump();
    if (pos_ < src_.size() && src_[pos_] == '.') {
      is_float = true;
      bump();
      while (pos_ < src_.size() && is_digit(src_[pos_])) bump();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && is_digit(src_[p])) {
        is_float = true;
        while (pos_ < p) bump();
        while (pos_ < src_.size() && is_digit(src_[pos_])) bump();
      }
    }
    return finish(t, is_float ? Tok::Float : Tok::Int, start, pos_);
  }

  Token finish(Token t, Tok kind, size_t b, size_t e) const {
    t.kind = kind;
    t.text = t.spelling = src_.substr(b, e - b);
    return t;
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace tessel::ir::text
