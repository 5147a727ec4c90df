// parseDimExpr (opforge/shape_text.h): the infix text DimExpr::toString writes, read back.
#include "opforge/shape_text.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace opforge {

namespace {

// Recursive descent over toString's grammar:
//   sum := term (('+' | '-') term)*      term := atom ('*' atom)*
//   atom := '-'? digits | call '(' sum ',' sum ')' | '(' sum ')' | symbol
class DimParser {
 public:
  explicit DimParser(std::string_view t) : t_(t) {}
  Result<DimExpr> all() {
    auto e = sum();
    if (!error_.empty()) return fail();
    skip();
    if (p_ != t_.size()) {
      error_ = "unexpected '" + std::string(1, t_[p_]) + "'";
      return fail();
    }
    return e;
  }

 private:
  static bool special(char c) {
    return c == '+' || c == '-' || c == '*' || c == '(' || c == ')' || c == ',' ||
           std::isspace(static_cast<unsigned char>(c));
  }
  Status fail() const {
    return Status::invalid("dimension expression \"" + std::string(t_) + "\": " + error_ +
                           " at position " + std::to_string(p_));
  }
  void skip() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  bool eat(char c) {
    skip();
    if (p_ < t_.size() && t_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  DimExpr sum() {
    DimExpr e = term();
    while (error_.empty()) {
      if (eat('+'))
        e = e + term();
      else if (eat('-'))
        e = e - term();
      else
        break;
    }
    return e;
  }
  DimExpr term() {
    DimExpr e = atom();
    while (error_.empty() && eat('*')) e = e * atom();
    return e;
  }
  DimExpr atom() {
    if (++depth_ > 200) {
      error_ = "nested too deeply";
      return DimExpr();
    }
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    skip();
    if (p_ >= t_.size()) {
      error_ = "an operand is missing";
      return DimExpr();
    }
    if (eat('(')) {
      DimExpr e = sum();
      if (error_.empty() && !eat(')')) error_ = "')' expected";
      return e;
    }
    const bool negative = eat('-');
    skip();
    const size_t start = p_;
    while (p_ < t_.size() && !special(t_[p_])) ++p_;
    std::string word(t_.substr(start, p_ - start));
    if (word.empty()) {
      error_ = "an operand is missing";
      return DimExpr();
    }
    if (std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      int64_t v = 0;
      for (char c : word)
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) {
          error_ = "constant " + word + " does not fit in 64 bits";
          return DimExpr();
        }
      return DimExpr(negative ? -v : v);
    }
    if (negative) {
      error_ = "'-' before a non-constant operand";
      return DimExpr();
    }
    static const std::pair<const char*, DimExpr::Kind> kCalls[] = {
        {"floordiv", DimExpr::Kind::kFloorDiv},
        {"ceildiv", DimExpr::Kind::kCeilDiv},
        {"min", DimExpr::Kind::kMin},
        {"max", DimExpr::Kind::kMax}};
    for (const auto& [name, kind] : kCalls) {
      if (word != name || !eat('(')) continue;
      DimExpr a = sum();
      if (error_.empty() && !eat(',')) error_ = "',' expected in " + word + "(...)";
      DimExpr b = error_.empty() ? sum() : DimExpr();
      if (error_.empty() && !eat(')')) error_ = "')' expected after " + word + "(...";
      return DimExpr::binary(kind, a, b);
    }
    return DimExpr::symbol(std::move(word));
  }

  std::string_view t_;
  size_t p_ = 0;
  int depth_ = 0;
  std::string error_;
};

}  // namespace

Result<DimExpr> parseDimExpr(std::string_view text) {
  return DimParser(text).all();
}

}  // namespace opforge
