//===- ModelYaml.cpp - Read a model declaration from YAML -----------------===//
//
// Built with -fexceptions: yaml-cpp reports with exceptions, which are caught
// here and turned into YamlError values. Every check names the key path and
// the node's line and column. Semantic rules that the dialect verifiers own
// (entries_per_req of STATE classes, field alignment, unique names, ...) are
// left to them; they report at the item's location.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/Yaml/ModelDecl.h"

#include "poolrt/Checked.h"
#include "poolrt/Servable.h"
#include "poolrt/StateArena.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <set>

namespace pool::yaml {
namespace {

constexpr size_t kMaxLayers = 1 << 20;

struct Failure {
  SrcLoc loc;
  std::string message;
};

SrcLoc locOf(const YAML::Node &n) {
  YAML::Mark m = n.Mark();
  if (m.line < 0)
    return {};
  return {m.line + 1, m.column + 1};
}

const char *kindName(const YAML::Node &n) {
  switch (n.Type()) {
  case YAML::NodeType::Map:
    return "a mapping";
  case YAML::NodeType::Sequence:
    return "a sequence";
  case YAML::NodeType::Scalar:
    return "a scalar";
  case YAML::NodeType::Null:
    return "nothing";
  default:
    return "an undefined node";
  }
}

class Reader {
public:
  explicit Reader(std::vector<std::pair<std::string, int64_t>> &params)
      : params(params) {}

  /// Parameters whose value is a dtype name.
  std::vector<std::pair<std::string, std::string>> dtypeParams;

  [[noreturn]] void fail(const YAML::Node &n, const std::string &path,
                         const std::string &msg) {
    throw Failure{locOf(n), path + ": " + msg};
  }

  /// Check a mapping's keys: all known, none twice, required ones present.
  void checkMap(const YAML::Node &n, const std::string &path,
                const std::set<std::string> &known,
                const std::set<std::string> &required) {
    if (!n.IsMap())
      fail(n, path, std::string("expected a mapping, got ") + kindName(n));
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node k = it->first; // a copy: it->first is a temporary
      if (!k.IsScalar())
        fail(k, path, "keys must be plain names");
      std::string key = k.Scalar();
      std::string sub = path.empty() ? key : path + "." + key;
      if (!known.count(key)) {
        std::string list;
        for (const std::string &s : known)
          list += (list.empty() ? "" : ", ") + s;
        fail(k, sub, "unknown key (expected one of: " + list + ")");
      }
      if (!seen.insert(key).second)
        fail(k, sub, "key given twice");
    }
    for (const std::string &r : required)
      if (!seen.count(r))
        fail(n, path.empty() ? r : path + "." + r, "required key is missing");
  }

  std::string str(const YAML::Node &n, const std::string &path) {
    if (!n.IsScalar())
      fail(n, path, std::string("expected a string, got ") + kindName(n));
    if (n.Scalar().empty())
      fail(n, path, "expected a non-empty string");
    return n.Scalar();
  }

  /// A plane, field or class name: an identifier of at most 64
  /// characters ([A-Za-z_][A-Za-z0-9_]*), so it can name a C++ constant in
  /// the header and a key in every report. YAML reads `42` or a quoted NUL
  /// as a string; neither is a name.
  std::string identifier(const YAML::Node &n, const std::string &path) {
    std::string s = str(n, path);
    auto isStart = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    auto isRest = [&](char c) { return isStart(c) || (c >= '0' && c <= '9'); };
    bool ok = s.size() <= 64 && isStart(s[0]);
    for (char c : s)
      ok = ok && isRest(c);
    if (!ok)
      fail(n, path,
           "expected a name of letters, digits and '_' that starts with a "
           "letter or '_' (at most 64 characters), got '" +
               printable(s) + "'");
    return s;
  }

  static std::string printable(const std::string &s) {
    std::string out;
    for (unsigned char c : s.substr(0, 64)) {
      if (c >= 0x20 && c < 0x7f) {
        out += char(c);
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
    }
    return s.size() > 64 ? out + "..." : out;
  }

  int64_t integer(const YAML::Node &n, const std::string &path,
                  int64_t min = INT64_MIN) {
    if (!n.IsScalar())
      fail(n, path, std::string("expected an integer, got ") + kindName(n));
    const std::string &text = n.Scalar();
    if (text == "true" || text == "false")
      fail(n, path, "expected an integer, got the boolean '" + text + "'");
    int64_t v;
    std::string msg;
    if (!evalIntExpr(text, params, dtypeParams, v, msg))
      fail(n, path, "expected an integer: " + msg);
    if (v < min) {
      const char *what = min == 0   ? "a non-negative integer"
                         : min == 1 ? "an integer >= 1"
                                    : "a larger integer";
      fail(n, path, std::string("expected ") + what + ", got '" + text + "'" +
                        (text == std::to_string(v)
                             ? std::string()
                             : " = " + std::to_string(v)));
    }
    return v;
  }

  bool boolean(const YAML::Node &n, const std::string &path) {
    if (n.IsScalar() && n.Scalar() == "true")
      return true;
    if (n.IsScalar() && n.Scalar() == "false")
      return false;
    fail(n, path,
         std::string("expected true or false, got ") +
             (n.IsScalar() ? "'" + n.Scalar() + "'" : kindName(n)));
  }

  double number(const YAML::Node &n, const std::string &path) {
    if (!n.IsScalar())
      fail(n, path, std::string("expected a number, got ") + kindName(n));
    std::string t = n.Scalar();
    if (t == "inf" || t == ".inf" || t == "+inf" || t == "+.inf")
      return INFINITY;
    if (t == "-inf" || t == "-.inf")
      return -INFINITY;
    const char *b = t.c_str();
    char *e = nullptr;
    errno = 0;
    double v = std::strtod(b, &e);
    if (t.empty() || e != b + t.size() || std::isnan(v) || errno == ERANGE ||
        std::isinf(v))
      fail(n, path, "expected a number (or inf, -inf), got '" + t + "'");
    return v;
  }

  /// A dtype name, or a dtype parameter's value.
  std::string dtype(const YAML::Node &n, const std::string &path) {
    std::string d = str(n, path);
    for (const auto &[name, value] : dtypeParams)
      if (name == d)
        return value;
    if (!poolrt::parseDType(d)) {
      std::string declared;
      for (const auto &[name, value] : dtypeParams)
        declared += (declared.empty() ? "" : ", ") + name;
      fail(n, path, "unknown dtype '" + d + "' (expected one of " +
                        poolrt::dtypeNameList() +
                        (declared.empty() ? std::string(", or a dtype parameter")
                                          : ", or a dtype parameter: " + declared) +
                        ")");
    }
    return d;
  }

  template <typename F>
  void list(const YAML::Node &n, const std::string &path, F &&each) {
    if (!n.IsSequence())
      fail(n, path, std::string("expected a sequence, got ") + kindName(n));
    size_t i = 0;
    for (auto it = n.begin(); it != n.end(); ++it, ++i)
      each(*it, path + "[" + std::to_string(i) + "]");
  }

  void ratioItems(const YAML::Node &n, const std::string &path,
                  std::vector<int64_t> &out) {
    list(n, path, [&](const YAML::Node &item, const std::string &p) {
      if (item.IsMap()) {
        checkMap(item, p, {"repeat", "times"}, {"repeat", "times"});
        int64_t times = integer(item["times"], p + ".times", 0);
        std::vector<int64_t> group;
        ratioItems(item["repeat"], p + ".repeat", group);
        if (!group.empty() &&
            (uint64_t)times > (kMaxLayers - out.size()) / group.size())
          fail(item, p, "expands to more than " + std::to_string(kMaxLayers) +
                            " layers");
        for (int64_t t = 0; t < times; ++t)
          out.insert(out.end(), group.begin(), group.end());
        return;
      }
      int64_t r = integer(item, p);
      if (r != 0 && r != 4 && r != 128 && r != -1)
        fail(item, p, "unknown compress ratio " + std::to_string(r) +
                          " (expected 0 dense, 4 CSA, 128 HCA or -1 absent)");
      if (out.size() >= kMaxLayers)
        fail(item, p, "more than " + std::to_string(kMaxLayers) + " layers");
      out.push_back(r);
    });
  }

  void readParams(const YAML::Node &n, const ParamOverrides &overrides) {
    if (n && !n.IsMap())
      fail(n, "params", std::string("expected a mapping, got ") + kindName(n));
    std::set<std::string> seen;
    if (n) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        std::string name = str(it->first, "params");
        std::string p = "params." + name;
        bool ident = !name.empty() && (std::isalpha((unsigned char)name[0]) ||
                                       name[0] == '_');
        for (char c : name)
          ident &= std::isalnum((unsigned char)c) || c == '_';
        if (!ident)
          fail(it->first, p, "a parameter name is a letter or '_' followed "
                             "by letters, digits or '_'");
        if (!seen.insert(name).second)
          fail(it->first, p, "key given twice");
        if (poolrt::parseDType(name) || name == "sizeof")
          fail(it->first, p, "'" + name + "' names a dtype or a function; "
                             "choose another parameter name");
        if (name == "block_size" || name == "sliding_window")
          fail(it->first, p, name + " is the model's own key (usable in "
                             "expressions); do not declare it as a parameter");
        // A dtype name declares a dtype parameter; anything else is an
        // integer expression (which may use earlier parameters). An
        // override takes effect here, where the parameter is declared, so
        // every later parameter computed from it sees the new value.
        const std::string *text = nullptr; // the last --param of this name
        for (const auto &[oname, otext] : overrides)
          if (oname == name)
            text = &otext;
        if (it->second.IsScalar() && poolrt::parseDType(it->second.Scalar())) {
          if (text && !poolrt::parseDType(*text))
            throw Failure{{}, "--param " + name + ": a dtype parameter takes one of " +
                                  std::string(poolrt::dtypeNameList()) + ", got '" +
                                  printable(*text) + "'"};
          dtypeParams.push_back({name, text ? *text : it->second.Scalar()});
          continue;
        }
        int64_t v;
        if (text) {
          std::string msg;
          if (!evalIntExpr(*text, {}, v, msg))
            throw Failure{{}, "--param " + name + ": expected an integer (a constant "
                              "expression), got '" + printable(*text) + "'" +
                              (msg.find("unknown parameter") == 0 ? "" : ": " + msg)};
        } else {
          v = integer(it->second, p);
        }
        params.push_back({name, v});
      }
    }
    for (const auto &[name, text] : overrides)
      if (!seen.count(name))
        throw Failure{{}, "--param " + name +
                              ": the model declares no such parameter"};
  }

  void readModel(const YAML::Node &root, ModelDecl &m, const ParamOverrides &overrides) {
    if (!root.IsMap())
      fail(root, "(top level)",
           std::string("expected a mapping, got ") + kindName(root));
    checkMap(root, "",
             {"name", "params", "block_size", "hash_block_size",
              "sliding_window", "speculation_depth", "planes", "layers",
              "state_fields", "entry_classes"},
             {"name", "block_size", "entry_classes"});
    m.loc = locOf(root);
    readParams(root["params"], overrides);
    m.params = params;
    m.dtypeParams = dtypeParams;
    readTopLevelScalars(root, m);
    if (root["sliding_window"])
      params.push_back({"sliding_window", m.slidingWindow});
    if (root["planes"])
      list(root["planes"], "planes",
           [&](const YAML::Node &n, const std::string &p) {
             m.planes.push_back(readPlane(n, p));
           });
    if (root["layers"])
      readLayers(root, m);
    if (root["state_fields"])
      list(root["state_fields"], "state_fields",
           [&](const YAML::Node &n, const std::string &p) {
             m.fields.push_back(readField(n, p));
           });
    list(root["entry_classes"], "entry_classes",
         [&](const YAML::Node &n, const std::string &p) {
           m.classes.push_back(readClass(n, p));
         });
    if (m.classes.empty())
      fail(root["entry_classes"], "entry_classes",
           "needs at least one entry class");
  }

  /// name, block_size, hash_block_size, sliding_window, speculation_depth.
  void readTopLevelScalars(const YAML::Node &root, ModelDecl &m) {
    m.name = str(root["name"], "name");
    m.blockSize = integer(root["block_size"], "block_size", 1);
    if (m.blockSize > poolrt::kMaxBlockSize)
      fail(root["block_size"], "block_size",
           "expected at most " + std::to_string(poolrt::kMaxBlockSize) +
               " tokens, got " + std::to_string(m.blockSize));
    // From here on, expressions may use block_size (not a declared
    // parameter: the report lists those only).
    params.push_back({"block_size", m.blockSize});
    m.hashBlockSize = root["hash_block_size"]
                          ? integer(root["hash_block_size"], "hash_block_size", 1)
                          : m.blockSize;
    if (auto why = poolrt::hashBlockSizeRefusal(m.blockSize, m.hashBlockSize))
      fail(root["hash_block_size"], "hash_block_size",
           std::to_string(m.hashBlockSize) + " " + *why);
    if (root["sliding_window"])
      m.slidingWindow = integer(root["sliding_window"], "sliding_window", 0);
    if (root["speculation_depth"])
      m.specDepth = integer(root["speculation_depth"], "speculation_depth", 0);
  }

  PlaneDecl readPlane(const YAML::Node &n, const std::string &p) {
    checkMap(n, p, {"name", "row_bytes", "dtype"},
             {"name", "row_bytes", "dtype"});
    PlaneDecl d;
    d.loc = locOf(n);
    d.name = identifier(n["name"], p + ".name");
    d.rowBytes = integer(n["row_bytes"], p + ".row_bytes", 1);
    d.dtype = dtype(n["dtype"], p + ".dtype");
    return d;
  }

  /// The layers list, and the implicit parameters it defines. Runs after
  /// m.params was copied: those hold only the declared parameters.
  void readLayers(const YAML::Node &root, ModelDecl &m) {
    std::vector<int64_t> ratios;
    ratioItems(root["layers"], "layers", ratios);
    if (ratios.empty())
      fail(root["layers"], "layers", "needs at least one layer");
    // Implicit parameters: how many layers of each kind the list holds,
    // so fields and indexers can be sized from it (a declared parameter
    // of the same name is an error: one source for the count).
    const std::pair<const char *, int64_t> counts[] = {
        {"num_layers", int64_t(ratios.size())},
        {"layers_dense", std::count(ratios.begin(), ratios.end(), 0)},
        {"layers_csa", std::count(ratios.begin(), ratios.end(), 4)},
        {"layers_hca", std::count(ratios.begin(), ratios.end(), 128)},
        {"layers_absent", std::count(ratios.begin(), ratios.end(), -1)}};
    for (const auto &[name, n] : counts) {
      for (const auto &[p, v] : params)
        if (p == name)
          fail(root["params"], "params." + std::string(name),
               "is computed from the layers list; do not declare it");
      params.push_back({name, n});
    }
    m.layers = std::move(ratios);
    m.layersLoc = locOf(root["layers"]);
  }

  FieldDecl readField(const YAML::Node &n, const std::string &p) {
    checkMap(n, p,
             {"name", "class", "layers", "shape", "dtype", "fill", "align",
              "in_checkpoint", "window"},
             {"name", "class", "layers", "shape", "dtype"});
    FieldDecl d;
    d.loc = locOf(n);
    d.name = identifier(n["name"], p + ".name");
    d.entryClass = identifier(n["class"], p + ".class");
    d.layers = integer(n["layers"], p + ".layers", 0);
    list(n["shape"], p + ".shape",
         [&](const YAML::Node &dim, const std::string &dp) {
           d.shape.push_back(integer(dim, dp, 0));
         });
    d.dtype = dtype(n["dtype"], p + ".dtype");
    if (n["fill"])
      d.fill = number(n["fill"], p + ".fill");
    if (n["align"])
      d.align = integer(n["align"], p + ".align", 0);
    if (n["in_checkpoint"])
      d.inCheckpoint = boolean(n["in_checkpoint"], p + ".in_checkpoint");
    if (n["window"])
      d.window = boolean(n["window"], p + ".window");
    return d;
  }

  ClassDecl readClass(const YAML::Node &n, const std::string &p) {
    checkMap(n, p,
             {"name", "pool", "bytes", "entries_per_req", "extra_entries",
              "transfer", "attention"},
             {"name", "pool", "bytes"});
    ClassDecl d;
    d.loc = locOf(n);
    d.name = identifier(n["name"], p + ".name");
    d.pool = str(n["pool"], p + ".pool");
    if (d.pool != "page" && d.pool != "state")
      fail(n["pool"], p + ".pool",
           "unknown pool '" + d.pool + "' (expected page or state)");
    const YAML::Node &bytes = n["bytes"];
    if (bytes.IsScalar() && bytes.Scalar() == "derived")
      d.derived = true;
    else
      d.bytes = integer(bytes, p + ".bytes", 1);
    if (n["entries_per_req"])
      d.entriesPerReq =
          integer(n["entries_per_req"], p + ".entries_per_req", 0);
    else if (d.pool == "state")
      fail(n, p + ".entries_per_req",
           "required key is missing (a STATE class says how many "
           "entries one request holds)");
    if (n["extra_entries"])
      d.extraEntries = integer(n["extra_entries"], p + ".extra_entries", 0);
    if (n["transfer"])
      d.transfer = readTransfer(n["transfer"], p + ".transfer");
    if (n["attention"]) {
      if (d.pool != "page")
        fail(n["attention"], p + ".attention",
             "only a PAGE class has an attention pattern");
      d.attention = readAttention(n["attention"], p + ".attention");
    }
    return d;
  }

  /// A PAGE class's attention: full, or sliding / chunked with its tokens
  /// (and optionally the forward its reserve covers).
  AttentionDecl readAttention(const YAML::Node &a, const std::string &ap) {
    checkMap(a, ap, {"kind", "tokens", "forward_tokens", "cache_percent"}, {"kind"});
    AttentionDecl ad;
    ad.kind = str(a["kind"], ap + ".kind");
    if (ad.kind == "full") {
      if (a["tokens"] || a["forward_tokens"] || a["cache_percent"])
        fail(a, ap, "full attention takes no tokens, forward_tokens or cache_percent");
    } else if (ad.kind == "sliding" || ad.kind == "chunked") {
      if (!a["tokens"])
        fail(a, ap + ".tokens",
             "required key is missing (the " + ad.kind + " window in tokens)");
      ad.tokens = integer(a["tokens"], ap + ".tokens", 1);
      if (a["forward_tokens"])
        ad.forwardTokens = integer(a["forward_tokens"], ap + ".forward_tokens", 1);
      if (a["cache_percent"]) {
        ad.cachePercent = integer(a["cache_percent"], ap + ".cache_percent", 0);
        if (ad.cachePercent > 100)
          fail(a["cache_percent"], ap + ".cache_percent",
               "a percentage of the budget, at most 100, got " +
                   std::to_string(ad.cachePercent));
      }
    } else {
      fail(a["kind"], ap + ".kind",
           "unknown attention kind '" + ad.kind +
               "' (expected full, sliding or chunked)");
    }
    return ad;
  }

  /// A class's transfer: none, fork (tokens) or copy (layout_id), each
  /// refusing the other's key.
  TransferDecl readTransfer(const YAML::Node &t, const std::string &tp) {
    checkMap(t, tp, {"kind", "tokens", "layout_id"}, {"kind"});
    TransferDecl td;
    td.kind = str(t["kind"], tp + ".kind");
    if (td.kind == "fork") {
      if (!t["tokens"])
        fail(t, tp + ".tokens", "required key is missing for a fork");
      td.tokens = integer(t["tokens"], tp + ".tokens", 1);
      if (t["layout_id"])
        fail(t["layout_id"], tp + ".layout_id",
             "a fork transfer takes no layout_id");
    } else if (td.kind == "copy") {
      if (!t["layout_id"])
        fail(t, tp + ".layout_id", "required key is missing for a copy");
      td.layoutId = str(t["layout_id"], tp + ".layout_id");
      if (t["tokens"])
        fail(t["tokens"], tp + ".tokens", "a copy transfer takes no tokens");
    } else if (td.kind == "none") {
      if (t["tokens"] || t["layout_id"])
        fail(t, tp, "a none transfer takes no tokens or layout_id");
    } else {
      fail(t["kind"], tp + ".kind",
           "unknown transfer kind '" + td.kind +
               "' (expected none, fork or copy)");
    }
    return td;
  }

private:
  std::vector<std::pair<std::string, int64_t>> &params;
};

} // namespace

namespace {

/// The deepest nesting of flow collections ([...] and {...}) in `text`,
/// outside quotes and comments, stopping once past `limit`. yaml-cpp
/// parses recursively; a document nested deeper than any model needs is
/// refused before it can exhaust the stack.
int flowDepth(const std::string &text, int limit, SrcLoc &where) {
  int depth = 0, line = 1, col = 0;
  char quote = 0;
  bool comment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++col;
    if (c == '\n') {
      ++line;
      col = 0;
      comment = false;
      continue;
    }
    if (comment)
      continue;
    if (quote) {
      if (c == '\\' && quote == '"')
        ++i, ++col;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t'))
      comment = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit) {
        where = {line, col};
        return depth;
      }
    } else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return depth;
}

constexpr int kMaxFlowDepth = 64;

} // namespace

bool loadModelYamlText(const std::string &text, const std::string &name,
                       const ParamOverrides &overrides, ModelDecl &out,
                       YamlError &error) {
  error = YamlError{name, {}, ""};
  std::vector<std::pair<std::string, int64_t>> params;
  SrcLoc deep;
  if (flowDepth(text, kMaxFlowDepth, deep) > kMaxFlowDepth) {
    error.loc = deep;
    error.message = "malformed YAML: nested deeper than " +
                    std::to_string(kMaxFlowDepth) + " levels";
    return false;
  }
  try {
    YAML::Node root = YAML::Load(text);
    if (!root || root.IsNull()) {
      // An empty document (or `~`) has no node to point at: its first
      // line is where the model should start.
      error.loc = {1, 1};
      error.message = "the file holds no model (expected a mapping)";
      return false;
    }
    ModelDecl m;
    m.file = name;
    Reader reader(params);
    reader.readModel(root, m, overrides);
    out = std::move(m);
    return true;
  } catch (const Failure &f) {
    error.loc = f.loc;
    error.message = f.message;
  } catch (const YAML::Exception &e) {
    if (e.mark.line >= 0)
      error.loc = {e.mark.line + 1, e.mark.column + 1};
    error.message = "malformed YAML: " + e.msg;
  } catch (const std::exception &e) {
    error.message = std::string("cannot read the model: ") + e.what();
  }
  return false;
}

bool loadModelYaml(const std::string &path, const ParamOverrides &overrides,
                   ModelDecl &out, YamlError &error) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in)
    text << in.rdbuf();
  if (!in || in.bad()) {
    error = YamlError{path, {}, "cannot open the file"};
    return false;
  }
  return loadModelYamlText(text.str(), path, overrides, out, error);
}

} // namespace pool::yaml
