//===- Report.cpp - The layout report (JSON) and the text table -----------===//

#include "codegen/Report.h"
#include "poolrt/CheckpointStore.h"
#include "dialects/Pool/IR/PoolOps.h"

#include "poolrt/Checked.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::pool;
namespace json = llvm::json;

static std::vector<poolrt::ByteRange> runs(ArrayRef<int64_t> flat) {
  std::vector<poolrt::ByteRange> out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    out.push_back({flat[i], flat[i + 1]});
  return out;
}

static const char *className(int64_t ratio) {
  return ratio == 0 ? "dense" : ratio == 4 ? "csa" : ratio == 128 ? "hca" : "?";
}

static std::optional<int64_t> opt(std::optional<uint64_t> v) {
  return v ? std::optional<int64_t>(int64_t(*v)) : std::nullopt;
}

static poolrt::SolvedRowSpace rowSpaceOf(ModelOp model, RowSpaceOp rs) {
  poolrt::SolvedRowSpace out;
  int64_t slotRows = int64_t(rs.getSlotRows());
  int64_t arenaRows = int64_t(rs.getArenaRows());
  EntryClassOp slot = model.findClass(rs.getSlotClass());
  EntryClassOp page = model.findClass(rs.getPageClass());
  auto contains = [](std::optional<ArrayRef<int64_t>> list, int64_t v) {
    return list && llvm::is_contained(*list, v);
  };
  auto window = [&](int64_t ringStart, int64_t slotRowsW, int64_t ringSlots,
                    int64_t ringStride, int64_t runRows) {
    return poolrt::SolvedWindow{ringStart, slotRowsW, ringSlots, ringStride,
                                runRows};
  };

  int64_t slack = 0, sumW = 0;
  for (auto [p, nameAttr] : llvm::enumerate(rs.getPlaneNames())) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    int64_t w = rs.getPlaneWidths()[p];
    sumW += w;
    poolrt::SolvedRowPlane plane;
    int64_t arenaBytes = 0;
    for (StateFieldOp f : model.getStateFields())
      if (f.getPlane() && *f.getPlane() == name) {
        plane.fields.push_back(f.getName().str());
        arenaBytes = std::max<int64_t>(arenaBytes, int64_t(*f.getEnd()));
      }
    int64_t planeSlack = slot && slot.getPlaneSlackBytes()
                             ? (*slot.getPlaneSlackBytes())[p]
                             : arenaRows * w - arenaBytes;
    slack += planeSlack;
    if (PlaneOp op = model.findPlane(name))
      plane.dtype = op.getDtype().str();
    plane.name = name.str();
    plane.rowBytes = w;
    plane.slackBytes = planeSlack;
    plane.blockBytes = int64_t(rs.getEnvelopeRows()) * w;
    plane.slotBytes = slotRows * w;
    if (rs.getPlaneRows())
      plane.planeBytes = int64_t(*rs.getPlaneRows()) * w;
    if (rs.getPlaneOffsets())
      plane.offset = (*rs.getPlaneOffsets())[p];
    plane.imageRanges =
        runs(cast<DenseI64ArrayAttr>(rs.getImageRanges()[p]).asArrayRef());
    plane.wideOffsets = contains(rs.getWideOffsetPlanes(), int64_t(p));
    plane.needsRebase = contains(rs.getRebasePlanes(), int64_t(p));
    out.planes.push_back(std::move(plane));
  }

  for (Attribute a : rs.getClasses()) {
    auto c = cast<RowClassAttr>(a);
    poolrt::SolvedRowClass k;
    k.ratio = c.getRatio();
    k.name = className(c.getRatio());
    k.layers.assign(c.getLayers().begin(), c.getLayers().end());
    k.blockRows = c.getBlockRows();
    k.ringStride = c.getRingStride();
    k.envelopeOffset = c.getEnvelopeOffset();
    k.envelopeRows = c.getEnvelopeRows();
    k.entryOffset = c.getEntryOffset();
    k.entryRows = c.getEntryRows();
    k.window = window(c.getRingStart(), slotRows, int64_t(rs.getRingSlots()),
                      c.getRingStride(), c.getRunRows());
    out.classes.push_back(std::move(k));
  }

  for (StateFieldOp f : model.getStateFields()) {
    if (!f.getRowsPerWindowRow())
      continue;
    int64_t k = int64_t(*f.getRowsPerWindowRow());
    int64_t w = int64_t(model.findPlane(*f.getPlane()).getRowBytes());
    int64_t offsetRows = int64_t(*f.getOffset()) / w;
    int64_t ring = int64_t(rs.getRingSlots());
    out.fieldWindows.push_back(
        {f.getName().str(), f.getPlane()->str(), k, offsetRows, ring,
         window(offsetRows / k, slotRows / k, ring, ring, ring)});
  }

  int64_t image = int64_t(rs.getImageBytes());
  int64_t pageBytes =
      page && page.getEntryBytes() ? int64_t(*page.getEntryBytes()) : 0;
  out.pageClass = rs.getPageClass().str();
  out.slotClass = rs.getSlotClass().str();
  out.blockSize = int64_t(rs.getBlockSize());
  out.ringSlots = int64_t(rs.getRingSlots());
  out.layerRatios.assign(rs.getRatios().begin(), rs.getRatios().end());
  out.arenaRows = arenaRows;
  out.slotAlignRows = int64_t(rs.getSlotAlignRows());
  out.envelopeRows = int64_t(rs.getEnvelopeRows());
  out.entryRows = int64_t(rs.getEntryRows());
  out.slotRows = slotRows;
  out.rowBytes = sumW;
  out.planeSlackBytes = slack;
  out.planeSlackFraction =
      arenaRows > 0 ? double(slack) / double(arenaRows * sumW) : 0.0;
  out.entryRowRuns = runs(rs.getEntryRowRuns());
  out.imageBytes = image;
  if (pageBytes > 0)
    out.unitsPerCheckpoint = poolrt::ceilDiv(image, pageBytes);
  out.numBlocks = opt(rs.getNumBlocks());
  out.numSlots = opt(rs.getNumSlots());
  out.planeRows = opt(rs.getPlaneRows());
  out.slotPositions = opt(rs.getSlotPositions());
  out.maxRow = opt(rs.getMaxRow());
  return out;
}

static poolrt::SolvedClass classOf(EntryClassOp c) {
  poolrt::SolvedClass cls;
  cls.name = c.getName().str();
  cls.pool = c.isPage() ? poolrt::PoolKind::Page : poolrt::PoolKind::State;
  cls.entries = int64_t(*c.getEntries());
  cls.entryBytes = int64_t(*c.getEntryBytes());
  cls.reservedBytes = int64_t(*c.getReservedBytes());
  cls.entriesPerReq = int64_t(c.getEntriesPerReq());
  cls.extraEntries = int64_t(c.getExtraEntries());
  // The plan gives a STATE class max_num_seqs * per_req + extra entries;
  // whole groups of per_req entries serve one request each.
  if (!c.isPage())
    cls.requestGroups =
        cls.entries / std::max<int64_t>(1, cls.entriesPerReq);
  cls.bytesSource = c.getDerived()
                        ? (c.getBytes() ? "declared+derived" : "derived")
                        : "declared";
  if (auto t = c.getTransferAttr()) {
    poolrt::SolvedTransfer tr;
    if (t.getKind() == "fork") {
      tr.kind = poolrt::TransferKind::Fork;
      tr.tokens = t.getTokens();
    } else if (t.getKind() == "copy") {
      tr.kind = poolrt::TransferKind::Copy;
      tr.layoutId = t.getLayoutId().str();
    }
    cls.transfer = tr;
  }
  if (c.isWindow() && c.getReserveBlocks()) {
    poolrt::SolvedAttention a;
    a.kind = *poolrt::parseAttentionKind(c.getAttention()->str());
    a.tokens = int64_t(c.getAttentionTokens());
    a.forwardTokens = int64_t(c.getForwardTokens());
    a.cachePercent = int64_t(c.getCachePercent());
    a.reserveBlocks = int64_t(*c.getReserveBlocks());
    a.sharesBlocks = c.getSharesBlocks();
    cls.attention = a;
  }
  if (c.getRegionOffset())
    cls.regionOffset = int64_t(*c.getRegionOffset());
  cls.needsRebase = c.getNeedsRebase();
  return cls;
}

static poolrt::SolvedArena arenaOf(ModelOp model, EntryClassOp c) {
  poolrt::SolvedArena arena;
  arena.className = c.getName().str();
  arena.entryBytes = int64_t(*c.getArenaBytes());
  for (StateFieldOp f : model.fieldsOf(c.getName())) {
    poolrt::SolvedField field;
    field.name = f.getName().str();
    if (f.getPlane())
      field.plane = f.getPlane()->str();
    field.offset = int64_t(*f.getOffset());
    field.end = int64_t(*f.getEnd());
    field.bytes = field.end - field.offset;
    field.layers = int64_t(f.getLayers());
    field.shape.assign(f.getShape().begin(), f.getShape().end());
    field.dtype = f.getDtype().str();
    field.fill = f.getFill().convertToDouble();
    field.align = int64_t(f.getAlign());
    field.inCheckpoint = f.getInCheckpoint();
    field.window = f.getWindow();
    arena.fields.push_back(std::move(field));
  }
  auto addRanges = [&](ArrayRef<int64_t> flat,
                       std::vector<poolrt::ByteRange> &out) {
    for (poolrt::ByteRange r : runs(flat)) {
      out.push_back(r);
      arena.checkpointBytes += r.length;
    }
  };
  if (auto flat = c.getCheckpointRanges()) {
    addRanges(*flat, arena.checkpointRanges);
    arena.slotStride = int64_t(*c.getEntryBytes());
  } else if (ArrayAttr perPlane = c.getPlaneCheckpointRangesAttr()) {
    // In a row space: one list per plane, offsets within the slot.
    arena.perPlane = true;
    for (Attribute a : perPlane) {
      arena.planeCheckpointRanges.emplace_back();
      addRanges(cast<DenseI64ArrayAttr>(a).asArrayRef(),
                arena.planeCheckpointRanges.back());
    }
  } else {
    arena.perPlane = true; // a row-space slot class without carried fields
  }
  return arena;
}

FailureOr<poolrt::SolvedLayout>
mlir::pool::solvedLayoutOf(ModelOp model, const ReportInputs &inputs) {
  if (failed(model.requirePlanned()))
    return failure();
  poolrt::SolvedLayout L;
  int64_t budget = int64_t(*model.getBudget());
  int64_t total = int64_t(*model.getTotalReservedBytes());
  L.model = model.getName().str();
  L.source = inputs.source;
  L.inputs.budgetBytes = budget;
  L.inputs.maxNumSeqs = int64_t(*model.getMaxNumSeqs());
  if (inputs.ppMinBlocks >= 0)
    L.inputs.ppMinBlocks = inputs.ppMinBlocks;
  L.inputs.params = inputs.params;
  std::sort(L.inputs.params.begin(), L.inputs.params.end());
  L.inputs.dtypeParams = inputs.dtypeParams;
  std::sort(L.inputs.dtypeParams.begin(), L.inputs.dtypeParams.end());

  poolrt::SolvedGeometry &geo = L.geometry;
  geo.blockSize = int64_t(model.getBlockSize());
  geo.hashBlockSize = int64_t(model.getHashBlockSize());
  geo.slidingWindow = int64_t(model.getSlidingWindow());
  geo.specDepth = int64_t(model.getSpecDepth());
  for (PlaneOp p : model.getPlanes())
    geo.planes.push_back(
        {p.getName().str(), int64_t(p.getRowBytes()), p.getDtype().str()});
  if (LayersOp l = model.getLayersOp()) {
    geo.numLayers = int64_t(l.getRatios().size());
    geo.layerRatios.assign(l.getRatios().begin(), l.getRatios().end());
  }
  for (EntryClassOp c : model.getEntryClasses()) {
    L.classes.push_back(classOf(c));
    if (c.isPage() && !c.isWindow()) {
      L.pagedClass = c.getName().str();
      L.pagedEntries = int64_t(*c.getEntries());
    }
    if (c.getArenaBytes())
      L.arenas.push_back(arenaOf(model, c));
  }
  if (RowSpaceOp rs = model.getRowSpace())
    L.rowSpace = rowSpaceOf(model, rs);
  L.totalReservedBytes = total;
  L.unreservedBytes = budget - total;
  L.allocationBytes = int64_t(*model.getAllocationBytes());
  L.allocationOverBudgetBytes =
      std::max<int64_t>(0, L.allocationBytes - budget);
  // Computed here, once: the report, the manifest and the header write it.
  L.layoutFingerprint = poolrt::layoutFingerprint(L);
  return L;
}

FailureOr<json::Value> mlir::pool::buildReport(ModelOp model,
                                               const ReportInputs &inputs) {
  FailureOr<poolrt::SolvedLayout> L = solvedLayoutOf(model, inputs);
  if (failed(L))
    return failure();
  return reportJson(*L);
}

std::string mlir::pool::withCommas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string mlir::pool::asGiB(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.2f GiB", double(bytes) / double(1ull << 30));
  return s;
}

/// Where the checkpoints live and how many the budget buys
/// (specs/checkpoint-placement.md).
static void printCheckpointStore(const poolrt::SolvedLayout &r,
                                 llvm::raw_ostream &os) {
  std::vector<const poolrt::SolvedClass *> state = r.groupClasses();
  const poolrt::SolvedClass *page = r.page();
  if (state.empty() || !page || !state[0]->transfer)
    return;
  const poolrt::SolvedClass &s = *state[0];
  poolrt::TransferKind kind = s.transfer->kind;
  int64_t image = 0;
  if (r.rowSpace && kind == poolrt::TransferKind::Copy)
    image = r.rowSpace->imageBytes;
  else if (poolrt::forkImagesInPageUnits(int64_t(state.size()), kind, s.entriesPerReq,
                                         r.rowSpace.has_value(),
                                         !r.windowClasses().empty()))
    for (const poolrt::SolvedArena &a : r.arenas)
      if (a.className == s.name)
        image = a.checkpointBytes;
  if (image > 0 && page->entryBytes > 0) {
    int64_t units = poolrt::ceilDiv(image, page->entryBytes);
    os << "checkpoints: images of " << withCommas(image) << " B in " << units
       << " PAGE blocks each (" << withCommas(units * r.geometry.blockSize)
       << " tokens of KV), "
       << "in the blocks' bytes under their LRU order: at most "
       << withCommas(r.pagedEntries / units)
       << " if the pool held nothing else; taken at prompt ends, branch points "
          "and response ends\n";
  } else if (kind == poolrt::TransferKind::Fork) {
    os << "checkpoints: a free state group each ("
       << (s.entriesPerReq > 1 ? "a group is several entries"
                               : "several STATE classes")
       << "): none while every group runs\n";
  }
}

void mlir::pool::printTextReport(const poolrt::SolvedLayout &r,
                                 llvm::raw_ostream &os) {
  int64_t budget = r.inputs.budgetBytes;
  os << "model " << r.model << "  (" << r.source << ")\n";
  os << "budget " << withCommas(budget) << " B (" << asGiB(budget) << "), "
     << r.inputs.maxNumSeqs << " sequences\n\n";
  os << llvm::format("%-12s %-6s %12s %14s %20s %8s %16s\n", "class", "pool",
                     "entries", "entry bytes", "reserved bytes", "per req",
                     "region offset");
  for (const poolrt::SolvedClass &c : r.classes)
    os << llvm::format("%-12s %-6s %12s %14s %20s %8lld %16s\n",
                       c.name.c_str(), c.isPage() ? "page" : "state",
                       withCommas(c.entries).c_str(),
                       withCommas(c.entryBytes).c_str(),
                       withCommas(c.reservedBytes).c_str(),
                       (long long)c.entriesPerReq,
                       c.regionOffset ? withCommas(*c.regionOffset).c_str()
                                      : "in planes");
  os << "\ntotal reserved " << withCommas(r.totalReservedBytes) << " B ("
     << asGiB(r.totalReservedBytes) << "), unreserved "
     << withCommas(r.unreservedBytes) << " B, one allocation of "
     << withCommas(r.allocationBytes) << " B\n";
  if (int64_t over = r.allocationOverBudgetBytes)
    os << "the allocation passes the budget by " << withCommas(over)
       << " B (region alignment; a row space rounds its blocks up to whole "
          "slots, as the reference does): --fit-allocation gives up blocks "
          "instead\n";
  int64_t bs = r.geometry.blockSize;
  int64_t paged = r.pagedEntries;
  // Checked: a block size near 2^62 times the blocks would wrap.
  int64_t tokens = 0;
  bool wraps = poolrt::mulOverflows(paged, bs, tokens);
  os << "paged history: " << withCommas(paged) << " blocks x " << bs
     << " tokens = " << (wraps ? std::string("(over 2^63)") : withCommas(tokens))
     << " tokens\n";
  printCheckpointStore(r, os);
  for (const poolrt::SolvedClass *w : r.windowClasses()) {
    const poolrt::SolvedAttention &a = *w->attention;
    os << "window class '" << w->name << "': " << poolrt::attentionKindName(a.kind)
       << " " << withCommas(a.tokens) << " tokens, reserve "
       << withCommas(a.reserveBlocks) << " blocks per request (forwards of "
       << withCommas(a.forwardTokens) << " tokens), "
       << (a.sharesBlocks ? "shares the blocks of '" + r.pagedClass.value_or("") + "'"
                          : "a pool of " + withCommas(w->entries) + " blocks")
       << "\n";
  }
  for (const poolrt::SolvedArena &a : r.arenas) {
    os << "\narena of '" << a.className << "': entry "
       << withCommas(a.entryBytes) << " B, checkpoint carries "
       << withCommas(a.checkpointBytes) << " B\n";
    os << llvm::format("  %-18s %-6s %14s %14s %6s %-8s %s\n", "field",
                       "plane", "offset", "end", "layers", "dtype", "ckpt");
    for (const poolrt::SolvedField &f : a.fields)
      os << llvm::format("  %-18s %-6s %14s %14s %6lld %-8s %s\n",
                         f.name.c_str(), f.plane ? f.plane->c_str() : "-",
                         withCommas(f.offset).c_str(),
                         withCommas(f.end).c_str(), (long long)f.layers,
                         f.dtype.c_str(), f.inCheckpoint ? "yes" : "no");
  }
}
