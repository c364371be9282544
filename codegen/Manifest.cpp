//===- Manifest.cpp - The report and manifest JSON of a SolvedLayout ------===//
//
// The one place that writes report and manifest keys. llvm::json sorts the
// keys of an object when it prints, so the order here carries no meaning.
// Every string is copied into the JSON value (llvm::json::Value does not
// own a StringRef).
//
//===----------------------------------------------------------------------===//

#include "codegen/Manifest.h"
#include "codegen/KernelSpec.h"
#include "codegen/Report.h"

#include <cmath>

using namespace mlir::pool;
namespace json = llvm::json;
using namespace poolrt;

namespace {

json::Value fillValue(double v) {
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  return v;
}

template <typename T> json::Value orNull(const std::optional<T> &v) {
  return v ? json::Value(*v) : json::Value(nullptr);
}

json::Array ints(const std::vector<int64_t> &v) {
  json::Array out;
  for (int64_t x : v)
    out.push_back(x);
  return out;
}

json::Array strings(const std::vector<std::string> &v) {
  json::Array out;
  for (const std::string &x : v)
    out.push_back(x);
  return out;
}

json::Array ranges(const std::vector<ByteRange> &v) {
  json::Array out;
  for (const ByteRange &r : v)
    out.push_back(json::Array{r.offset, r.length});
  return out;
}

json::Object windowJson(const SolvedWindow &w) {
  return json::Object{{"ring_start", w.ringStart},
                      {"slot_rows", w.slotRows},
                      {"ring_slots", w.ringSlots},
                      {"ring_stride", w.ringStride},
                      {"run_rows", w.runRows}};
}

json::Value transferJson(const std::optional<SolvedTransfer> &t) {
  if (!t)
    return nullptr;
  switch (t->kind) {
  case TransferKind::Fork:
    return json::Object{{"kind", "fork"}, {"tokens", t->tokens}};
  case TransferKind::Copy:
    return json::Object{{"kind", "copy"}, {"layout_id", t->layoutId}};
  case TransferKind::None:
    break;
  }
  return json::Object{{"kind", "none"}};
}

json::Object classJson(const SolvedClass &c) {
  json::Object o{
      {"name", c.name},
      {"pool", c.isPage() ? "page" : "state"},
      {"entries", c.entries},
      {"entry_bytes", c.entryBytes},
      {"reserved_bytes", c.reservedBytes},
      {"entries_per_req", c.entriesPerReq},
      {"extra_entries", c.extraEntries},
      {"request_groups", c.requestGroups},
      {"bytes_source", c.bytesSource},
      {"transfer", transferJson(c.transfer)},
      {"region_offset", orNull(c.regionOffset)},
      {"needs_rebase", c.needsRebase},
  };
  // Window classes only: a model without them writes what it always did.
  if (const auto &a = c.attention)
    o["attention"] = json::Object{{"kind", attentionKindName(a->kind)},
                                  {"tokens", a->tokens},
                                  {"forward_tokens", a->forwardTokens},
                                  {"reserve_blocks", a->reserveBlocks},
                                  {"cache_percent", a->cachePercent},
                                  {"shares_blocks", a->sharesBlocks}};
  return o;
}

json::Object fieldJson(const SolvedField &f) {
  return json::Object{
      {"name", f.name},
      {"plane", orNull(f.plane)},
      {"offset", f.offset},
      {"end", f.end},
      {"bytes", f.bytes},
      {"layers", f.layers},
      {"shape", ints(f.shape)},
      {"dtype", f.dtype},
      {"fill", fillValue(f.fill)},
      {"align", f.align},
      {"in_checkpoint", f.inCheckpoint},
      {"window", f.window},
  };
}

json::Object arenaJson(const SolvedArena &a) {
  json::Array fields, checkpoint;
  for (const SolvedField &f : a.fields)
    fields.push_back(fieldJson(f));
  if (a.perPlane)
    for (const std::vector<ByteRange> &plane : a.planeCheckpointRanges)
      checkpoint.push_back(ranges(plane));
  else
    checkpoint = ranges(a.checkpointRanges);
  return json::Object{
      {"class", a.className},
      {"entry_bytes", a.entryBytes},
      {"slot_stride", orNull(a.slotStride)},
      {"fields", std::move(fields)},
      {"checkpoint_ranges", std::move(checkpoint)},
      {"checkpoint_bytes", a.checkpointBytes},
  };
}

json::Object rowPlaneJson(const SolvedRowPlane &p) {
  return json::Object{
      {"name", p.name},
      {"row_bytes", p.rowBytes},
      {"dtype", p.dtype},
      {"fields", strings(p.fields)},
      {"slack_bytes", p.slackBytes},
      {"block_bytes", p.blockBytes},
      {"slot_bytes", p.slotBytes},
      {"plane_bytes", orNull(p.planeBytes)},
      {"offset", orNull(p.offset)},
      {"image_ranges", ranges(p.imageRanges)},
      {"wide_offsets", p.wideOffsets},
      {"needs_rebase", p.needsRebase},
  };
}

json::Value rowSpaceJson(const std::optional<SolvedRowSpace> &maybe) {
  if (!maybe)
    return nullptr;
  const SolvedRowSpace &rs = *maybe;
  json::Array planes, classes, fieldWindows;
  for (const SolvedRowPlane &p : rs.planes)
    planes.push_back(rowPlaneJson(p));
  for (const SolvedRowClass &c : rs.classes)
    classes.push_back(json::Object{
        {"ratio", c.ratio},
        {"name", c.name},
        {"layers", ints(c.layers)},
        {"block_rows", c.blockRows},
        {"ring_stride", c.ringStride},
        {"envelope_offset", c.envelopeOffset},
        {"envelope_rows", c.envelopeRows},
        {"entry_offset", c.entryOffset},
        {"entry_rows", c.entryRows},
        {"window", windowJson(c.window)},
    });
  for (const SolvedFieldWindow &f : rs.fieldWindows)
    fieldWindows.push_back(json::Object{
        {"field", f.field},
        {"plane", f.plane},
        {"rows_per_window_row", f.rowsPerWindowRow},
        {"offset_rows", f.offsetRows},
        {"layer_stride_rows", f.layerStrideRows},
        {"window", windowJson(f.window)},
    });
  return json::Object{
      {"page_class", rs.pageClass},
      {"slot_class", rs.slotClass},
      {"block_size", rs.blockSize},
      {"ring_slots", rs.ringSlots},
      {"layer_ratios", ints(rs.layerRatios)},
      {"arena_rows", rs.arenaRows},
      {"slot_align_rows", rs.slotAlignRows},
      {"envelope_rows", rs.envelopeRows},
      {"entry_rows", rs.entryRows},
      {"slot_rows", rs.slotRows},
      {"row_bytes", rs.rowBytes},
      {"planes", std::move(planes)},
      {"plane_slack_bytes", rs.planeSlackBytes},
      {"plane_slack_fraction", rs.planeSlackFraction},
      {"classes", std::move(classes)},
      {"entry_row_runs", ranges(rs.entryRowRuns)},
      {"field_windows", std::move(fieldWindows)},
      {"image_bytes", rs.imageBytes},
      {"units_per_checkpoint", orNull(rs.unitsPerCheckpoint)},
      {"num_blocks", orNull(rs.numBlocks)},
      {"num_slots", orNull(rs.numSlots)},
      {"plane_rows", orNull(rs.planeRows)},
      {"slot_positions", orNull(rs.slotPositions)},
      {"max_row", orNull(rs.maxRow)},
  };
}

const char *accessName(const KernelIdSlot &slot) {
  return slot.read && slot.written ? "read-write"
         : slot.written            ? "write"
                                   : "read";
}

} // namespace

json::Value mlir::pool::reportJson(const SolvedLayout &L) {
  json::Array planes, classes, arenas;
  for (const SolvedPlaneDecl &p : L.geometry.planes)
    planes.push_back(json::Object{
        {"name", p.name}, {"row_bytes", p.rowBytes}, {"dtype", p.dtype}});
  for (const SolvedClass &c : L.classes)
    classes.push_back(classJson(c));
  for (const SolvedArena &a : L.arenas)
    arenas.push_back(arenaJson(a));
  json::Object params;
  for (const auto &[k, v] : L.inputs.params)
    params[k] = v;
  for (const auto &[k, v] : L.inputs.dtypeParams)
    params[k] = v;
  return json::Object{
      {"schema", kReportSchema},
      {"model", L.model},
      {"source", L.source},
      {"inputs", json::Object{{"budget_bytes", L.inputs.budgetBytes},
                              {"max_num_seqs", L.inputs.maxNumSeqs},
                              {"pp_min_blocks", orNull(L.inputs.ppMinBlocks)},
                              {"params", std::move(params)}}},
      {"geometry",
       json::Object{{"block_size", L.geometry.blockSize},
                    {"hash_block_size", L.geometry.hashBlockSize},
                    {"sliding_window", L.geometry.slidingWindow},
                    {"spec_depth", L.geometry.specDepth},
                    {"num_layers", L.geometry.numLayers},
                    {"layer_ratios", ints(L.geometry.layerRatios)},
                    {"planes", std::move(planes)}}},
      {"entry_classes", std::move(classes)},
      {"arenas", std::move(arenas)},
      {"paged_class", orNull(L.pagedClass)},
      {"paged_entries", L.pagedEntries},
      {"total_reserved_bytes", L.totalReservedBytes},
      {"unreserved_bytes", L.unreservedBytes},
      {"allocation_bytes", L.allocationBytes},
      {"allocation_over_budget_bytes", L.allocationOverBudgetBytes},
      {"row_space", rowSpaceJson(L.rowSpace)},
      {"layout_fingerprint", poolrt::layoutFingerprintText(L.layoutFingerprint)},
  };
}

json::Value mlir::pool::kernelJson(const KernelInfo &k) {
  json::Array segments;
  for (const KernelSegment &s : k.segments)
    segments.push_back(json::Object{{"src_off", s.srcOff},
                                    {"src_stride", s.srcStride},
                                    {"src_id", s.srcId},
                                    {"dst_off", s.dstOff},
                                    {"dst_stride", s.dstStride},
                                    {"dst_id", s.dstId},
                                    {"bytes", s.bytes},
                                    {"what", s.what}});
  json::Array tuple;
  for (const KernelIdSlot &slot : k.idTuple)
    tuple.push_back(json::Object{{"entity", slot.entity},
                                 {"id_range", json::Array{0, slot.idMax}},
                                 {"access", accessName(slot)}});
  auto space = [](bool staging) { return staging ? "staging" : "arena"; };
  return json::Object{
      {"name", k.name},
      {"kind", k.kind},
      {"entity", k.entity},
      {"args", json::Array{json::Object{{"name", "arena"}, {"type", "ptr"}},
                           json::Object{{"name", "staging"}, {"type", "ptr"}},
                           json::Object{{"name", "ids"}, {"type", "ptr<i32>"}},
                           json::Object{{"name", "num_items"}, {"type", "i64"}},
                           json::Object{{"name", "grid_x"}, {"type", "i64"}}}},
      {"launch", json::Object{{"block", json::Array{kBlockThreads, 1, 1}},
                              {"grid", json::Array{"grid_x", "num_items", 1}},
                              {"host_args", "arena, staging, ids, num_items"}}},
      {"ids_per_item", k.idsPerItem},
      {"id_range", json::Array{0, k.idMax}},
      {"id_tuple", std::move(tuple)},
      {"src", json::Object{{"space", space(k.srcIsStaging)},
                           {"id", k.srcIdName}}},
      {"dst", json::Object{{"space", space(k.dstIsStaging)},
                           {"id", k.dstIdName}}},
      {"item_bytes", k.itemBytes},
      {"staging_stride", k.stagingStride},
      {"vec_bytes", k.vecBytes},
      {"rebase", k.rebase},
      {"segments", std::move(segments)},
  };
}

json::Value mlir::pool::manifestJson(const SolvedLayout &L) {
  json::Array targets, kernels;
  for (const SolvedTarget &t : L.targets)
    targets.push_back(json::Object{{"target", t.target},
                                   {"section", t.section},
                                   {"format", t.format},
                                   {"bytes", t.bytes}});
  for (const KernelInfo &k : L.kernels)
    kernels.push_back(kernelJson(k));
  return json::Object{
      {"format", kManifestFormat},
      {"model", L.model},
      {"fingerprint", L.fingerprint},
      {"block_threads", L.blockThreads},
      {"targets", std::move(targets)},
      {"kernels", std::move(kernels)},
      {"header_section", L.headerSection},
      {"layout", reportJson(L)},
  };
}
