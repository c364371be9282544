//===- SolvedLayout.cpp - The one reader of reports and manifests ---------===//
//
// Every key of the report and of the manifest is read here and nowhere
// else. A document is parsed once, walked with a path so a refusal names
// the member ("layout.entry_classes[1].entries: expected an integer"), and
// checked for what a reader must never trust: types, signs, 64-bit range,
// and that every kernel segment stays inside the arena it addresses.
//
// nlohmann::json is used without exceptions reaching the caller: parsing
// does not throw (allow_exceptions = false), members are type-checked
// before they are read, and the entry points catch anything else.
//
//===----------------------------------------------------------------------===//

#include "poolrt/SolvedLayout.h"
#include "poolrt/Checked.h"
#include "poolrt/StateArena.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include <algorithm>
#include <cmath>
#include <limits>

namespace poolrt {

namespace {

using Json = nlohmann::json;

/// Deeper documents are refused before nlohmann builds them (nothing the
/// writer emits nests past 8).
constexpr int kMaxDepth = 64;

/// Walks one document. The first refusal is kept; later reads return
/// defaults and are ignored, so a reader function can read every member and
/// check `failed()` once.
class Walker {
public:
  explicit Walker(std::string prefix) : prefix(std::move(prefix)) {}

  bool failed() const { return !err.empty(); }
  Error error() const { return Error::invalid(prefix + err); }
  void fail(const std::string &path, const std::string &what) {
    if (err.empty())
      err = path + ": " + what;
  }

  const Json *member(const Json &o, const std::string &path, const char *key,
                     bool required = true) {
    if (!o.is_object()) {
      fail(path, "expected an object");
      return nullptr;
    }
    auto it = o.find(key);
    if (it == o.end()) {
      if (required)
        fail(join(path, key), "missing");
      return nullptr;
    }
    return &*it;
  }

  int64_t integer(const Json &o, const std::string &path, const char *key,
                  int64_t min = std::numeric_limits<int64_t>::min()) {
    const Json *v = member(o, path, key);
    return v ? asInteger(*v, join(path, key), min) : 0;
  }

  int64_t asInteger(const Json &v, const std::string &path, int64_t min) {
    if (!v.is_number_integer()) {
      fail(path, "expected an integer");
      return 0;
    }
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
      fail(path, "passes the signed 64-bit range");
      return 0;
    }
    int64_t x = v.get<int64_t>();
    if (x < min) {
      fail(path, std::to_string(x) + " is below " + std::to_string(min));
      return 0;
    }
    return x;
  }

  std::optional<int64_t> optInteger(const Json &o, const std::string &path,
                                    const char *key, int64_t min = 0) {
    const Json *v = member(o, path, key);
    if (!v || v->is_null())
      return std::nullopt;
    return asInteger(*v, join(path, key), min);
  }

  std::string string(const Json &o, const std::string &path, const char *key) {
    const Json *v = member(o, path, key);
    if (!v)
      return "";
    if (!v->is_string()) {
      fail(join(path, key), "expected a string");
      return "";
    }
    return v->get<std::string>();
  }

  std::optional<std::string> optString(const Json &o, const std::string &path,
                                       const char *key) {
    const Json *v = member(o, path, key);
    if (!v || v->is_null())
      return std::nullopt;
    if (!v->is_string()) {
      fail(join(path, key), "expected a string or null");
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  bool boolean(const Json &o, const std::string &path, const char *key) {
    const Json *v = member(o, path, key);
    if (!v)
      return false;
    if (!v->is_boolean()) {
      fail(join(path, key), "expected true or false");
      return false;
    }
    return v->get<bool>();
  }

  double number(const Json &o, const std::string &path, const char *key) {
    const Json *v = member(o, path, key);
    if (!v)
      return 0;
    if (!v->is_number()) {
      fail(join(path, key), "expected a number");
      return 0;
    }
    return v->get<double>();
  }

  /// The array at `key` (an empty one after a refusal).
  const Json &array(const Json &o, const std::string &path, const char *key) {
    static const Json empty = Json::array();
    const Json *v = member(o, path, key);
    if (!v)
      return empty;
    if (!v->is_array()) {
      fail(join(path, key), "expected a list");
      return empty;
    }
    return *v;
  }

  const Json &object(const Json &o, const std::string &path, const char *key) {
    static const Json empty = Json::object();
    const Json *v = member(o, path, key);
    if (!v)
      return empty;
    if (!v->is_object()) {
      fail(join(path, key), "expected an object");
      return empty;
    }
    return *v;
  }

  std::vector<int64_t> integers(const Json &o, const std::string &path,
                                const char *key, int64_t min) {
    std::vector<int64_t> out;
    const Json &a = array(o, path, key);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(asInteger(a[i], index(join(path, key), i), min));
    return out;
  }

  std::vector<ByteRange> ranges(const Json &a, const std::string &path) {
    std::vector<ByteRange> out;
    if (!a.is_array()) {
      fail(path, "expected a list of [offset, length]");
      return out;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      std::string at = index(path, i);
      if (!a[i].is_array() || a[i].size() != 2) {
        fail(at, "expected [offset, length]");
        return out;
      }
      out.push_back({asInteger(a[i][0], at + "[0]", 0),
                     asInteger(a[i][1], at + "[1]", 0)});
    }
    return out;
  }

  static std::string join(const std::string &path, const char *key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

private:
  std::string prefix;
  std::string err;
};

/// The deepest nesting of `text`, counted outside strings, stopping once
/// past `limit`.
int nestingDepth(const std::string &text, int limit) {
  int depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit)
        return deepest;
    } else if (c == ']' || c == '}')
      --depth;
  }
  return deepest;
}

Result<Json> parseJson(const std::string &text, const std::string &what) {
  if (text.find('\0') != std::string::npos)
    return Error::invalid(what + ": holds a NUL byte");
  if (nestingDepth(text, kMaxDepth) > kMaxDepth)
    return Error::invalid(what + ": nested deeper than " +
                          std::to_string(kMaxDepth) + " levels");
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Error::invalid(what + ": not valid JSON");
  if (!j.is_object())
    return Error::invalid(what + ": not a JSON object");
  return j;
}

// --- the report ---------------------------------------------------------

SolvedWindow readWindow(Walker &w, const Json &o, const std::string &path) {
  const Json &win = w.object(o, path, "window");
  std::string p = Walker::join(path, "window");
  SolvedWindow x;
  x.ringStart = w.integer(win, p, "ring_start");
  x.slotRows = w.integer(win, p, "slot_rows", 0);
  x.ringSlots = w.integer(win, p, "ring_slots", 0);
  x.ringStride = w.integer(win, p, "ring_stride", 0);
  x.runRows = w.integer(win, p, "run_rows", 0);
  return x;
}

SolvedClass readClass(Walker &w, const Json &c, const std::string &p) {
  SolvedClass x;
  x.name = w.string(c, p, "name");
  std::string pool = w.string(c, p, "pool");
  if (pool == "page")
    x.pool = PoolKind::Page;
  else if (pool == "state")
    x.pool = PoolKind::State;
  else if (!w.failed())
    w.fail(Walker::join(p, "pool"), "'" + pool + "' is neither page nor state");
  x.entries = w.integer(c, p, "entries", 0);
  x.entryBytes = w.integer(c, p, "entry_bytes", 0);
  x.reservedBytes = w.integer(c, p, "reserved_bytes", 0);
  x.entriesPerReq = w.integer(c, p, "entries_per_req", 0);
  x.extraEntries = w.integer(c, p, "extra_entries", 0);
  x.requestGroups = w.integer(c, p, "request_groups", 0);
  x.bytesSource = w.string(c, p, "bytes_source");
  x.regionOffset = w.optInteger(c, p, "region_offset");
  x.needsRebase = w.boolean(c, p, "needs_rebase");
  if (const Json *t = w.member(c, p, "transfer"); t && !t->is_null()) {
    std::string tp = Walker::join(p, "transfer");
    if (!t->is_object()) {
      w.fail(tp, "expected an object or null");
      return x;
    }
    SolvedTransfer tr;
    std::string kind = w.string(*t, tp, "kind");
    if (kind == "none") {
      tr.kind = TransferKind::None;
    } else if (kind == "fork") {
      tr.kind = TransferKind::Fork;
      tr.tokens = w.integer(*t, tp, "tokens", 0);
    } else if (kind == "copy") {
      tr.kind = TransferKind::Copy;
      tr.layoutId = w.string(*t, tp, "layout_id");
    } else if (!w.failed()) {
      w.fail(Walker::join(tp, "kind"), "'" + kind + "' is unknown");
    }
    x.transfer = tr;
  }
  if (const Json *a = w.member(c, p, "attention", false); a && !a->is_null()) {
    std::string ap = Walker::join(p, "attention");
    if (!a->is_object()) {
      w.fail(ap, "expected an object or null");
      return x;
    }
    SolvedAttention at;
    std::string kind = w.string(*a, ap, "kind");
    auto k = parseAttentionKind(kind);
    if ((!k || *k == AttentionKind::Full) && !w.failed())
      w.fail(Walker::join(ap, "kind"),
             "'" + kind + "' is not a window pattern (sliding or chunked)");
    at.kind = k.value_or(AttentionKind::Sliding);
    at.tokens = w.integer(*a, ap, "tokens", 1);
    at.forwardTokens = w.integer(*a, ap, "forward_tokens", 1);
    at.reserveBlocks = w.integer(*a, ap, "reserve_blocks", 1);
    at.cachePercent = w.integer(*a, ap, "cache_percent", 0);
    if (at.cachePercent > 100 && !w.failed())
      w.fail(Walker::join(ap, "cache_percent"), "is more than 100");
    at.sharesBlocks = w.boolean(*a, ap, "shares_blocks");
    if (x.pool != PoolKind::Page && !w.failed())
      w.fail(ap, "only a PAGE class has an attention pattern");
    x.attention = at;
  }
  if (!w.failed() && x.attention && x.attention->sharesBlocks) {
    // Its blocks are the full class's bytes: it reserves none of its own.
    if (x.reservedBytes != 0)
      w.fail(Walker::join(p, "reserved_bytes"),
             "is not 0 for a class that shares the full class's blocks");
  } else if (!w.failed()) {
    int64_t product = 0;
    if (mulOverflows(x.entries, x.entryBytes, product) ||
        product != x.reservedBytes)
      w.fail(Walker::join(p, "reserved_bytes"),
             "is not entries x entry_bytes");
    else if (x.isPage() ? x.requestGroups != 0
                        : (mulOverflows(x.requestGroups,
                                        std::max<int64_t>(1, x.entriesPerReq),
                                        product) ||
                           product > x.entries))
      w.fail(Walker::join(p, "request_groups"),
             "holds more than the class's entries");
  }
  return x;
}

SolvedField readField(Walker &w, const Json &f, const std::string &p) {
  SolvedField x;
  x.name = w.string(f, p, "name");
  x.plane = w.optString(f, p, "plane");
  x.offset = w.integer(f, p, "offset", 0);
  x.end = w.integer(f, p, "end", 0);
  x.bytes = w.integer(f, p, "bytes", 0);
  x.layers = w.integer(f, p, "layers", 0);
  x.shape = w.integers(f, p, "shape", 0);
  x.dtype = w.string(f, p, "dtype");
  if (const Json *fill = w.member(f, p, "fill")) {
    if (fill->is_number())
      x.fill = fill->get<double>();
    else if (fill->is_string() && fill->get<std::string>() == "inf")
      x.fill = std::numeric_limits<double>::infinity();
    else if (fill->is_string() && fill->get<std::string>() == "-inf")
      x.fill = -std::numeric_limits<double>::infinity();
    else
      w.fail(Walker::join(p, "fill"), "expected a number, \"inf\" or \"-inf\"");
  }
  x.align = w.integer(f, p, "align", 0);
  x.inCheckpoint = w.boolean(f, p, "in_checkpoint");
  x.window = w.boolean(f, p, "window");
  if (!w.failed() && (x.end < x.offset || x.end - x.offset != x.bytes))
    w.fail(p, "end - offset is not bytes");
  return x;
}

SolvedArena readArena(Walker &w, const Json &a, const std::string &p) {
  SolvedArena x;
  x.className = w.string(a, p, "class");
  x.entryBytes = w.integer(a, p, "entry_bytes", 0);
  x.slotStride = w.optInteger(a, p, "slot_stride");
  const Json &fields = w.array(a, p, "fields");
  for (size_t i = 0; i < fields.size(); ++i)
    x.fields.push_back(
        readField(w, fields[i], Walker::index(Walker::join(p, "fields"), i)));
  const Json &ranges = w.array(a, p, "checkpoint_ranges");
  std::string rp = Walker::join(p, "checkpoint_ranges");
  // Per plane (a list of lists) when the first item is itself a list of
  // pairs or empty; a flat list of pairs otherwise.
  x.perPlane = !x.slotStride.has_value();
  if (x.perPlane) {
    for (size_t i = 0; i < ranges.size(); ++i)
      x.planeCheckpointRanges.push_back(
          w.ranges(ranges[i], Walker::index(rp, i)));
  } else {
    x.checkpointRanges = w.ranges(ranges, rp);
  }
  x.checkpointBytes = w.integer(a, p, "checkpoint_bytes", 0);
  return x;
}

SolvedRowPlane readRowPlane(Walker &w, const Json &o, const std::string &p) {
  SolvedRowPlane x;
  x.name = w.string(o, p, "name");
  x.rowBytes = w.integer(o, p, "row_bytes", 1);
  x.dtype = w.string(o, p, "dtype");
  const Json &fields = w.array(o, p, "fields");
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i].is_string()) {
      w.fail(Walker::index(Walker::join(p, "fields"), i), "expected a string");
      break;
    }
    x.fields.push_back(fields[i].get<std::string>());
  }
  x.slackBytes = w.integer(o, p, "slack_bytes", 0);
  x.blockBytes = w.integer(o, p, "block_bytes", 0);
  x.slotBytes = w.integer(o, p, "slot_bytes", 0);
  x.planeBytes = w.optInteger(o, p, "plane_bytes");
  x.offset = w.optInteger(o, p, "offset");
  x.imageRanges =
      w.ranges(w.array(o, p, "image_ranges"), Walker::join(p, "image_ranges"));
  x.wideOffsets = w.boolean(o, p, "wide_offsets");
  x.needsRebase = w.boolean(o, p, "needs_rebase");
  return x;
}

SolvedRowSpace readRowSpace(Walker &w, const Json &rs, const std::string &p) {
  SolvedRowSpace x;
  x.pageClass = w.string(rs, p, "page_class");
  x.slotClass = w.string(rs, p, "slot_class");
  x.blockSize = w.integer(rs, p, "block_size", 1);
  x.ringSlots = w.integer(rs, p, "ring_slots", 0);
  x.layerRatios = w.integers(rs, p, "layer_ratios", -1);
  x.arenaRows = w.integer(rs, p, "arena_rows", 0);
  x.slotAlignRows = w.integer(rs, p, "slot_align_rows", 1);
  x.envelopeRows = w.integer(rs, p, "envelope_rows", 0);
  x.entryRows = w.integer(rs, p, "entry_rows", 0);
  x.slotRows = w.integer(rs, p, "slot_rows", 1);
  x.rowBytes = w.integer(rs, p, "row_bytes", 1);
  const Json &planes = w.array(rs, p, "planes");
  for (size_t i = 0; i < planes.size(); ++i)
    x.planes.push_back(readRowPlane(
        w, planes[i], Walker::index(Walker::join(p, "planes"), i)));
  x.planeSlackBytes = w.integer(rs, p, "plane_slack_bytes", 0);
  x.planeSlackFraction = w.number(rs, p, "plane_slack_fraction");
  const Json &classes = w.array(rs, p, "classes");
  for (size_t i = 0; i < classes.size(); ++i) {
    std::string cp = Walker::index(Walker::join(p, "classes"), i);
    const Json &c = classes[i];
    SolvedRowClass k;
    k.ratio = w.integer(c, cp, "ratio", 0);
    k.name = w.string(c, cp, "name");
    k.layers = w.integers(c, cp, "layers", 0);
    k.blockRows = w.integer(c, cp, "block_rows", 0);
    k.ringStride = w.integer(c, cp, "ring_stride", 0);
    k.envelopeOffset = w.integer(c, cp, "envelope_offset", 0);
    k.envelopeRows = w.integer(c, cp, "envelope_rows", 0);
    k.entryOffset = w.integer(c, cp, "entry_offset", 0);
    k.entryRows = w.integer(c, cp, "entry_rows", 0);
    k.window = readWindow(w, c, cp);
    x.classes.push_back(std::move(k));
  }
  x.entryRowRuns = w.ranges(w.array(rs, p, "entry_row_runs"),
                            Walker::join(p, "entry_row_runs"));
  const Json &fws = w.array(rs, p, "field_windows");
  for (size_t i = 0; i < fws.size(); ++i) {
    std::string fp = Walker::index(Walker::join(p, "field_windows"), i);
    SolvedFieldWindow f;
    f.field = w.string(fws[i], fp, "field");
    f.plane = w.string(fws[i], fp, "plane");
    f.rowsPerWindowRow = w.integer(fws[i], fp, "rows_per_window_row", 1);
    f.offsetRows = w.integer(fws[i], fp, "offset_rows", 0);
    f.layerStrideRows = w.integer(fws[i], fp, "layer_stride_rows", 0);
    f.window = readWindow(w, fws[i], fp);
    x.fieldWindows.push_back(std::move(f));
  }
  x.imageBytes = w.integer(rs, p, "image_bytes", 0);
  x.unitsPerCheckpoint = w.optInteger(rs, p, "units_per_checkpoint");
  x.numBlocks = w.optInteger(rs, p, "num_blocks");
  x.numSlots = w.optInteger(rs, p, "num_slots");
  x.planeRows = w.optInteger(rs, p, "plane_rows");
  x.slotPositions = w.optInteger(rs, p, "slot_positions");
  x.maxRow = w.optInteger(rs, p, "max_row");
  return x;
}

void readReportInto(Walker &w, const Json &r, const std::string &p,
                    SolvedLayout &L) {
  std::string schema = w.string(r, p, "schema");
  if (!w.failed() && schema != kReportSchema)
    w.fail(Walker::join(p, "schema"), "'" + schema + "', this reader reads " +
                                          kReportSchema);
  L.model = w.string(r, p, "model");
  if (const Json *src = w.member(r, p, "source", /*required=*/false)) {
    if (src->is_string())
      L.source = src->get<std::string>();
    else
      w.fail(Walker::join(p, "source"), "expected a string");
  }
  const Json &in = w.object(r, p, "inputs");
  std::string ip = Walker::join(p, "inputs");
  L.inputs.budgetBytes = w.integer(in, ip, "budget_bytes", 0);
  L.inputs.maxNumSeqs = w.integer(in, ip, "max_num_seqs", 0);
  L.inputs.ppMinBlocks = w.optInteger(in, ip, "pp_min_blocks");
  const Json &params = w.object(in, ip, "params");
  for (auto it = params.begin(); it != params.end(); ++it) {
    std::string pp = Walker::join(ip, "params") + "." + it.key();
    if (it.value().is_string()) { // a dtype parameter
      std::string d = it.value().get<std::string>();
      if (!parseDType(d))
        w.fail(pp, "expected an integer or a dtype name, got '" + d.substr(0, 32) + "'");
      L.inputs.dtypeParams.emplace_back(it.key(), d);
      continue;
    }
    L.inputs.params.emplace_back(
        it.key(), w.asInteger(it.value(), pp, std::numeric_limits<int64_t>::min()));
  }

  const Json &geo = w.object(r, p, "geometry");
  std::string gp = Walker::join(p, "geometry");
  L.geometry.blockSize = w.integer(geo, gp, "block_size", 1);
  L.geometry.hashBlockSize = w.integer(geo, gp, "hash_block_size", 1);
  L.geometry.slidingWindow = w.integer(geo, gp, "sliding_window", 0);
  L.geometry.specDepth = w.integer(geo, gp, "spec_depth", 0);
  L.geometry.numLayers = w.integer(geo, gp, "num_layers", 0);
  L.geometry.layerRatios = w.integers(geo, gp, "layer_ratios", -1);
  const Json &gplanes = w.array(geo, gp, "planes");
  for (size_t i = 0; i < gplanes.size(); ++i) {
    std::string pp = Walker::index(Walker::join(gp, "planes"), i);
    L.geometry.planes.push_back({w.string(gplanes[i], pp, "name"),
                                 w.integer(gplanes[i], pp, "row_bytes", 1),
                                 w.string(gplanes[i], pp, "dtype")});
  }
  if (!w.failed() && L.geometry.hashBlockSize % L.geometry.blockSize != 0)
    w.fail(Walker::join(gp, "hash_block_size"),
           "is not a multiple of block_size");

  const Json &classes = w.array(r, p, "entry_classes");
  for (size_t i = 0; i < classes.size(); ++i)
    L.classes.push_back(readClass(
        w, classes[i], Walker::index(Walker::join(p, "entry_classes"), i)));
  const Json &arenas = w.array(r, p, "arenas");
  for (size_t i = 0; i < arenas.size(); ++i)
    L.arenas.push_back(
        readArena(w, arenas[i], Walker::index(Walker::join(p, "arenas"), i)));
  L.pagedClass = w.optString(r, p, "paged_class");
  L.pagedEntries = w.integer(r, p, "paged_entries", 0);
  L.totalReservedBytes = w.integer(r, p, "total_reserved_bytes", 0);
  L.unreservedBytes = w.integer(r, p, "unreserved_bytes", 0);
  L.allocationBytes = w.integer(r, p, "allocation_bytes", 0);
  L.allocationOverBudgetBytes =
      w.integer(r, p, "allocation_over_budget_bytes", 0);
  if (const Json *rs = w.member(r, p, "row_space"); rs && !rs->is_null())
    L.rowSpace = readRowSpace(w, *rs, Walker::join(p, "row_space"));
  // The geometry's fingerprint, recomputed from what was read: a manifest
  // whose numbers were changed (and its checksum redone) no longer matches
  // the fingerprint the compiler wrote, nor the headers built against it.
  L.layoutFingerprint = layoutFingerprint(L);
  // Optional: a report written before the key existed has none.
  if (const Json *fp = w.member(r, p, "layout_fingerprint", /*required=*/false)) {
    std::string fpp = Walker::join(p, "layout_fingerprint");
    std::string want = layoutFingerprintText(L.layoutFingerprint);
    if (!fp->is_string())
      w.fail(fpp, "expected a string (0x and 16 hex digits)");
    else if (!w.failed() && fp->get<std::string>() != want)
      w.fail(fpp, "is " + fp->get<std::string>().substr(0, 18) +
                      ", but the geometry it describes has " + want +
                      " (the layout was altered after the compiler wrote it)");
  }
}

// --- the kernels --------------------------------------------------------

/// `"id_range": [0, max]`: the max, or a refusal.
int64_t readRange(Walker &w, const Json &o, const std::string &p) {
  const Json &r = w.array(o, p, "id_range");
  std::string rp = Walker::join(p, "id_range");
  if (w.failed())
    return 0;
  if (r.size() != 2) {
    w.fail(rp, "expected [0, max]");
    return 0;
  }
  if (w.asInteger(r[0], rp + "[0]", 0) != 0 && !w.failed())
    w.fail(rp + "[0]", "expected 0");
  return w.asInteger(r[1], rp + "[1]", 1);
}

KernelSegment readSegment(Walker &w, const Json &s, const std::string &p) {
  KernelSegment x;
  x.srcOff = w.integer(s, p, "src_off", 0);
  x.srcStride = w.integer(s, p, "src_stride", 0);
  x.srcId = int(w.integer(s, p, "src_id", -1));
  x.dstOff = w.integer(s, p, "dst_off", 0);
  x.dstStride = w.integer(s, p, "dst_stride", 0);
  x.dstId = int(w.integer(s, p, "dst_id", -1));
  x.bytes = w.integer(s, p, "bytes", 0);
  x.what = w.string(s, p, "what");
  return x;
}

/// The last byte one side of `seg` can touch, for ids below `idMax` (or
/// items below `items` on a staging side), must stay within `limit`.
void checkReach(Walker &w, const std::string &at, const char *side, int64_t off,
                int64_t stride, int64_t bytes, int64_t idMax, int64_t limit,
                const char *space) {
  int64_t end = 0;
  bool overflow = mulOverflows(idMax - 1, stride, end) ||
                  addOverflows(end, off, end) || addOverflows(end, bytes, end);
  if (overflow || end > limit)
    w.fail(at, std::string(side) + " reaches past the " + space + " (" +
                   (overflow ? std::string("overflow") : std::to_string(end)) +
                   " > " + std::to_string(limit) + " bytes)");
}

KernelInfo readKernel(Walker &w, const Json &k, const std::string &p,
                      int64_t arenaBytes) {
  KernelInfo x;
  x.name = w.string(k, p, "name");
  std::string at = p + " ('" + x.name + "')";
  x.kind = w.string(k, at, "kind");
  x.entity = w.string(k, at, "entity");
  x.idsPerItem = int(w.integer(k, at, "ids_per_item", 1));
  x.idMax = readRange(w, k, at);
  x.itemBytes = w.integer(k, at, "item_bytes", 0);
  x.stagingStride = w.integer(k, at, "staging_stride", 0);
  x.vecBytes = w.integer(k, at, "vec_bytes", 1);
  x.rebase = w.boolean(k, at, "rebase");
  const Json &src = w.object(k, at, "src");
  const Json &dst = w.object(k, at, "dst");
  std::string srcSpace = w.string(src, Walker::join(at, "src"), "space");
  std::string dstSpace = w.string(dst, Walker::join(at, "dst"), "space");
  x.srcIdName = w.string(src, Walker::join(at, "src"), "id");
  x.dstIdName = w.string(dst, Walker::join(at, "dst"), "id");
  if (w.failed())
    return x;
  for (auto [space, path] : {std::pair{srcSpace, "src.space"},
                             std::pair{dstSpace, "dst.space"}})
    if (space != "arena" && space != "staging")
      w.fail(Walker::join(at, path), "'" + space + "' is neither arena nor staging");
  x.srcIsStaging = srcSpace == "staging";
  x.dstIsStaging = dstSpace == "staging";
  if (x.name.empty())
    w.fail(Walker::join(at, "name"), "empty");
  if (x.vecBytes != 1 && x.vecBytes != 2 && x.vecBytes != 4 &&
      x.vecBytes != 8 && x.vecBytes != 16)
    w.fail(Walker::join(at, "vec_bytes"),
           std::to_string(x.vecBytes) + " is not 1, 2, 4, 8 or 16");
  if ((x.srcIsStaging || x.dstIsStaging) != (x.stagingStride > 0))
    w.fail(Walker::join(at, "staging_stride"),
           "must be positive exactly when a side is staging");
  const Json &tuple = w.array(k, at, "id_tuple");
  if (!w.failed() && tuple.size() != size_t(x.idsPerItem))
    w.fail(Walker::join(at, "id_tuple"),
           "must list ids_per_item (" + std::to_string(x.idsPerItem) +
               ") positions");
  for (size_t i = 0; i < tuple.size() && !w.failed(); ++i) {
    std::string tp = Walker::index(Walker::join(at, "id_tuple"), i);
    KernelIdSlot slot;
    slot.entity = w.string(tuple[i], tp, "entity");
    slot.idMax = readRange(w, tuple[i], tp);
    std::string access = w.string(tuple[i], tp, "access");
    slot.read = access == "read" || access == "read-write";
    slot.written = access == "write" || access == "read-write";
    if (!w.failed() && (slot.entity.empty() || (!slot.read && !slot.written)))
      w.fail(tp, "needs an entity and an access (read, write or read-write)");
    x.idTuple.push_back(std::move(slot));
  }
  const Json &segs = w.array(k, at, "segments");
  int64_t sum = 0;
  for (size_t i = 0; i < segs.size() && !w.failed(); ++i) {
    std::string sp = Walker::index(Walker::join(at, "segments"), i);
    KernelSegment seg = readSegment(w, segs[i], sp);
    if (w.failed())
      break;
    // A staging side is addressed by the item index (-1), an arena side by
    // a tuple position the kernel reads (source) or writes (destination).
    auto side = [&](const char *name, int id, bool staging, bool source,
                    int64_t off, int64_t stride) {
      if (staging) {
        if (id != -1)
          w.fail(sp, std::string(name) + " " + std::to_string(id) +
                         " on the staging side (expected -1)");
        else if (off + seg.bytes > x.stagingStride)
          w.fail(sp, std::string(name) +
                         " side passes the staging stride of an item");
        return;
      }
      if (id < 0 || id >= x.idsPerItem) {
        w.fail(sp, std::string(name) + " " + std::to_string(id) +
                       " outside the " + std::to_string(x.idsPerItem) +
                       "-id tuple");
        return;
      }
      const KernelIdSlot &slot = x.idTuple[size_t(id)];
      if (source ? !slot.read : !slot.written) {
        w.fail(sp, std::string(name) + " " + std::to_string(id) +
                       " names a position the kernel does not " +
                       (source ? "read" : "write"));
        return;
      }
      checkReach(w, sp, name, off, stride, seg.bytes, slot.idMax, arenaBytes,
                 "arena");
    };
    side("src_id", seg.srcId, x.srcIsStaging, true, seg.srcOff, seg.srcStride);
    side("dst_id", seg.dstId, x.dstIsStaging, false, seg.dstOff, seg.dstStride);
    if (addOverflows(sum, seg.bytes, sum))
      w.fail(sp, "bytes overflow");
    x.segments.push_back(std::move(seg));
  }
  if (!w.failed() && sum != x.itemBytes)
    w.fail(at, "segments move " + std::to_string(sum) +
                   " bytes, item_bytes says " + std::to_string(x.itemBytes));
  if (!w.failed() && x.stagingStride > 0 && x.stagingStride < x.itemBytes)
    w.fail(Walker::join(at, "staging_stride"), "is below item_bytes");
  return x;
}

Result<SolvedLayout> finish(Walker &w, SolvedLayout L) {
  if (w.failed())
    return w.error();
  return L;
}

} // namespace

Result<SolvedLayout> parseReport(const std::string &text) {
  try {
    auto j = parseJson(text, "layout report");
    if (!j.ok())
      return j.error();
    Walker w("layout report: ");
    SolvedLayout L;
    readReportInto(w, *j, "", L);
    return finish(w, std::move(L));
  } catch (const std::exception &e) {
    return Error::invalid(std::string("layout report: ") + e.what());
  }
}

Result<SolvedLayout> parseManifest(const std::string &text) {
  try {
    auto parsed = parseJson(text, "artifact manifest");
    if (!parsed.ok())
      return parsed.error();
    const Json &m = *parsed;
    Walker w("artifact manifest: ");
    std::string format = w.string(m, "", "format");
    if (!w.failed() && format != kManifestFormat)
      return Error::invalid("artifact manifest format '" + format +
                            "', this runtime reads " + kManifestFormat);
    SolvedLayout L;
    readReportInto(w, w.object(m, "", "layout"), "layout", L);
    std::string model = w.string(m, "", "model");
    if (!w.failed() && model != L.model)
      w.fail("model", "'" + model + "' is not the layout's '" + L.model + "'");
    L.fingerprint = w.string(m, "", "fingerprint");
    if (!w.failed() &&
        (L.fingerprint.size() != 18 || L.fingerprint.compare(0, 2, "0x") != 0 ||
         L.fingerprint.find_first_not_of("0123456789abcdef", 2) !=
             std::string::npos))
      w.fail("fingerprint", "expected 0x and 16 lower-case hex digits");
    L.blockThreads = w.integer(m, "", "block_threads", 1);
    L.headerSection = w.string(m, "", "header_section");
    const Json &targets = w.array(m, "", "targets");
    for (size_t i = 0; i < targets.size(); ++i) {
      std::string tp = Walker::index("targets", i);
      L.targets.push_back({w.string(targets[i], tp, "target"),
                           w.string(targets[i], tp, "section"),
                           w.string(targets[i], tp, "format"),
                           w.integer(targets[i], tp, "bytes", 0)});
    }
    const Json &kernels = w.array(m, "", "kernels");
    for (size_t i = 0; i < kernels.size() && !w.failed(); ++i)
      L.kernels.push_back(readKernel(w, kernels[i], Walker::index("kernels", i),
                                     L.allocationBytes));
    return finish(w, std::move(L));
  } catch (const std::exception &e) {
    return Error::invalid(std::string("artifact manifest: ") + e.what());
  }
}

Result<SolvedLayout> readSolvedLayout(const Artifact &artifact) {
  const ArtifactSection *m = artifact.find("manifest");
  if (!m)
    return Error::invalid("artifact has no manifest section");
  auto L = parseManifest(m->data);
  if (!L.ok())
    return L;
  if (!artifact.find(L->headerSection))
    return Error::invalid("artifact manifest: header_section names a missing "
                          "section '" + L->headerSection + "'");
  for (const SolvedTarget &t : L->targets) {
    const ArtifactSection *s = artifact.find(t.section);
    if (!s)
      return Error::invalid("artifact manifest: target " + t.target +
                            " names a missing section '" + t.section + "'");
    if (int64_t(s->data.size()) != t.bytes)
      return Error::invalid("artifact manifest: target " + t.target + " says " +
                            std::to_string(t.bytes) + " bytes, section '" +
                            t.section + "' holds " +
                            std::to_string(s->data.size()));
  }
  return L;
}

// --- lookups ------------------------------------------------------------

const SolvedRowPlane *SolvedRowSpace::plane(const std::string &name) const {
  for (const SolvedRowPlane &p : planes)
    if (p.name == name)
      return &p;
  return nullptr;
}

const SolvedClass *SolvedLayout::classNamed(const std::string &name) const {
  for (const SolvedClass &c : classes)
    if (c.name == name)
      return &c;
  return nullptr;
}

const SolvedClass *SolvedLayout::page() const {
  for (const SolvedClass &c : classes)
    if (c.isPage() && !c.isWindow())
      return &c;
  return nullptr;
}

std::vector<const SolvedClass *> SolvedLayout::windowClasses() const {
  std::vector<const SolvedClass *> out;
  for (const SolvedClass &c : classes)
    if (c.isPage() && c.isWindow())
      out.push_back(&c);
  return out;
}

std::vector<const SolvedClass *> SolvedLayout::transferClasses() const {
  std::vector<const SolvedClass *> out;
  for (const SolvedClass &c : classes)
    if (!c.isPage() && c.transfer)
      out.push_back(&c);
  return out;
}

int64_t SolvedLayout::stateGroupCount() const {
  std::vector<const SolvedClass *> g = groupClasses();
  if (g.empty())
    return 0;
  int64_t n = g[0]->requestGroups;
  for (const SolvedClass *c : g)
    n = std::min(n, c->requestGroups);
  return n;
}

const KernelInfo *SolvedLayout::groupCopyKernelOf(const std::string &className) const {
  for (const KernelInfo &k : kernels)
    if (k.kind == "group_copy" && k.name == "pool_group_copy_" + className)
      return &k;
  return nullptr;
}

int64_t SolvedLayout::regionEntryBytes(const SolvedClass &c) const {
  if (!c.regionOffset)
    return 0;
  if (rowSpace && c.name == rowSpace->pageClass)
    // The envelope lives in the planes; the region holds the declared rest
    // (specs/report-schema.md, entry_bytes).
    return std::max<int64_t>(0, c.entryBytes -
                                    rowSpace->envelopeRows * rowSpace->rowBytes);
  return c.entryBytes;
}

const SolvedArena *SolvedLayout::arenaOf(const std::string &className) const {
  for (const SolvedArena &a : arenas)
    if (a.className == className)
      return &a;
  return nullptr;
}

const SolvedField *SolvedLayout::field(const std::string &name,
                                       const SolvedArena **arena) const {
  for (const SolvedArena &a : arenas)
    for (const SolvedField &f : a.fields)
      if (f.name == name) {
        if (arena)
          *arena = &a;
        return &f;
      }
  return nullptr;
}

const KernelInfo *findKernel(const std::vector<KernelInfo> &kernels,
                             std::string KernelInfo::*member,
                             const std::string &value) {
  for (const KernelInfo &k : kernels)
    if (k.*member == value)
      return &k;
  return nullptr;
}

int64_t launchGridX(const KernelInfo &k, int64_t items) {
  int64_t vec = k.vecBytes > 0 ? k.vecBytes : 16;
  int64_t vecs = 0;
  for (const KernelSegment &seg : k.segments)
    vecs += std::max<int64_t>(0, seg.bytes) / vec;
  int64_t perItem = ceilDiv(2112, std::max<int64_t>(1, items));
  return std::max<int64_t>(1, std::min<int64_t>((vecs + 255) / 256, perItem));
}

const KernelInfo *SolvedLayout::kernelByKind(const std::string &kind) const {
  return findKernel(kernels, &KernelInfo::kind, kind);
}

} // namespace poolrt
