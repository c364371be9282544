//===- Report.cpp - The layout report (JSON) and the text table -----------===//

#include "codegen/Report.h"
#include "dialects/Pool/IR/PoolOps.h"

#include "llvm/Support/Format.h"

// Note: llvm::json::Value does not copy a StringRef. Every string taken
// from the module is copied (.str()) so a report outlives its context.
#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::pool;
namespace json = llvm::json;

static json::Value fillValue(double v) {
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  return v;
}

static json::Array runs(ArrayRef<int64_t> flat) {
  json::Array out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    out.push_back(json::Array{flat[i], flat[i + 1]});
  return out;
}

static json::Object windowJson(int64_t ringStart, int64_t slotRows,
                               int64_t ringSlots, int64_t ringStride,
                               int64_t runRows) {
  return json::Object{{"ring_start", ringStart},
                      {"slot_rows", slotRows},
                      {"ring_slots", ringSlots},
                      {"ring_stride", ringStride},
                      {"run_rows", runRows}};
}

static const char *className(int64_t ratio) {
  return ratio == 0 ? "dense" : ratio == 4 ? "csa" : ratio == 128 ? "hca" : "?";
}

static json::Value rowSpaceReport(ModelOp model, RowSpaceOp rs) {
  int64_t slotRows = int64_t(rs.getSlotRows());
  int64_t arenaRows = int64_t(rs.getArenaRows());
  auto opt = [](std::optional<uint64_t> v) {
    return v ? json::Value(int64_t(*v)) : json::Value(nullptr);
  };
  EntryClassOp slot, page;
  for (EntryClassOp c : model.getBodyBlock().getOps<EntryClassOp>()) {
    if (c.getName() == rs.getSlotClass())
      slot = c;
    if (c.getName() == rs.getPageClass())
      page = c;
  }
  auto contains = [](std::optional<ArrayRef<int64_t>> list, int64_t v) {
    return list && llvm::is_contained(*list, v);
  };

  json::Array planes;
  int64_t slack = 0, sumW = 0;
  for (auto [p, nameAttr] : llvm::enumerate(rs.getPlaneNames())) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    int64_t w = rs.getPlaneWidths()[p];
    sumW += w;
    json::Array fieldNames;
    int64_t arenaBytes = 0;
    for (StateFieldOp f : model.getBodyBlock().getOps<StateFieldOp>())
      if (f.getPlane() && *f.getPlane() == name) {
        fieldNames.push_back(f.getName().str());
        arenaBytes = std::max<int64_t>(arenaBytes, int64_t(*f.getEnd()));
      }
    int64_t planeSlack = slot && slot.getPlaneSlackBytes()
                             ? (*slot.getPlaneSlackBytes())[p]
                             : arenaRows * w - arenaBytes;
    slack += planeSlack;
    std::string dtype;
    for (PlaneOp op : model.getBodyBlock().getOps<PlaneOp>())
      if (op.getName() == name)
        dtype = op.getDtype().str();
    planes.push_back(json::Object{
        {"name", name.str()},
        {"row_bytes", w},
        {"dtype", dtype},
        {"fields", std::move(fieldNames)},
        {"slack_bytes", planeSlack},
        {"block_bytes", int64_t(rs.getEnvelopeRows()) * w},
        {"slot_bytes", slotRows * w},
        {"plane_bytes", rs.getPlaneRows()
                            ? json::Value(int64_t(*rs.getPlaneRows()) * w)
                            : json::Value(nullptr)},
        {"offset", rs.getPlaneOffsets()
                       ? json::Value((*rs.getPlaneOffsets())[p])
                       : json::Value(nullptr)},
        {"image_ranges",
         runs(cast<DenseI64ArrayAttr>(rs.getImageRanges()[p]).asArrayRef())},
        {"wide_offsets", contains(rs.getWideOffsetPlanes(), int64_t(p))},
        {"needs_rebase", contains(rs.getRebasePlanes(), int64_t(p))},
    });
  }

  json::Array classes;
  for (Attribute a : rs.getClasses()) {
    auto c = cast<RowClassAttr>(a);
    json::Array layers;
    for (int64_t l : c.getLayers())
      layers.push_back(l);
    classes.push_back(json::Object{
        {"ratio", c.getRatio()},
        {"name", className(c.getRatio())},
        {"layers", std::move(layers)},
        {"block_rows", c.getBlockRows()},
        {"ring_stride", c.getRingStride()},
        {"envelope_offset", c.getEnvelopeOffset()},
        {"envelope_rows", c.getEnvelopeRows()},
        {"entry_offset", c.getEntryOffset()},
        {"entry_rows", c.getEntryRows()},
        {"window", windowJson(c.getRingStart(), slotRows,
                              int64_t(rs.getRingSlots()), c.getRingStride(),
                              c.getRunRows())},
    });
  }

  json::Array fieldWindows;
  for (StateFieldOp f : model.getBodyBlock().getOps<StateFieldOp>()) {
    if (!f.getRowsPerWindowRow())
      continue;
    int64_t k = int64_t(*f.getRowsPerWindowRow());
    int64_t w = 0;
    for (PlaneOp op : model.getBodyBlock().getOps<PlaneOp>())
      if (op.getName() == *f.getPlane())
        w = int64_t(op.getRowBytes());
    int64_t offsetRows = int64_t(*f.getOffset()) / w;
    int64_t ring = int64_t(rs.getRingSlots());
    fieldWindows.push_back(json::Object{
        {"field", f.getName().str()},
        {"plane", f.getPlane()->str()},
        {"rows_per_window_row", k},
        {"offset_rows", offsetRows},
        {"layer_stride_rows", ring},
        {"window", windowJson(offsetRows / k, slotRows / k, ring, ring, ring)},
    });
  }

  int64_t image = int64_t(rs.getImageBytes());
  int64_t pageBytes = page && page.getEntryBytes() ? int64_t(*page.getEntryBytes()) : 0;
  json::Object out{
      {"page_class", rs.getPageClass().str()},
      {"slot_class", rs.getSlotClass().str()},
      {"block_size", int64_t(rs.getBlockSize())},
      {"ring_slots", int64_t(rs.getRingSlots())},
      {"layer_ratios", [&] {
         json::Array r;
         for (int64_t x : rs.getRatios())
           r.push_back(x);
         return r;
       }()},
      {"arena_rows", arenaRows},
      {"slot_align_rows", int64_t(rs.getSlotAlignRows())},
      {"envelope_rows", int64_t(rs.getEnvelopeRows())},
      {"entry_rows", int64_t(rs.getEntryRows())},
      {"slot_rows", slotRows},
      {"row_bytes", sumW},
      {"planes", std::move(planes)},
      {"plane_slack_bytes", slack},
      {"plane_slack_fraction",
       arenaRows > 0 ? double(slack) / double(arenaRows * sumW) : 0.0},
      {"classes", std::move(classes)},
      {"entry_row_runs", runs(rs.getEntryRowRuns())},
      {"field_windows", std::move(fieldWindows)},
      {"image_bytes", image},
      {"units_per_checkpoint",
       pageBytes > 0 ? json::Value((image + pageBytes - 1) / pageBytes)
                     : json::Value(nullptr)},
      {"num_blocks", opt(rs.getNumBlocks())},
      {"num_slots", opt(rs.getNumSlots())},
      {"plane_rows", opt(rs.getPlaneRows())},
      {"slot_positions", opt(rs.getSlotPositions())},
      {"max_row", opt(rs.getMaxRow())},
  };
  return out;
}

json::Value mlir::pool::buildReport(ModuleOp module, const ReportInputs &inputs,
                                    std::string &error) {
  auto models = module.getOps<ModelOp>();
  if (models.empty()) {
    error = "no pool.model in the module";
    return nullptr;
  }
  ModelOp model = *models.begin();
  if (!model.getTotalReservedBytes()) {
    error = "the model is not planned (run pool-plan-pools first)";
    return nullptr;
  }
  int64_t budget = int64_t(*model.getBudget());
  int64_t total = int64_t(*model.getTotalReservedBytes());

  json::Array planes;
  int64_t numLayers = 0;
  json::Array ratios;
  json::Array classes, arenas;
  json::Value pagedClass = nullptr;
  int64_t pagedEntries = 0;
  for (Operation &op : model.getBodyBlock()) {
    if (auto p = dyn_cast<PlaneOp>(op))
      planes.push_back(json::Object{{"name", p.getName().str()},
                                    {"row_bytes", int64_t(p.getRowBytes())},
                                    {"dtype", p.getDtype().str()}});
    else if (auto l = dyn_cast<LayersOp>(op)) {
      numLayers = int64_t(l.getRatios().size());
      for (int64_t r : l.getRatios())
        ratios.push_back(r);
    }
  }
  for (EntryClassOp c : model.getBodyBlock().getOps<EntryClassOp>()) {
    if (!c.getEntries() || !c.getEntryBytes()) {
      error = "entry class '" + c.getName().str() + "' is not planned";
      return nullptr;
    }
    json::Value transfer = nullptr;
    if (auto t = c.getTransferAttr()) {
      json::Object o{{"kind", t.getKind().str()}};
      if (t.getKind() == "fork")
        o["tokens"] = t.getTokens();
      if (t.getKind() == "copy")
        o["layout_id"] = t.getLayoutId().str();
      transfer = std::move(o);
    }
    json::Object cls{
        {"name", c.getName().str()},
        {"pool", c.getPool().str()},
        {"entries", int64_t(*c.getEntries())},
        {"entry_bytes", int64_t(*c.getEntryBytes())},
        {"reserved_bytes", int64_t(*c.getReservedBytes())},
        {"entries_per_req", int64_t(c.getEntriesPerReq())},
        {"extra_entries", int64_t(c.getExtraEntries())},
        {"bytes_source", c.getDerived() ? (c.getBytes() ? "declared+derived"
                                                        : "derived")
                                        : "declared"},
        {"transfer", std::move(transfer)},
        {"region_offset", c.getRegionOffset()
                              ? json::Value(int64_t(*c.getRegionOffset()))
                              : json::Value(nullptr)},
        {"needs_rebase", c.getNeedsRebase()},
    };
    if (c.isPage()) {
      pagedClass = c.getName();
      pagedEntries = int64_t(*c.getEntries());
    }
    classes.push_back(std::move(cls));

    if (!c.getArenaBytes())
      continue;
    json::Array fields, ranges;
    int64_t carried = 0;
    for (StateFieldOp f : model.getBodyBlock().getOps<StateFieldOp>()) {
      if (f.getEntryClass() != c.getName())
        continue;
      json::Array shape;
      for (int64_t d : f.getShape())
        shape.push_back(d);
      fields.push_back(json::Object{
          {"name", f.getName().str()},
          {"plane", f.getPlane() ? json::Value(f.getPlane()->str())
                                 : json::Value(nullptr)},
          {"offset", int64_t(*f.getOffset())},
          {"end", int64_t(*f.getEnd())},
          {"bytes", int64_t(*f.getEnd()) - int64_t(*f.getOffset())},
          {"layers", int64_t(f.getLayers())},
          {"shape", std::move(shape)},
          {"dtype", f.getDtype().str()},
          {"fill", fillValue(f.getFill().convertToDouble())},
          {"align", int64_t(f.getAlign())},
          {"in_checkpoint", f.getInCheckpoint()},
          {"window", f.getWindow()},
      });
    }
    auto addRanges = [&](ArrayRef<int64_t> flat, json::Array &out) {
      for (size_t i = 0; i + 1 < flat.size(); i += 2) {
        out.push_back(json::Array{flat[i], flat[i + 1]});
        carried += flat[i + 1];
      }
    };
    json::Value stride = nullptr;
    if (auto flat = c.getCheckpointRanges()) {
      addRanges(*flat, ranges);
      stride = int64_t(*c.getEntryBytes());
    } else if (ArrayAttr perPlane = c.getPlaneCheckpointRangesAttr()) {
      // In a row space: one list per plane, offsets within the slot.
      for (Attribute a : perPlane) {
        json::Array planeRanges;
        addRanges(cast<DenseI64ArrayAttr>(a).asArrayRef(), planeRanges);
        ranges.push_back(std::move(planeRanges));
      }
    }
    arenas.push_back(json::Object{
        {"class", c.getName().str()},
        {"entry_bytes", int64_t(*c.getArenaBytes())},
        {"slot_stride", std::move(stride)},
        {"fields", std::move(fields)},
        {"checkpoint_ranges", std::move(ranges)},
        {"checkpoint_bytes", carried},
    });
  }

  json::Value rowSpace = nullptr;
  for (RowSpaceOp rs : model.getBodyBlock().getOps<RowSpaceOp>())
    rowSpace = rowSpaceReport(model, rs);

  json::Object params;
  for (const auto &[k, v] : inputs.params)
    params[k] = v;
  return json::Object{
      {"schema", "poolc-report/1"},
      {"model", model.getName().str()},
      {"source", inputs.source},
      {"inputs",
       json::Object{{"budget_bytes", budget},
                    {"max_num_seqs", int64_t(*model.getMaxNumSeqs())},
                    {"pp_min_blocks", inputs.ppMinBlocks >= 0
                                          ? json::Value(inputs.ppMinBlocks)
                                          : json::Value(nullptr)},
                    {"params", std::move(params)}}},
      {"geometry",
       json::Object{{"block_size", int64_t(model.getBlockSize())},
                    {"hash_block_size", int64_t(model.getHashBlockSize())},
                    {"sliding_window", int64_t(model.getSlidingWindow())},
                    {"spec_depth", int64_t(model.getSpecDepth())},
                    {"num_layers", numLayers},
                    {"layer_ratios", std::move(ratios)},
                    {"planes", std::move(planes)}}},
      {"entry_classes", std::move(classes)},
      {"arenas", std::move(arenas)},
      {"paged_class", std::move(pagedClass)},
      {"paged_entries", pagedEntries},
      {"total_reserved_bytes", total},
      {"unreserved_bytes", budget - total},
      {"allocation_bytes", int64_t(*model.getAllocationBytes())},
      {"allocation_over_budget_bytes",
       std::max<int64_t>(0, int64_t(*model.getAllocationBytes()) - budget)},
      {"row_space", std::move(rowSpace)},
  };
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

void mlir::pool::printTextReport(const json::Value &report,
                                 llvm::raw_ostream &os) {
  const json::Object &r = *report.getAsObject();
  const json::Object &in = *r.getObject("inputs");
  int64_t budget = *in.getInteger("budget_bytes");
  os << "model " << *r.getString("model") << "  (" << *r.getString("source")
     << ")\n";
  os << "budget " << withCommas(budget) << " B (" << asGiB(budget) << "), "
     << *in.getInteger("max_num_seqs") << " sequences\n\n";
  os << llvm::format("%-12s %-6s %12s %14s %20s %8s %16s\n", "class", "pool",
                     "entries", "entry bytes", "reserved bytes", "per req",
                     "region offset");
  for (const json::Value &v : *r.getArray("entry_classes")) {
    const json::Object &c = *v.getAsObject();
    os << llvm::format("%-12s %-6s %12s %14s %20s %8lld %16s\n",
                       c.getString("name")->str().c_str(),
                       c.getString("pool")->str().c_str(),
                       withCommas(*c.getInteger("entries")).c_str(),
                       withCommas(*c.getInteger("entry_bytes")).c_str(),
                       withCommas(*c.getInteger("reserved_bytes")).c_str(),
                       (long long)*c.getInteger("entries_per_req"),
                       c.getInteger("region_offset")
                           ? withCommas(*c.getInteger("region_offset")).c_str()
                           : "in planes");
  }
  int64_t total = *r.getInteger("total_reserved_bytes");
  os << "\ntotal reserved " << withCommas(total) << " B (" << asGiB(total)
     << "), unreserved " << withCommas(*r.getInteger("unreserved_bytes"))
     << " B, one allocation of "
     << withCommas(*r.getInteger("allocation_bytes")) << " B\n";
  if (int64_t over = r.getInteger("allocation_over_budget_bytes").value_or(0))
    os << "the allocation passes the budget by " << withCommas(over)
       << " B (region alignment; a row space rounds its blocks up to whole "
          "slots, as the reference does): --fit-allocation gives up blocks "
          "instead\n";
  const json::Object &geo = *r.getObject("geometry");
  int64_t bs = *geo.getInteger("block_size");
  int64_t paged = *r.getInteger("paged_entries");
  os << "paged history: " << withCommas(paged) << " blocks x " << bs
     << " tokens = " << withCommas(paged * bs) << " tokens\n";
  for (const json::Value &v : *r.getArray("arenas")) {
    const json::Object &a = *v.getAsObject();
    os << "\narena of '" << *a.getString("class") << "': entry "
       << withCommas(*a.getInteger("entry_bytes")) << " B, checkpoint carries "
       << withCommas(*a.getInteger("checkpoint_bytes")) << " B\n";
    os << llvm::format("  %-18s %-6s %14s %14s %6s %-8s %s\n", "field",
                       "plane", "offset", "end", "layers", "dtype", "ckpt");
    for (const json::Value &fv : *a.getArray("fields")) {
      const json::Object &f = *fv.getAsObject();
      auto plane = f.getString("plane");
      os << llvm::format("  %-18s %-6s %14s %14s %6lld %-8s %s\n",
                         f.getString("name")->str().c_str(),
                         plane ? plane->str().c_str() : "-",
                         withCommas(*f.getInteger("offset")).c_str(),
                         withCommas(*f.getInteger("end")).c_str(),
                         (long long)*f.getInteger("layers"),
                         f.getString("dtype")->str().c_str(),
                         *f.getBoolean("in_checkpoint") ? "yes" : "no");
    }
  }
}
