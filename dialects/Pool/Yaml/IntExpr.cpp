//===- IntExpr.cpp - Checked integer expressions for model files ----------===//
//
// Recursive descent over: expr := term (('+'|'-') term)*;
// term := unary (('*'|'/'|'%') unary)*; unary := '-' unary | primary;
// primary := number | name | name '(' expr, expr ')' | 'sizeof' '(' dtype ')'
//            | '(' expr ')'.
// sizeof(D) is the bytes of one element of D: a dtype name (bf16) or a
// dtype parameter (kv_dtype).
// All arithmetic is checked 64-bit; '/' floors, '%' is its remainder.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/Yaml/ModelDecl.h"

#include "poolrt/StateArena.h"

#include <cctype>

namespace pool::yaml {
namespace {

class Parser {
public:
  Parser(const std::string &text,
         const std::vector<std::pair<std::string, int64_t>> &params,
         const std::vector<std::pair<std::string, std::string>> &dtypes)
      : s(text), params(params), dtypes(dtypes) {}

  bool parse(int64_t &out, std::string &msg) {
    skip();
    if (pos == s.size())
      return fail("empty expression", msg);
    if (!expr(out, msg))
      return false;
    skip();
    if (pos != s.size())
      return fail(std::string("unexpected '") + s[pos] + "'", msg);
    return true;
  }

private:
  const std::string &s;
  const std::vector<std::pair<std::string, int64_t>> &params;
  const std::vector<std::pair<std::string, std::string>> &dtypes;
  size_t pos = 0;
  int depth = 0;

  bool fail(const std::string &what, std::string &msg) {
    msg = what + " at offset " + std::to_string(pos) + " in '" + s + "'";
    return false;
  }
  void skip() {
    while (pos < s.size() && std::isspace((unsigned char)s[pos]))
      ++pos;
  }
  bool overflow(std::string &msg) {
    msg = "'" + s + "' overflows 64-bit integer arithmetic";
    return false;
  }

  bool expr(int64_t &v, std::string &msg) {
    if (!term(v, msg))
      return false;
    for (;;) {
      skip();
      if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-'))
        return true;
      char op = s[pos++];
      int64_t r;
      if (!term(r, msg))
        return false;
      bool o = op == '+' ? __builtin_add_overflow(v, r, &v)
                         : __builtin_sub_overflow(v, r, &v);
      if (o)
        return overflow(msg);
    }
  }

  bool term(int64_t &v, std::string &msg) {
    if (!unary(v, msg))
      return false;
    for (;;) {
      skip();
      if (pos >= s.size() || (s[pos] != '*' && s[pos] != '/' && s[pos] != '%'))
        return true;
      char op = s[pos++];
      int64_t r;
      if (!unary(r, msg))
        return false;
      if (op == '*') {
        if (__builtin_mul_overflow(v, r, &v))
          return overflow(msg);
        continue;
      }
      if (r == 0) {
        msg = "division by zero in '" + s + "'";
        return false;
      }
      if (v == INT64_MIN && r == -1)
        return overflow(msg);
      int64_t q = v / r, m = v % r;
      if (m != 0 && ((m < 0) != (r < 0))) {
        --q;
        m += r;
      }
      v = op == '/' ? q : m;
    }
  }

  bool unary(int64_t &v, std::string &msg) {
    skip();
    if (pos < s.size() && s[pos] == '-') {
      ++pos;
      if (++depth > 64)
        return fail("expression nests too deeply", msg);
      if (!unary(v, msg))
        return false;
      --depth;
      if (v == INT64_MIN)
        return overflow(msg);
      v = -v;
      return true;
    }
    if (pos < s.size() && s[pos] == '+') {
      ++pos;
      return unary(v, msg);
    }
    return primary(v, msg);
  }

  bool primary(int64_t &v, std::string &msg) {
    skip();
    if (pos >= s.size())
      return fail("expected a number, a name or '('", msg);
    char c = s[pos];
    if (c == '(') {
      ++pos;
      if (++depth > 64)
        return fail("expression nests too deeply", msg);
      if (!expr(v, msg))
        return false;
      --depth;
      skip();
      if (pos >= s.size() || s[pos] != ')')
        return fail("expected ')'", msg);
      ++pos;
      return true;
    }
    if (std::isdigit((unsigned char)c)) {
      v = 0;
      bool digit = false;
      while (pos < s.size() &&
             (std::isdigit((unsigned char)s[pos]) || s[pos] == '_')) {
        if (s[pos] != '_') {
          if (__builtin_mul_overflow(v, 10, &v) ||
              __builtin_add_overflow(v, s[pos] - '0', &v))
            return overflow(msg);
          digit = true;
        }
        ++pos;
      }
      if (pos < s.size() && (std::isalpha((unsigned char)s[pos]) ||
                             s[pos] == '.'))
        return fail(std::string("expected an integer, found '") + s[pos] + "'",
                    msg);
      return digit || fail("expected a digit", msg);
    }
    if (std::isalpha((unsigned char)c) || c == '_') {
      size_t start = pos;
      while (pos < s.size() &&
             (std::isalnum((unsigned char)s[pos]) || s[pos] == '_'))
        ++pos;
      std::string name = s.substr(start, pos - start);
      skip();
      if (pos < s.size() && s[pos] == '(')
        return name == "sizeof" ? sizeOf(v, msg) : call(name, v, msg);
      for (const auto &[p, d] : dtypes)
        if (p == name) {
          msg = "'" + name + "' is a dtype parameter (" + d + "), not a number, in '" +
                s + "' (sizeof(" + name + ") is its element size)";
          return false;
        }
      for (const auto &[p, val] : params)
        if (p == name) {
          v = val;
          return true;
        }
      std::string known; // the model's block_size is not a declared param
      for (const auto &[p, val] : params)
        if (p != "block_size" && p != "sliding_window")
          known += (known.empty() ? "" : ", ") + p;
      msg = "unknown parameter '" + name + "' in '" + s + "'" +
            (known.empty() ? std::string(" (no params are declared)")
                           : " (declared: " + known + ")");
      return false;
    }
    return fail(std::string("unexpected '") + c + "'", msg);
  }

  /// sizeof '(' dtype-name | dtype-parameter ')'.
  bool sizeOf(int64_t &v, std::string &msg) {
    ++pos; // '('
    skip();
    size_t start = pos;
    while (pos < s.size() && (std::isalnum((unsigned char)s[pos]) || s[pos] == '_'))
      ++pos;
    std::string name = s.substr(start, pos - start);
    skip();
    if (name.empty() || pos >= s.size() || s[pos] != ')')
      return fail("expected sizeof(DTYPE): a dtype name or a dtype parameter", msg);
    ++pos;
    std::string dtype = name;
    for (const auto &[p, d] : dtypes)
      if (p == name)
        dtype = d;
    std::optional<poolrt::DType> t = poolrt::parseDType(dtype);
    if (!t) {
      msg = "sizeof(" + name + "): not a dtype (" + poolrt::dtypeNameList() +
            ") nor a dtype parameter in '" + s + "'";
      return false;
    }
    v = poolrt::dtypeSize(*t);
    return true;
  }

  bool call(const std::string &name, int64_t &v, std::string &msg) {
    if (name != "ceil_div" && name != "align_up" && name != "min" &&
        name != "max") {
      msg = "unknown function '" + name +
            "' (expected ceil_div, align_up, min, max or sizeof) in '" + s + "'";
      return false;
    }
    ++pos; // '('
    if (++depth > 64)
      return fail("expression nests too deeply", msg);
    int64_t a, b;
    if (!expr(a, msg))
      return false;
    skip();
    if (pos >= s.size() || s[pos] != ',')
      return fail("expected ',' in " + name + "(a, b)", msg);
    ++pos;
    if (!expr(b, msg))
      return false;
    skip();
    if (pos >= s.size() || s[pos] != ')')
      return fail("expected ')'", msg);
    ++pos;
    --depth;
    if (name == "min") {
      v = a < b ? a : b;
      return true;
    }
    if (name == "max") {
      v = a > b ? a : b;
      return true;
    }
    if (b <= 0 || a < 0) {
      msg = name + " needs a >= 0 and b >= 1 in '" + s + "'";
      return false;
    }
    int64_t up;
    if (__builtin_add_overflow(a, b - 1, &up))
      return overflow(msg);
    v = name == "ceil_div" ? up / b : up / b * b;
    if (name == "align_up" && v / b != up / b)
      return overflow(msg);
    return true;
  }
};

} // namespace

bool evalIntExpr(const std::string &text,
                 const std::vector<std::pair<std::string, int64_t>> &params,
                 int64_t &value, std::string &message) {
  static const std::vector<std::pair<std::string, std::string>> none;
  return evalIntExpr(text, params, none, value, message);
}

bool evalIntExpr(const std::string &text,
                 const std::vector<std::pair<std::string, int64_t>> &params,
                 const std::vector<std::pair<std::string, std::string>> &dtypes,
                 int64_t &value, std::string &message) {
  Parser p(text, params, dtypes);
  return p.parse(value, message);
}

std::string YamlError::str() const {
  std::string s = file;
  if (loc.line > 0)
    s += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  return s + ": error: " + message;
}

} // namespace pool::yaml
