//===- StateTransfer.cpp - How a backend hands per-request state over -----===//

#include "poolrt/StateTransfer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

namespace poolrt {

Result<StateTransfer> StateTransfer::fork(int64_t tokens) {
  return make("fork", tokens, std::nullopt);
}

Result<StateTransfer> StateTransfer::copy(std::string layoutId) {
  return make("copy", 0, std::move(layoutId));
}

Result<StateTransfer> StateTransfer::make(const std::string &kind,
                                          int64_t forkTokens,
                                          std::optional<std::string> layout) {
  StateTransfer t;
  t.forkTokens_ = forkTokens;
  if (kind == "copy") {
    if (forkTokens != 0)
      return Error::invalid("copy transfer cannot bind successor tokens");
    if (!layout || layout->empty())
      return Error::invalid(
          "copy transfer requires a non-empty PAGE layout id");
    t.kind_ = TransferKind::Copy;
    t.layout_ = std::move(layout);
    return t;
  }
  if (kind == "fork") {
    if (forkTokens <= 0)
      return Error::invalid("fork transfer requires positive fork_tokens");
    if (layout)
      return Error::invalid("fork transfer cannot declare a PAGE layout");
    t.kind_ = TransferKind::Fork;
    return t;
  }
  if (kind == "none") {
    if (forkTokens != 0 || layout)
      return Error::invalid(
          "none transfer cannot carry tokens or a PAGE layout");
    return t;
  }
  return Error::invalid("unknown state transfer kind '" + kind + "'");
}

double StateTransfer::successorRoom() const {
  if (kind_ == TransferKind::None)
    return std::numeric_limits<double>::infinity();
  return double(forkTokens_);
}

//===----------------------------------------------------------------------===//
// Wire form: a strict reader for one flat JSON object.
//===----------------------------------------------------------------------===//

namespace {

void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  out += '"';
}

struct WireValue {
  enum Type { String, Integer, Real, Bool, Null, Composite } type = Null;
  std::string text;    // String: the decoded text; otherwise the source text
  int64_t integer = 0; // Integer only
  bool integerFits = true;
};

class WireReader {
public:
  explicit WireReader(const std::string &s) : s(s) {}

  /// Parses the whole input as one object of scalar (or skipped composite)
  /// values. Keys must be unique.
  std::optional<Error>
  readObject(std::vector<std::pair<std::string, WireValue>> &members) {
    skipSpace();
    if (!eat('{')) {
      WireValue other;
      if (!readValue(other, 0) || (skipSpace(), pos != s.size()))
        return syntax();
      return Error::invalid("state transfer capability must be a mapping");
    }
    skipSpace();
    if (!eat('}')) {
      do {
        skipSpace();
        std::string key;
        if (!readString(key))
          return syntax();
        skipSpace();
        if (!eat(':'))
          return syntax();
        WireValue v;
        if (!readValue(v, 0))
          return syntax();
        for (const auto &m : members)
          if (m.first == key)
            return Error::invalid(
                "invalid state transfer capability: duplicate field '" + key +
                "'");
        members.emplace_back(std::move(key), std::move(v));
        skipSpace();
      } while (eat(','));
      if (!eat('}'))
        return syntax();
    }
    skipSpace();
    if (pos != s.size())
      return syntax();
    return std::nullopt;
  }

private:
  Error syntax() const {
    return Error::invalid("state transfer capability is not valid JSON (at "
                          "byte " +
                          std::to_string(pos) + ")");
  }
  void skipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' ||
                              s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool eat(char c) {
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }
  static void putUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  bool hex4(uint32_t &out) {
    if (pos + 4 > s.size())
      return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s[pos++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        out |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        out |= uint32_t(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  bool readString(std::string &out) {
    if (!eat('"'))
      return false;
    while (pos < s.size()) {
      unsigned char c = (unsigned char)s[pos++];
      if (c == '"')
        return true;
      if (c < 0x20)
        return false;
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (pos >= s.size())
        return false;
      char e = s[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t lo;
          if (!eat('\\') || !eat('u') || !hex4(lo) || lo < 0xDC00 ||
              lo >= 0xE000)
            return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return false;
        }
        putUtf8(out, cp);
        break;
      }
      default:
        return false;
      }
    }
    return false;
  }
  bool digits() {
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9')
      ++pos;
    return pos > start;
  }
  bool readNumber(WireValue &v) {
    size_t start = pos;
    eat('-');
    if (eat('0')) {
      // no leading zeros
    } else if (!digits()) {
      return false;
    }
    bool integral = true;
    if (eat('.')) {
      integral = false;
      if (!digits())
        return false;
    }
    if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
      ++pos;
      integral = false;
      if (pos < s.size() && (s[pos] == '+' || s[pos] == '-'))
        ++pos;
      if (!digits())
        return false;
    }
    v.text = s.substr(start, pos - start);
    if (!integral) {
      v.type = WireValue::Real;
      return true;
    }
    v.type = WireValue::Integer;
    // Accumulate as a negative number so INT64_MIN fits.
    bool negative = v.text[0] == '-';
    int64_t acc = 0;
    for (size_t i = negative ? 1 : 0; i < v.text.size(); ++i) {
      int d = v.text[i] - '0';
      if (acc < (std::numeric_limits<int64_t>::min() + d) / 10) {
        v.integerFits = false;
        return true;
      }
      acc = acc * 10 - d;
    }
    if (!negative) {
      if (acc == std::numeric_limits<int64_t>::min()) {
        v.integerFits = false;
        return true;
      }
      acc = -acc;
    }
    v.integer = acc;
    return true;
  }
  bool readValue(WireValue &v, int depth) {
    skipSpace();
    if (pos >= s.size() || depth > 32)
      return false;
    char c = s[pos];
    if (c == '"') {
      v.type = WireValue::String;
      return readString(v.text);
    }
    if (c == '{' || c == '[') {
      // Composite values are never valid here; keep their text for the
      // diagnostic and check the syntax.
      size_t start = pos++;
      char close = c == '{' ? '}' : ']';
      skipSpace();
      if (!eat(close)) {
        do {
          skipSpace();
          if (c == '{') {
            std::string key;
            if (!readString(key))
              return false;
            skipSpace();
            if (!eat(':'))
              return false;
          }
          WireValue inner;
          if (!readValue(inner, depth + 1))
            return false;
          skipSpace();
        } while (eat(','));
        if (!eat(close))
          return false;
      }
      v.type = WireValue::Composite;
      v.text = s.substr(start, pos - start);
      return true;
    }
    if (literal("true")) {
      v.type = WireValue::Bool;
      v.text = "True";
      return true;
    }
    if (literal("false")) {
      v.type = WireValue::Bool;
      v.text = "False";
      return true;
    }
    if (literal("null")) {
      v.type = WireValue::Null;
      v.text = "None";
      return true;
    }
    return readNumber(v);
  }

  const std::string &s;
  size_t pos = 0;
};

} // namespace

std::string StateTransfer::toWire() const {
  std::string out = "{\"kind\":";
  appendJsonString(out, kindName());
  out += ",\"fork_tokens\":" + std::to_string(forkTokens_);
  out += ",\"paged_layout_id\":";
  if (layout_)
    appendJsonString(out, *layout_);
  else
    out += "null";
  out += '}';
  return out;
}

Result<StateTransfer> StateTransfer::fromWire(const std::string &json) {
  std::vector<std::pair<std::string, WireValue>> members;
  if (auto err = WireReader(json).readObject(members))
    return *err;

  // The exact key set, reported like the reference (sorted lists).
  std::vector<std::string> got;
  for (const auto &m : members)
    got.push_back(m.first);
  std::sort(got.begin(), got.end());
  static const std::vector<std::string> expected = {"fork_tokens", "kind",
                                                    "paged_layout_id"};
  if (got != expected) {
    auto list = [](const std::vector<std::string> &keys) {
      std::string out = "[";
      for (size_t i = 0; i < keys.size(); ++i)
        out += (i ? ", '" : "'") + keys[i] + "'";
      return out + "]";
    };
    return Error::invalid(
        "invalid state transfer capability fields: expected=" + list(expected) +
        ", got=" + list(got));
  }
  auto field = [&](const char *key) -> const WireValue & {
    for (const auto &m : members)
      if (m.first == key)
        return m.second;
    static const WireValue null;
    return null;
  };
  const WireValue &kind = field("kind");
  const WireValue &tokens = field("fork_tokens");
  const WireValue &layout = field("paged_layout_id");

  // Reference order: the token type is checked before the kind.
  if (tokens.type != WireValue::Integer)
    return Error::invalid("fork_tokens must be an integer");
  if (!tokens.integerFits)
    return Error::invalid("fork_tokens " + tokens.text +
                          " does not fit in 64 bits");
  if (kind.type != WireValue::String)
    return Error::invalid("unknown state transfer kind " + kind.text);

  // A layout that is present but not a string is refused exactly like an
  // empty one (copy) or any layout at all (fork, none).
  std::optional<std::string> layoutId;
  if (layout.type == WireValue::String)
    layoutId = layout.text;
  else if (layout.type != WireValue::Null)
    layoutId = std::string();
  return make(kind.text, tokens.integer, std::move(layoutId));
}

} // namespace poolrt
