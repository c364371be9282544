//===- Explore.cpp - The layout explorer page's data and page -------------===//
//
// Builds the data poolrt/Explore.h describes. Everything is computed from
// the SolvedLayout and the runtime's RowSpaceGeometry; the page only draws.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Explore.h"

#include "poolrt/Checked.h"
#include "poolrt/RowSpace.h"
#include "poolrt/Setup.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace poolrt::explore {

namespace {

using Json = nlohmann::json;

// The shipped page (runtime/explore/page/), embedded at build time.
#include "ExplorerAssets.inc"

std::string decimal(int64_t v) { return std::to_string(v); }

Json region(const char *kind, std::string name, int64_t begin,
                    int64_t end) {
  return Json{{"kind", kind},
                      {"name", std::move(name)},
                      {"begin", begin},
                      {"end", end}};
}

/// A state field of class `cls` drawn at [begin, end) of its level.
Json fieldRegion(const SolvedField &f, const std::string &cls, int64_t begin,
                 int64_t end) {
  Json r = region("field", f.name, begin, end);
  r["class"] = cls;
  r["field"] = f.name;
  r["dtype"] = f.dtype;
  r["layers"] = f.layers;
  r["in_checkpoint"] = f.inCheckpoint;
  return r;
}

/// `count` copies of [begin, begin + length), `stride` apart, the last one
/// `last` long; the k-th is labelled `label` first + k * step.
void repeat(Json &r, int64_t count, int64_t stride, int64_t length,
            int64_t last, const char *label, int64_t first, int64_t step) {
  r["repeat"] = Json{{"count", count},   {"stride", stride},
                             {"length", length}, {"last", last},
                             {"label", label},   {"first", first},
                             {"step", step}};
}

Json level(const char *name, int64_t size, Json regions) {
  return Json{{"name", name}, {"size", size}, {"regions", std::move(regions)}};
}

/// Where the instances of a level sit in its map: instance k starts at
/// base + k * stride units, and is named label (first + k * step).
void instances(Json &lv, const char *label, int64_t count, int64_t base,
               int64_t stride, int64_t first, int64_t step) {
  lv["instances"] = Json{{"label", label}, {"count", count},
                                 {"base", base},   {"stride", stride},
                                 {"first", first}, {"step", step}};
}

/// The allocation: the planes of a row space and every class region, by
/// byte offset, with the padding between.
Json allocationMap(const SolvedLayout &L, std::string &error) {
  struct Span {
    int64_t begin, end;
    Json r;
  };
  std::vector<Span> spans;
  if (L.rowSpace)
    for (const SolvedRowPlane &p : L.rowSpace->planes)
      if (p.offset && p.planeBytes) {
        Json r = region("plane", "plane " + p.name, *p.offset,
                                *p.offset + *p.planeBytes);
        r["plane"] = p.name;
        spans.push_back({*p.offset, *p.offset + *p.planeBytes, std::move(r)});
      }
  std::vector<Json> entryLevels;
  for (const SolvedClass &c : L.classes) {
    if (!c.regionOffset)
      continue;
    int64_t eb = L.regionEntryBytes(c);
    int64_t bytes = 0, end = 0;
    if (mulOverflows(c.entries, eb, bytes) ||
        addOverflows(*c.regionOffset, bytes, end)) {
      error = "class '" + c.name + "': its region passes 2^63 bytes";
      return {};
    }
    Json r = region("pool", c.name, *c.regionOffset, end);
    r["class"] = c.name;
    r["pool"] = c.isPage() ? "page" : "state";
    if (c.entries > 0 && eb > 0)
      repeat(r, c.entries, eb, eb, eb, "entry", 0, 1);
    spans.push_back({*c.regionOffset, end, std::move(r)});

    // One entry of the class: its fields, and the padding after them.
    Json fields = Json::array();
    int64_t used = 0;
    const SolvedArena *a = L.arenaOf(c.name);
    if (a && !(L.rowSpace && c.name == L.rowSpace->slotClass))
      for (const SolvedField &f : a->fields) {
        fields.push_back(fieldRegion(f, c.name, f.offset, f.end));
        used = std::max(used, f.end);
      }
    if (fields.empty()) {
      Json er = region("entry", "entry of " + c.name, 0, eb);
      er["class"] = c.name;
      fields.push_back(std::move(er));
    } else if (used < eb) {
      Json pr = region("padding", "padding", used, eb);
      pr["class"] = c.name;
      fields.push_back(std::move(pr));
    }
    Json lv = level("entry", eb, std::move(fields));
    lv["class"] = c.name;
    instances(lv, "entry", c.entries, *c.regionOffset, eb, 0, 1);
    entryLevels.push_back(std::move(lv));
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.begin < b.begin; });
  Json regions = Json::array();
  int64_t at = 0;
  for (Span &s : spans) {
    if (s.begin > at)
      regions.push_back(region("padding", "padding", at, s.begin));
    at = std::max(at, s.end);
    regions.push_back(std::move(s.r));
  }
  if (L.allocationBytes > at)
    regions.push_back(region("padding", "padding", at, L.allocationBytes));
  Json levels = Json::array();
  levels.push_back(level("allocation", std::max(L.allocationBytes, at),
                         std::move(regions)));
  for (Json &lv : entryLevels)
    levels.push_back(std::move(lv));
  return Json{{"name", "allocation"},
                      {"unit", "byte"},
                      {"unit_bytes", 1},
                      {"base", "0"},
                      {"levels", std::move(levels)}};
}

/// Where a plane's slots sit: group g at physical slot physicalSlot(g).
struct SlotPlacement {
  int64_t topGroupRow = 0; // the first row of group 0's slot
  int64_t slotStride = 0;  // rows from one group's slot to the next's
  int64_t slotsBegin = 0;  // the first row of the lowest slot
};

// Finds where the groups' slots sit in a plane; false, with `error`, when the
// geometry has no physical slot for a group.
bool slotPlacement(const RowSpaceGeometry &geo, SlotPlacement &sp,
                   std::string &error) {
  int64_t planeRows = geo.planeRows(), slotRows = geo.slotRows();
  int64_t ns = geo.numSlots();
  // Group g sits at physical slot physicalSlot(g), slot_positions - 1 - g:
  // the groups count down from the top of the plane.
  int64_t topGroupRow = 0, slotStride = -slotRows, slotsBegin = planeRows;
  if (ns > 0) {
    auto s0 = geo.physicalSlot(0);
    if (!s0) {
      error = s0.error().message;
      return false;
    }
    topGroupRow = geo.slotSpan(*s0).first;
    if (ns > 1) {
      auto s1 = geo.physicalSlot(1);
      if (!s1) {
        error = s1.error().message;
        return false;
      }
      slotStride = geo.slotSpan(*s1).first - topGroupRow;
    }
    slotsBegin = topGroupRow + (ns - 1) * slotStride;
  }
  sp.topGroupRow = topGroupRow;
  sp.slotStride = slotStride;
  sp.slotsBegin = slotsBegin;
  return true;
}

// The plane level's regions: the blocks from row 0, the gap, and the slots
// from `slotsBegin` to the top of the plane.
Json planeRegions(const SolvedRowSpace &rs, const RowSpaceGeometry &geo,
                  int64_t slotsBegin) {
  int64_t planeRows = geo.planeRows(), slotRows = geo.slotRows();
  int64_t env = geo.envelopeRows(), nb = geo.numBlocks(), ns = geo.numSlots();
  int64_t blockEnd = nb * env;
  Json top = Json::array();
  Json blocks = region("blocks", "blocks", 0, blockEnd);
  blocks["class"] = rs.pageClass;
  if (nb > 0)
    repeat(blocks, nb, env, env, env, "block", 0, 1);
  top.push_back(std::move(blocks));
  top.push_back(region("gap", "gap", blockEnd, std::max(blockEnd, slotsBegin)));
  Json slots = region("slots", "slots", slotsBegin, planeRows);
  slots["class"] = rs.slotClass;
  if (ns > 0)
    // Ascending rows: the k-th slot from the bottom holds group ns - 1 - k.
    repeat(slots, ns, slotRows, slotRows, slotRows, "group", ns - 1, -1);
  top.push_back(std::move(slots));
  return top;
}

// Appends to `slot` each class's window ring and, per layer, its runs, rows
// relative to the slot's start; false, with `error`, when the geometry
// can't place a layer's window or the ring is not a regular interleave.
bool appendWindowRings(Json &slot, const RowSpaceGeometry &geo,
                       int64_t arenaRows, std::string &error) {
  int64_t ns = geo.numSlots();
  int64_t slotPos = ns > 0 ? *geo.physicalSlot(0) : geo.slotPositions() - 1;
  int64_t slotStart = geo.slotSpan(slotPos).first;
  int64_t ring = geo.ringSlots();
  for (const ClassLayout &c : geo.classes()) {
    std::string name = c.ratio == kDenseRatio ? "dense"
                       : c.ratio == kCsaRatio ? "csa"
                       : c.ratio == kHcaRatio ? "hca"
                                              : "ratio " + std::to_string(c.ratio);
    Json rr = region("ring", name + " windows", arenaRows + c.entryOffset,
                             arenaRows + c.entryOffset + c.entryRows);
    rr["class"] = name;
    slot.push_back(std::move(rr));
    int64_t stride = c.ringStride, runRows = c.numLayers() * c.ringStride;
    if (stride <= 0 || ring <= 0)
      continue;
    int64_t runs = ceilDiv(ring, stride);
    for (int64_t layer : c.layers) {
      auto base = geo.layerBaseRow(layer);
      auto first = geo.windowIndex(layer, slotPos, 0);
      if (!base || !first) {
        error = (!base ? base.error() : first.error()).message;
        return false;
      }
      int64_t begin = *base + *first - slotStart;
      // The compact form must be what the geometry says run by run.
      for (int64_t k = 1; k < runs; ++k) {
        auto at = geo.windowIndex(layer, slotPos, k * stride);
        if (!at || *base + *at - slotStart != begin + k * runRows) {
          error = "layer " + std::to_string(layer) +
                  ": the window ring is not a regular interleave";
          return false;
        }
      }
      int64_t last = ring - (runs - 1) * stride;
      Json lr = region("window", name + " layer " + std::to_string(layer),
                               begin, begin + (runs - 1) * runRows + last);
      lr["class"] = name;
      lr["layer"] = layer;
      repeat(lr, runs, runRows, stride, last, "run", 0, 1);
      slot.push_back(std::move(lr));
    }
  }
  return true;
}

// One slot's regions, rows relative to its start: the state arena's fields
// of this plane and its slack, the window rings, the slot's padding; false,
// with `error`, when the window rings can't be drawn.
bool slotRegions(const SolvedLayout &L, const SolvedRowPlane &plane,
                 const RowSpaceGeometry &geo, Json &slot, std::string &error) {
  const SolvedRowSpace &rs = *L.rowSpace;
  int64_t slotRows = geo.slotRows();
  slot = Json::array();
  int64_t arenaRows = geo.arenaRows(), rb = plane.rowBytes;
  Json arena = region("arena", "state arena", 0, arenaRows);
  arena["class"] = rs.slotClass;
  slot.push_back(std::move(arena));
  int64_t usedRows = 0;
  if (const SolvedArena *a = L.arenaOf(rs.slotClass))
    for (const SolvedField &f : a->fields) {
      if (f.plane.value_or("") != plane.name)
        continue;
      int64_t r0 = f.offset / rb, r1 = ceilDiv(f.end, rb);
      Json fr = fieldRegion(f, rs.slotClass, r0, r1);
      fr["plane"] = plane.name;
      fr["byte_begin"] = f.offset;
      fr["byte_end"] = f.end;
      fr["window"] = f.window;
      slot.push_back(std::move(fr));
      usedRows = std::max(usedRows, r1);
    }
  if (usedRows < arenaRows) {
    Json sr = region("slack", "arena slack", usedRows, arenaRows);
    sr["plane"] = plane.name;
    slot.push_back(std::move(sr));
  }
  if (!appendWindowRings(slot, geo, arenaRows, error))
    return false;
  int64_t entryEnd = arenaRows + geo.entryRows();
  if (entryEnd < slotRows)
    slot.push_back(region("padding", "slot padding", entryEnd, slotRows));
  return true;
}

// One block's envelope: each compressed class's rows, and per layer where
// they sit; false, with `error`, when the geometry can't place a layer's rows.
bool blockRegions(const RowSpaceGeometry &geo, Json &block,
                  std::string &error) {
  int64_t nb = geo.numBlocks();
  block = Json::array();
  for (const ClassLayout &c : geo.classes()) {
    if (c.ratio == kDenseRatio || c.blockRows <= 0)
      continue;
    std::string name = c.ratio == kCsaRatio ? "csa" : c.ratio == kHcaRatio ? "hca"
                                                                            : "ratio " + std::to_string(c.ratio);
    Json er = region("envelope", name + " compressed rows", c.envelopeOffset,
                             c.envelopeOffset + c.envelopeRows);
    er["class"] = name;
    block.push_back(std::move(er));
    if (nb == 0)
      continue;
    for (int64_t layer : c.layers) {
      auto base = geo.layerBaseRow(layer);
      auto first = geo.compressIndex(layer, 0, 0);
      if (!base || !first) {
        error = (!base ? base.error() : first.error()).message;
        return false;
      }
      int64_t b = *base + *first;
      Json lr = region("compressed", name + " layer " + std::to_string(layer),
                               b, b + c.blockRows);
      lr["class"] = name;
      lr["layer"] = layer;
      block.push_back(std::move(lr));
    }
  }
  return true;
}

/// One plane of the row space at three levels: the plane (blocks, gap,
/// slots), one slot (the state arena's fields of this plane, each class's
/// window ring per layer, padding), one block (each class's compressed rows
/// per layer). Rows come from the runtime's RowSpaceGeometry.
Json planeMap(const SolvedLayout &L, const SolvedRowPlane &plane,
                      const RowSpaceGeometry &geo, std::string &error) {
  const SolvedRowSpace &rs = *L.rowSpace;
  int64_t planeRows = geo.planeRows(), slotRows = geo.slotRows();
  int64_t env = geo.envelopeRows(), nb = geo.numBlocks(), ns = geo.numSlots();
  SlotPlacement sp;
  if (!slotPlacement(geo, sp, error))
    return {};

  Json top = planeRegions(rs, geo, sp.slotsBegin);

  // One slot, rows relative to its start.
  Json slot;
  if (!slotRegions(L, plane, geo, slot, error))
    return {};

  // One block's envelope.
  Json block;
  if (!blockRegions(geo, block, error))
    return {};

  int64_t rb = plane.rowBytes;
  Json levels = Json::array();
  levels.push_back(level("plane", planeRows, std::move(top)));
  Json slotLevel = level("slot", slotRows, std::move(slot));
  instances(slotLevel, "group", ns, sp.topGroupRow, sp.slotStride, 0, 1);
  levels.push_back(std::move(slotLevel));
  Json blockLevel = level("block", env, std::move(block));
  instances(blockLevel, "block", nb, 0, env, 0, 1);
  levels.push_back(std::move(blockLevel));
  return Json{{"name", "plane " + plane.name},
                      {"plane", plane.name},
                      {"dtype", plane.dtype},
                      {"unit", "row"},
                      {"unit_bytes", rb},
                      {"base", decimal(plane.offset.value_or(0))},
                      {"levels", std::move(levels)}};
}

void flatten(const Json &v, const std::string &path,
             std::vector<std::pair<std::string, std::string>> &out) {
  if (v.is_object()) {
    // nlohmann keeps an object's keys sorted.
    for (auto it = v.begin(); it != v.end(); ++it)
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    return;
  }
  if (v.is_array()) {
    if (v.empty())
      out.push_back({path, "[]"});
    for (size_t i = 0; i < v.size(); ++i)
      flatten(v[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  out.push_back({path, v.dump(-1, ' ', false, Json::error_handler_t::replace)});
}

/// The member's name: the last key of the path, without indices.
std::string leafKey(const std::string &path) {
  std::string p = path;
  while (!p.empty() && p.back() == ']') {
    size_t open = p.rfind('[');
    if (open == std::string::npos)
      break;
    p.resize(open);
  }
  size_t dot = p.rfind('.');
  return dot == std::string::npos ? p : p.substr(dot + 1);
}

const char *changeKind(const std::string &path) {
  std::string k = leafKey(path);
  auto has = [&](const char *s) { return k.find(s) != std::string::npos; };
  if (has("offset") || has("ring_start") || has("ranges") || has("_runs") ||
      k == "max_row")
    return "offset";
  if (has("entries") || has("groups") || k.rfind("num_", 0) == 0 ||
      has("rows") || has("bytes") || has("positions") || k == "units_per_checkpoint")
    return "count";
  return "other";
}

bool isInput(const std::string &path) {
  for (const char *p : {"inputs", "model", "source", "geometry"})
    if (path == p || path.rfind(std::string(p) + ".", 0) == 0 ||
        path.rfind(std::string(p) + "[", 0) == 0)
      return true;
  return false;
}


Json regionMaps(const SolvedLayout &L, std::string &error) {
  Json maps = Json::array();
  if (L.rowSpace) {
    const SolvedRowSpace &rs = *L.rowSpace;
    if (!rs.numBlocks || !rs.numSlots || !rs.planeRows || !rs.slotPositions) {
      error = "the row space is not planned (no block or slot counts)";
      return {};
    }
    auto geo = RowSpaceGeometry::create(rs.layerRatios, *rs.numBlocks, *rs.numSlots,
                                        rs.ringSlots, rs.blockSize, *rs.planeRows,
                                        rs.arenaRows, *rs.slotPositions,
                                        rs.slotAlignRows);
    if (!geo.ok()) {
      error = "row space: " + geo.error().message;
      return {};
    }
    if (geo->slotRows() != rs.slotRows || geo->envelopeRows() != rs.envelopeRows) {
      error = "the row space's slot or envelope rows disagree with its ratios";
      return {};
    }
    for (const SolvedRowPlane &p : rs.planes) {
      if (p.rowBytes <= 0) {
        error = "plane '" + p.name + "' has no row bytes";
        return {};
      }
      Json m = planeMap(L, p, *geo, error);
      if (!error.empty())
        return {};
      maps.push_back(std::move(m));
    }
  }
  Json alloc = allocationMap(L, error);
  if (!error.empty())
    return {};
  maps.push_back(std::move(alloc));
  return maps;
}

Json pointsJson(const std::vector<Point> &points) {
  Json out = Json::array();
  for (const Point &p : points) {
    Json o{{"label", p.label}, {"budget", p.budget}};
    if (!p.layout) {
      o["error"] = p.error;
      out.push_back(std::move(o));
      continue;
    }
    const SolvedLayout &r = *p.layout;
    PointNumbers n = pointNumbers(r);
    o["page_entry_bytes"] = n.pageEntryBytes;
    o["state_bytes_per_req"] = n.stateBytesPerReq;
    o["blocks"] = r.pagedEntries;
    o["tokens"] = n.tokens;
    o["tokens_per_seq"] = n.tokensPerSeq;
    o["max_num_seqs"] = r.inputs.maxNumSeqs;
    Json planes = Json::array();
    if (r.rowSpace) {
      o["slack_fraction"] = r.rowSpace->planeSlackFraction;
      int64_t arenaRows = r.rowSpace->arenaRows;
      for (const SolvedRowPlane &pl : r.rowSpace->planes)
        planes.push_back(Json{
            {"name", pl.name},
            {"slack_bytes", pl.slackBytes},
            {"slack_fraction",
             arenaRows ? double(pl.slackBytes) / double(arenaRows * pl.rowBytes)
                       : 0.0}});
    } else {
      o["slack_fraction"] = nullptr;
    }
    o["planes"] = std::move(planes);
    out.push_back(std::move(o));
  }
  return out;
}

Json diffJson(const SolvedLayout &a, const Json &ra, const SolvedLayout &b,
              const Json &rb) {
  std::vector<std::pair<std::string, std::string>> fa, fb;
  flatten(ra, "", fa);
  flatten(rb, "", fb);
  std::map<std::string, std::string> mb(fb.begin(), fb.end());
  std::set<std::string> seen;
  Json changes = Json::array(), inputs = Json::array();
  std::map<std::string, int64_t> counts;
  auto add = [&](const std::string &path, const std::string *va,
                 const std::string *vb) {
    Json c{{"path", path},
                   {"this", va ? Json(*va) : Json(nullptr)},
                   {"other", vb ? Json(*vb) : Json(nullptr)}};
    if (isInput(path)) {
      inputs.push_back(std::move(c));
      return;
    }
    const char *kind = changeKind(path);
    c["kind"] = kind;
    ++counts[kind];
    changes.push_back(std::move(c));
  };
  for (const auto &[path, va] : fa) {
    seen.insert(path);
    auto it = mb.find(path);
    if (it == mb.end())
      add(path, &va, nullptr);
    else if (it->second != va)
      add(path, &va, &it->second);
  }
  for (const auto &[path, vb] : fb)
    if (!seen.count(path))
      add(path, nullptr, &vb);
  Json summary = Json::object();
  for (const char *k : {"offset", "count", "other"})
    summary[k] = counts[k];
  return Json{{"this_model", a.model},
                      {"other_model", b.model},
                      {"this_source", a.source},
                      {"other_source", b.source},
                      {"this_fingerprint", layoutFingerprintText(a.layoutFingerprint)},
                      {"other_fingerprint", layoutFingerprintText(b.layoutFingerprint)},
                      {"same_layout", a.layoutFingerprint == b.layoutFingerprint},
                      {"inputs", std::move(inputs)},
                      {"changes", std::move(changes)},
                      {"summary", std::move(summary)}};
}

// A page holds at most this many prefill chunks of one request; past it
// only the chunks that keep a checkpoint or were cut (and the first and
// last) are listed, and `prefill_elided` says so.
constexpr size_t kMaxLadderChunks = 400;

// codegen's withCommas (Report.h) is an MLIR library's; pool-serve links
// this one without the compiler.
std::string withCommas(int64_t v) {
  uint64_t u = v < 0 ? uint64_t(-(v + 1)) + 1 : uint64_t(v);
  std::string d = std::to_string(u);
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0)
      out += ',';
    out += d[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string positions(const std::vector<int64_t> &v) {
  if (v.empty())
    return "none";
  std::string out;
  auto add = [&](size_t i) { out += (out.empty() ? "" : " ") + withCommas(v[i]); };
  if (v.size() <= 12) {
    for (size_t i = 0; i < v.size(); ++i)
      add(i);
    return out;
  }
  for (size_t i = 0; i < 6; ++i)
    add(i);
  out += " ...";
  for (size_t i = v.size() - 3; i < v.size(); ++i)
    add(i);
  return out + " (" + withCommas(int64_t(v.size())) + " in all)";
}

Json queryJson(const LadderQuery &q) {
  return {{"prompt_tokens", q.promptTokens},
          {"output_tokens", q.outputTokens},
          {"tail_tokens", q.tailTokens},
          {"max_batched_tokens", q.maxBatchedTokens}};
}

Json laddersJson(const std::vector<LadderRun> &runs) {
  Json out = Json::array();
  for (const LadderRun &run : runs) {
    Json j = {{"query", queryJson(run.query)}, {"error", run.error}};
    if (run.ladder) {
      const Ladder &L = *run.ladder;
      j["interval"] = L.interval;
      j["block_size"] = L.blockSize;
      j["transfer"] = L.transfer;
      j["groups"] = L.groups;
      j["note"] = L.note;
      Json reqs = Json::array();
      for (const LadderRequest &r : L.requests) {
        Json chunks = Json::array();
        bool elide = r.prefill.size() > kMaxLadderChunks;
        for (size_t i = 0; i < r.prefill.size(); ++i) {
          const LadderChunk &c = r.prefill[i];
          if (elide && !c.checkpoint && !c.cutForDemand && i != 0 &&
              i + 1 != r.prefill.size())
            continue;
          chunks.push_back({{"start", c.start},
                            {"end", c.end},
                            {"cut_for_demand", c.cutForDemand},
                            {"checkpoint", c.checkpoint}});
        }
        reqs.push_back({{"role", r.role},
                        {"prompt_tokens", r.promptTokens},
                        {"hit_tokens", r.hitTokens},
                        {"indexed_tokens", r.indexedTokens},
                        {"demand_pos", r.demandPos},
                        {"limit_tokens", r.limitTokens},
                        {"reason", r.reason},
                        {"output_tokens", r.outputTokens},
                        {"kept", r.kept},
                        {"dropped", r.dropped},
                        {"evicted", r.evicted},
                        {"chunks", int64_t(r.prefill.size())},
                        {"prefill", std::move(chunks)},
                        {"prefill_elided", elide},
                        {"checkpoints", r.checkpoints()},
                        {"decode_checkpoints", r.decodeCheckpoints}});
      }
      j["requests"] = std::move(reqs);
    }
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace

LadderQuery defaultLadderQuery(const SolvedLayout &layout, int64_t interval,
                               int64_t maxBatchedTokens) {
  LadderQuery q;
  q.promptTokens = interval > 0 && interval <= (int64_t(1) << 40)
                       ? 4 * interval + interval / 2
                       : 32768;
  int64_t bs = std::max<int64_t>(1, layout.geometry.blockSize);
  int64_t history = pointNumbers(layout).tokens; // -1 past 2^63
  if (history >= 0 && q.promptTokens > history / 2)
    q.promptTokens = std::max(bs, history / 2 / bs * bs);
  q.outputTokens = 1024;
  q.tailTokens = 1024;
  q.maxBatchedTokens = maxBatchedTokens;
  return q;
}

std::vector<LadderRun> runLadders(const SolvedLayout &layout, const CachePolicy &policy,
                                  const std::vector<LadderQuery> &queries) {
  std::vector<LadderRun> out;
  auto config = cacheManagerConfig(layout, policy);
  for (const LadderQuery &q : queries) {
    LadderRun run;
    run.query = q;
    if (!config.ok()) {
      run.error = config.error().message;
    } else {
      auto L = checkpointLadder(*config, q);
      if (L.ok())
        run.ladder = L.take();
      else
        run.error = L.error().message;
    }
    out.push_back(std::move(run));
  }
  return out;
}

std::string ladderText(const LadderRun &run) {
  const LadderQuery &q = run.query;
  std::string s = "checkpoint ladder: a " + withCommas(q.promptTokens) +
                  "-token prompt, " + withCommas(q.outputTokens) +
                  " output tokens, a " + withCommas(q.tailTokens) + "-token tail, " +
                  withCommas(q.maxBatchedTokens) + " tokens per pass";
  if (!run.ladder)
    return s + "\n  cannot run it: " + run.error + "\n";
  const Ladder &L = *run.ladder;
  s += " (interval " + withCommas(L.interval) + ", block " + withCommas(L.blockSize) +
       ", " + L.transfer + ", " + withCommas(L.groups) + " state groups)\n";
  if (!L.note.empty())
    s += "  note: " + L.note + "\n";
  for (const LadderRequest &r : L.requests) {
    std::string role = r.role;
    role.resize(10, ' ');
    s += "  " + role + withCommas(r.promptTokens) + " tokens: hit " +
         withCommas(r.hitTokens) + " (indexed " + withCommas(r.indexedTokens) +
         (r.reason.empty() ? "" : ", " + r.reason) + ")";
    if (r.demandPos)
      s += ", demand " + withCommas(r.demandPos);
    s += ", last rung " + withCommas(r.limitTokens) + "; " +
         withCommas(int64_t(r.prefill.size())) + " prefill chunks, checkpoints at " +
         positions(r.checkpoints());
    for (const LadderChunk &c : r.prefill)
      if (c.cutForDemand)
        s += " (cut at " + withCommas(c.end) + " for the demand)";
    s += "; decode checkpoints at " + positions(r.decodeCheckpoints);
    if (r.kept || r.dropped || r.evicted)
      s += "; kept " + withCommas(r.kept) + ", dropped " + withCommas(r.dropped) +
           ", evicted " + withCommas(r.evicted);
    s += "\n";
  }
  return s;
}

PointNumbers pointNumbers(const SolvedLayout &r) {
  PointNumbers n;
  for (const SolvedClass &c : r.classes) {
    if (c.isPage() && !c.isWindow())
      n.pageEntryBytes = c.entryBytes;
    else if (!c.isPage()) {
      int64_t b = 0, sum = 0;
      bool over = n.stateBytesPerReq < 0 ||
                  mulOverflows(c.entryBytes, c.entriesPerReq, b) ||
                  addOverflows(n.stateBytesPerReq, b, sum);
      n.stateBytesPerReq = over ? -1 : sum; // -1: past 2^63
    }
  }
  if (mulOverflows(r.pagedEntries, r.geometry.blockSize, n.tokens))
    n.tokens = -1;
  n.tokensPerSeq = r.inputs.maxNumSeqs > 0 && n.tokens >= 0
                       ? n.tokens / r.inputs.maxNumSeqs
                       : 0;
  return n;
}

Result<std::string> pageData(const PageInputs &in) {
  if (!in.layout)
    return Error::invalid("explorer: no layout");
  try {
    const SolvedLayout &L = *in.layout;
    Json report = Json::parse(in.reportJson);
    std::string error;
    Json maps = regionMaps(L, error);
    if (!error.empty())
      return Error::invalid("cannot draw the layout: " + error);
    PointNumbers n = pointNumbers(L);
    Json data = {{"schema", "poolc-explore/1"},
                 {"report", std::move(report)},
                 {"text", in.text},
                 {"numbers", {{"page_entry_bytes", n.pageEntryBytes},
                              {"state_bytes_per_req", n.stateBytesPerReq},
                              {"tokens", n.tokens},
                              {"tokens_per_seq", n.tokensPerSeq}}},
                 {"maps", std::move(maps)},
                 {"sweep", nullptr},
                 {"vary", nullptr},
                 {"diff", nullptr},
                 {"ladders", laddersJson(in.ladders)},
                 {"live", in.live}};
    if (!in.artifact.empty())
      data["artifact"] = in.artifact;
    if (!in.sweep.empty())
      data["sweep"] = {{"axis", "budget"}, {"points", pointsJson(in.sweep)}};
    if (!in.vary.empty())
      data["vary"] = {{"name", in.varyName}, {"points", pointsJson(in.vary)}};
    if (in.other)
      data["diff"] = diffJson(L, data["report"], *in.other,
                              Json::parse(in.otherReportJson));
    return data.dump(-1, ' ', false, Json::error_handler_t::replace);
  } catch (const std::exception &e) {
    return Error::invalid(std::string("explorer: ") + e.what());
  }
}

std::string pageHtml(const std::string &text) {
  // '<' only occurs inside JSON strings, where \u003c means the same.
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      escaped += "\\u003c";
    else
      escaped += c;
  }
  // Fill the template's markers in the order they appear, so nothing
  // inserted is searched again.
  const std::pair<const char *, std::string> parts[] = {
      {"/*POOLC_CSS*/", kExplorerCss},
      {"/*POOLC_DATA*/", escaped},
      {"/*POOLC_JS*/", kExplorerJs}};
  const std::string html = kExplorerHtml;
  std::string out;
  size_t at = 0;
  for (const auto &[marker, with] : parts) {
    size_t m = html.find(marker, at);
    if (m == std::string::npos)
      continue;
    out.append(html, at, m - at);
    out += with;
    at = m + std::string(marker).size();
  }
  out.append(html, at, std::string::npos);
  return out;
}

Result<std::string> artifactReportJson(const Artifact &artifact) {
  const ArtifactSection *m = artifact.find("manifest");
  if (!m)
    return Error::invalid("artifact has no manifest section");
  try {
    Json manifest = Json::parse(m->data);
    if (!manifest.is_object() || !manifest.contains("layout") ||
        !manifest["layout"].is_object())
      return Error::invalid("artifact manifest has no layout object");
    return manifest["layout"].dump(-1, ' ', false, Json::error_handler_t::replace);
  } catch (const std::exception &e) {
    return Error::invalid(std::string("artifact manifest: ") + e.what());
  }
}

} // namespace poolrt::explore
