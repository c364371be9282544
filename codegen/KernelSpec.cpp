//===- KernelSpec.cpp - Derive the kernels of a solved layout -------------===//
//
// Every offset below is read from the solved module (the row_space op, the
// planned classes): the kernels move exactly the bytes the layout says.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelSpec.h"
#include "dialects/Pool/IR/PoolOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::pool;
namespace json = llvm::json;

namespace {

int64_t i64(std::optional<uint64_t> v) { return v ? int64_t(*v) : 0; }

/// The widest access (16, 8, 4, 2 or 1 bytes) every address and length of
/// the kernel is a multiple of: the kernel assumes no more than the layout
/// proves (the arena and staging bases are 256-aligned allocations).
unsigned widestAccess(const KernelSpec &k) {
  int64_t g = 16;
  auto fold = [&](int64_t v) { g = std::gcd(g, v < 0 ? -v : v); };
  for (const CopySegment &s : k.segments) {
    fold(s.srcOff);
    fold(s.srcStride);
    fold(s.dstOff);
    fold(s.dstStride);
    fold(s.bytes);
  }
  fold(k.stagingStride);
  unsigned v = 16;
  while (v > 1 && g % v != 0)
    v /= 2;
  return v;
}

KernelSpec finish(KernelSpec k) {
  k.itemBytes = 0;
  for (const CopySegment &s : k.segments)
    k.itemBytes += s.bytes;
  k.vecBytes = widestAccess(k);
  return k;
}

/// The reverse direction of a gather: staging -> arena.
KernelSpec scatterOf(const KernelSpec &gather, StringRef name, StringRef kind) {
  KernelSpec s = gather;
  s.name = name.str();
  s.kind = kind.str();
  std::swap(s.src, s.dst);
  std::swap(s.srcId, s.dstId);
  for (CopySegment &seg : s.segments) {
    std::swap(seg.srcOff, seg.dstOff);
    std::swap(seg.srcStride, seg.dstStride);
  }
  return s;
}

/// Block relocation (a moving boundary retires a held top block): (source,
/// destination) pairs, arena to arena, the same segments as the gather with
/// the staging side replaced by the destination block.
KernelSpec blockCopyOf(const KernelSpec &gather, StringRef name) {
  KernelSpec c = gather;
  c.name = name.str();
  c.kind = "block_copy";
  c.src = c.dst = Space::Arena;
  c.srcId = IdSource::PairFirst;
  c.dstId = IdSource::PairSecond;
  c.stagingStride = 0;
  for (CopySegment &seg : c.segments) {
    seg.dstOff = seg.srcOff;
    seg.dstStride = seg.srcStride;
  }
  return c;
}

void rowSpaceKernels(ModelOp model, RowSpaceOp rs,
                     std::vector<KernelSpec> &out) {
  int64_t slotRows = int64_t(rs.getSlotRows());
  int64_t env = int64_t(rs.getEnvelopeRows());
  int64_t planeRows = i64(rs.getPlaneRows());
  int64_t positions = i64(rs.getSlotPositions());
  int64_t origin = positions - planeRows / slotRows;
  ArrayRef<int64_t> widths = rs.getPlaneWidths();
  ArrayRef<int64_t> offsets = *rs.getPlaneOffsets();
  bool rebase = rs.getRebasePlanes() && !rs.getRebasePlanes()->empty();
  auto planeName = [&](size_t p) {
    return cast<StringAttr>(rs.getPlaneNames()[p]).getValue().str();
  };

  // Slot copy: whole slot spans (state + windows) in every plane.
  KernelSpec copy;
  copy.name = "pool_slot_copy";
  copy.kind = "slot_copy";
  copy.entity = "slot";
  copy.maxId = positions;
  copy.rebase = rebase;
  for (size_t p = 0; p < widths.size(); ++p) {
    int64_t slotBytes = slotRows * widths[p];
    int64_t base = offsets[p] - origin * slotBytes;
    copy.segments.push_back({base, slotBytes, base, slotBytes, slotBytes,
                             "plane " + planeName(p) + " slot"});
  }
  out.push_back(finish(copy));

  // Checkpoint image: the carried fields and the window rows some position
  // reaches, per plane, packed back to back in staging.
  KernelSpec image;
  image.name = "pool_image_gather";
  image.kind = "image_gather";
  image.entity = "slot";
  image.srcId = IdSource::List;
  image.dst = Space::Staging;
  image.dstId = IdSource::ItemIndex;
  image.maxId = positions;
  image.rebase = rebase;
  image.stagingStride = int64_t(rs.getImageBytes());
  int64_t cum = 0;
  for (size_t p = 0; p < widths.size(); ++p) {
    int64_t slotBytes = slotRows * widths[p];
    int64_t base = offsets[p] - origin * slotBytes;
    ArrayRef<int64_t> flat =
        cast<DenseI64ArrayAttr>(rs.getImageRanges()[p]).asArrayRef();
    for (size_t i = 0; i + 1 < flat.size(); i += 2) {
      image.segments.push_back({base + flat[i], slotBytes, cum,
                                image.stagingStride, flat[i + 1],
                                "plane " + planeName(p) + " image run"});
      cum += flat[i + 1];
    }
  }
  out.push_back(finish(image));
  out.push_back(finish(scatterOf(out.back(), "pool_image_scatter",
                                 "image_scatter")));

  // Block gather: a block's envelope in every plane, plus what rides the
  // block table with explicit bytes (an indexer region).
  EntryClassOp page;
  for (EntryClassOp c : model.getBodyBlock().getOps<EntryClassOp>())
    if (c.getName() == rs.getPageClass())
      page = c;
  KernelSpec blocks;
  blocks.name = "pool_block_gather";
  blocks.kind = "block_gather";
  blocks.entity = "block";
  blocks.srcId = IdSource::List;
  blocks.dst = Space::Staging;
  blocks.dstId = IdSource::ItemIndex;
  blocks.maxId = i64(rs.getNumBlocks());
  blocks.rebase = rebase;
  blocks.stagingStride = i64(page.getEntryBytes());
  cum = 0;
  for (size_t p = 0; p < widths.size(); ++p) {
    int64_t blockBytes = env * widths[p];
    blocks.segments.push_back({offsets[p], blockBytes, cum,
                               blocks.stagingStride, blockBytes,
                               "plane " + planeName(p) + " envelope"});
    cum += blockBytes;
  }
  if (page.getRegionOffset() && page.getBytes()) {
    int64_t extra = int64_t(*page.getBytes());
    blocks.segments.push_back({int64_t(*page.getRegionOffset()), extra, cum,
                               blocks.stagingStride, extra,
                               "block-table riders (" + page.getName().str() +
                                   " explicit bytes)"});
  }
  out.push_back(finish(blocks));
  out.push_back(finish(scatterOf(out.back(), "pool_block_scatter",
                                 "block_scatter")));
  out.push_back(finish(blockCopyOf(out[out.size() - 2], "pool_block_copy")));
}

void arenaKernels(ModelOp model, RowSpaceOp rs, std::vector<KernelSpec> &out) {
  for (EntryClassOp c : model.getBodyBlock().getOps<EntryClassOp>()) {
    if (!c.getRegionOffset() || !c.getEntries())
      continue;
    // The row space's classes live in the planes: their kernels are the
    // row-space ones (the PAGE class's region holds only its riders).
    if (rs && (c.getName() == rs.getPageClass() ||
               c.getName() == rs.getSlotClass()))
      continue;
    int64_t region = int64_t(*c.getRegionOffset());
    int64_t entryBytes = i64(c.getEntryBytes());
    int64_t entries = i64(c.getEntries());
    std::string suffix = "_" + c.getName().str();
    bool rebase = c.getNeedsRebase();
    if (c.isPage()) {
      KernelSpec blocks;
      blocks.name = "pool_block_gather" + suffix;
      blocks.kind = "block_gather";
      blocks.entity = "block";
      blocks.srcId = IdSource::List;
      blocks.dst = Space::Staging;
      blocks.dstId = IdSource::ItemIndex;
      blocks.maxId = entries;
      blocks.rebase = rebase;
      blocks.stagingStride = entryBytes;
      blocks.segments.push_back(
          {region, entryBytes, 0, entryBytes, entryBytes, "block"});
      out.push_back(finish(blocks));
      out.push_back(finish(scatterOf(out.back(),
                                     "pool_block_scatter" + suffix,
                                     "block_scatter")));
      out.push_back(finish(
          blockCopyOf(out[out.size() - 2], "pool_block_copy" + suffix)));
      continue;
    }
    // A group is entries_per_req consecutive entries (GDN: 1 + num_spec
    // slots); entry-major, so a group is one contiguous span.
    int64_t perReq = std::max<int64_t>(1, int64_t(c.getEntriesPerReq()));
    KernelSpec group;
    group.name = "pool_group_copy" + suffix;
    group.kind = "group_copy";
    group.entity = "group";
    group.maxId = entries / perReq;
    group.rebase = rebase;
    group.segments.push_back({region, perReq * entryBytes, region,
                              perReq * entryBytes, perReq * entryBytes,
                              "group"});
    out.push_back(finish(group));
    if (!c.getCheckpointRanges())
      continue;
    KernelSpec image;
    image.name = "pool_image_gather" + suffix;
    image.kind = "image_gather";
    image.entity = "entry";
    image.srcId = IdSource::List;
    image.dst = Space::Staging;
    image.dstId = IdSource::ItemIndex;
    image.maxId = entries;
    image.rebase = rebase;
    ArrayRef<int64_t> flat = *c.getCheckpointRanges();
    int64_t cum = 0;
    for (size_t i = 0; i + 1 < flat.size(); i += 2)
      cum += flat[i + 1];
    image.stagingStride = cum;
    cum = 0;
    for (size_t i = 0; i + 1 < flat.size(); i += 2) {
      image.segments.push_back({region + flat[i], entryBytes, cum,
                                image.stagingStride, flat[i + 1],
                                "checkpoint range"});
      cum += flat[i + 1];
    }
    if (image.segments.empty())
      continue; // nothing carried: no image
    out.push_back(finish(image));
    out.push_back(finish(scatterOf(out.back(),
                                   "pool_image_scatter" + suffix,
                                   "image_scatter")));
  }
}

const char *spaceName(Space s) { return s == Space::Arena ? "arena" : "staging"; }
const char *idName(IdSource s) {
  switch (s) {
  case IdSource::PairFirst:
    return "ids[2*i]";
  case IdSource::PairSecond:
    return "ids[2*i+1]";
  case IdSource::List:
    return "ids[i]";
  case IdSource::ItemIndex:
    return "i";
  }
  return "?";
}

} // namespace

std::vector<KernelSpec> mlir::pool::deriveKernelSpecs(ModuleOp module) {
  std::vector<KernelSpec> out;
  for (ModelOp model : module.getOps<ModelOp>()) {
    RowSpaceOp rs;
    for (RowSpaceOp r : model.getBodyBlock().getOps<RowSpaceOp>())
      rs = r;
    if (rs && rs.getPlaneRows())
      rowSpaceKernels(model, rs, out);
    arenaKernels(model, rs, out);
    break; // one model per module
  }
  return out;
}

json::Value mlir::pool::kernelManifest(const KernelSpec &k) {
  json::Array segments;
  for (const CopySegment &s : k.segments)
    segments.push_back(json::Object{{"src_off", s.srcOff},
                                    {"src_stride", s.srcStride},
                                    {"dst_off", s.dstOff},
                                    {"dst_stride", s.dstStride},
                                    {"bytes", s.bytes},
                                    {"what", s.what}});
  return json::Object{
      {"name", k.name},
      {"kind", k.kind},
      {"entity", k.entity},
      {"args",
       json::Array{json::Object{{"name", "arena"}, {"type", "ptr"}},
                   json::Object{{"name", "staging"}, {"type", "ptr"}},
                   json::Object{{"name", "ids"}, {"type", "ptr<i32>"}},
                   json::Object{{"name", "num_items"}, {"type", "i64"}},
                   json::Object{{"name", "grid_x"}, {"type", "i64"}}}},
      {"launch",
       json::Object{{"block", json::Array{kBlockThreads, 1, 1}},
                    {"grid", json::Array{"grid_x", "num_items", 1}},
                    {"host_args", "arena, staging, ids, num_items"}}},
      {"ids_per_item", k.pairs() ? 2 : (k.srcId == IdSource::List ||
                                        k.dstId == IdSource::List)
                                           ? 1
                                           : 0},
      {"id_range", json::Array{0, k.maxId}},
      {"src", json::Object{{"space", spaceName(k.src)}, {"id", idName(k.srcId)}}},
      {"dst", json::Object{{"space", spaceName(k.dst)}, {"id", idName(k.dstId)}}},
      {"item_bytes", k.itemBytes},
      {"staging_stride", k.stagingStride},
      {"vec_bytes", int64_t(k.vecBytes)},
      {"rebase", k.rebase},
      {"segments", std::move(segments)},
  };
}
