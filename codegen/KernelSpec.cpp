//===- KernelSpec.cpp - Derive the kernels of a solved layout -------------===//
//
// Every offset below is read from the solved module (the row_space op, the
// planned classes): the kernels move exactly the bytes the layout says.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelSpec.h"
#include "dialects/Pool/IR/PoolOps.h"

#include "poolrt/CheckpointStore.h"
#include "poolrt/Checked.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::pool;

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

/// The id tuple of a kernel whose sides each name one entry (or staging):
/// (source, destination) for pairs, the one entry for a gather or scatter.
std::vector<IdSlot> entryIdTuple(const KernelSpec &k) {
  if (k.pairs())
    return {{k.entity, k.maxId, true, false}, {k.entity, k.maxId, false, true}};
  if (k.srcId == IdSource::List || k.dstId == IdSource::List)
    return {{k.entity, k.maxId, k.srcId == IdSource::List,
             k.dstId == IdSource::List}};
  return {};
}

KernelSpec finish(KernelSpec k) {
  k.itemBytes = 0;
  for (const CopySegment &s : k.segments)
    k.itemBytes += s.bytes;
  k.vecBytes = widestAccess(k);
  if (k.srcId != IdSource::Tuple && k.dstId != IdSource::Tuple)
    k.idTuple = entryIdTuple(k);
  return k;
}

/// The reverse direction of a kernel: staging -> arena for a gather, units
/// -> slot for an image store.
KernelSpec scatterOf(const KernelSpec &gather, StringRef name, StringRef kind) {
  KernelSpec s = gather;
  s.name = name.str();
  s.kind = kind.str();
  std::swap(s.src, s.dst);
  std::swap(s.srcId, s.dstId);
  for (CopySegment &seg : s.segments) {
    std::swap(seg.srcOff, seg.dstOff);
    std::swap(seg.srcStride, seg.dstStride);
    std::swap(seg.srcIdIndex, seg.dstIdIndex);
  }
  for (IdSlot &slot : s.idTuple)
    std::swap(slot.read, slot.written);
  return s;
}

/// Store a slot's checkpoint image straight into its PAGE units (spec §9):
/// the image's runs (`image`'s segments, in image order) are cut against
/// the units' regions, unit-major: image byte b lands in unit
/// b / unit_bytes at offset b % unit_bytes of that unit's regions (`unit`'s
/// segments, in order: every plane's envelope, then the block-table riders).
/// Item i is (slot, unit_0, ..., unit_{n-1}); each segment names its unit's
/// tuple position. The cut is the one the staging path made at run time, so
/// units written by either path hold the same bytes.
KernelSpec imageStoreOf(const KernelSpec &image, const KernelSpec &unit,
                        int64_t numBlocks) {
  int64_t unitBytes = unit.itemBytes;
  int64_t units = poolrt::ceilDiv(image.itemBytes, unitBytes);
  KernelSpec k;
  k.name = "pool_image_store";
  k.kind = "image_store";
  k.entity = image.entity;
  k.srcId = k.dstId = IdSource::Tuple;
  k.maxId = image.maxId;
  k.rebase = image.rebase || unit.rebase;
  k.idTuple.push_back({image.entity, image.maxId, true, false});
  for (int64_t u = 0; u < units; ++u)
    k.idTuple.push_back({unit.entity, numBlocks, false, true});
  int64_t at = 0; // image byte where the current run starts
  for (const CopySegment &run : image.segments) {
    for (int64_t done = 0; done < run.bytes;) {
      int64_t b = at + done;
      int64_t u = b / unitBytes, inUnit = b % unitBytes;
      int64_t regionStart = 0;
      const CopySegment *region = &unit.segments.front();
      for (const CopySegment &r : unit.segments) {
        region = &r;
        if (inUnit < regionStart + r.bytes)
          break;
        regionStart += r.bytes;
      }
      int64_t inRegion = inUnit - regionStart;
      int64_t n = std::min(run.bytes - done, region->bytes - inRegion);
      CopySegment seg;
      seg.srcOff = run.srcOff + done;
      seg.srcStride = run.srcStride;
      seg.srcIdIndex = 0;
      seg.dstOff = region->srcOff + inRegion;
      seg.dstStride = region->srcStride;
      seg.dstIdIndex = int(1 + u);
      seg.bytes = n;
      seg.what =
          run.what + " -> unit " + std::to_string(u) + " " + region->what;
      k.segments.push_back(std::move(seg));
      done += n;
    }
    at += run.bytes;
  }
  return k;
}

/// A gather of `kind` ("image_gather", "block_gather"): item i reads the
/// entry ids[i] names and packs its segments into staging slot i.
KernelSpec gatherSpec(std::string name, StringRef kind, StringRef entity,
                      int64_t maxId, bool rebase, int64_t stagingStride) {
  KernelSpec k;
  k.name = std::move(name);
  k.kind = kind.str();
  k.entity = entity.str();
  k.srcId = IdSource::List;
  k.dst = Space::Staging;
  k.dstId = IdSource::ItemIndex;
  k.maxId = maxId;
  k.rebase = rebase;
  k.stagingStride = stagingStride;
  return k;
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
  KernelSpec image = gatherSpec("pool_image_gather", "image_gather", "slot",
                                positions, rebase, int64_t(rs.getImageBytes()));
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
  size_t imageGather = out.size() - 1;
  out.push_back(finish(scatterOf(out.back(), "pool_image_scatter",
                                 "image_scatter")));

  // Block gather: a block's envelope in every plane, plus what rides the
  // block table with explicit bytes (an indexer region).
  EntryClassOp page = model.findClass(rs.getPageClass());
  KernelSpec blocks =
      gatherSpec("pool_block_gather", "block_gather", "block",
                 i64(rs.getNumBlocks()), rebase, i64(page.getEntryBytes()));
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
  size_t blockGather = out.size() - 1;
  out.push_back(finish(scatterOf(out.back(), "pool_block_scatter",
                                 "block_scatter")));
  out.push_back(finish(blockCopyOf(out[out.size() - 2], "pool_block_copy")));

  // A copy-transfer model (DeepSeek-V4) keeps its checkpoint images in PAGE
  // units: store and restore move them between a slot and its units
  // directly. A unit is one PAGE entry, so the block's regions must cover
  // the entry exactly (they do by construction: the entry is the envelopes
  // plus the riders); were they not to, the unit-major cut would disagree
  // with the runtime's units_per_checkpoint, so no such kernel is made.
  EntryClassOp slot = model.findClass(rs.getSlotClass());
  const KernelSpec &unit = out[blockGather];
  if (slot && slot.getTransferAttr() &&
      slot.getTransferAttr().getKind() == "copy" && unit.itemBytes > 0 &&
      unit.itemBytes == unit.stagingStride) {
    out.push_back(
        finish(imageStoreOf(out[imageGather], unit, i64(rs.getNumBlocks()))));
    out.push_back(
        finish(scatterOf(out.back(), "pool_image_restore", "image_restore")));
  }
}

void arenaKernels(ModelOp model, RowSpaceOp rs, std::vector<KernelSpec> &out) {
  for (EntryClassOp c : model.getEntryClasses()) {
    if (!c.getRegionOffset() || !c.getEntries())
      continue;
    // The row space's classes live in the planes: their kernels are the
    // row-space ones (the PAGE class's region holds only its riders).
    if (rs && (c.getName() == rs.getPageClass() ||
               c.getName() == rs.getSlotClass()))
      continue;
    // Window classes (specs/window-classes.md) get no block kernels: their
    // ids are another space (or, shared, the full class's blocks, which the
    // full class's kernels already move). Offloading them is future work.
    if (c.isWindow())
      continue;
    int64_t region = int64_t(*c.getRegionOffset());
    int64_t entryBytes = i64(c.getEntryBytes());
    int64_t entries = i64(c.getEntries());
    std::string suffix = "_" + c.getName().str();
    bool rebase = c.getNeedsRebase();
    if (c.isPage()) {
      KernelSpec blocks =
          gatherSpec("pool_block_gather" + suffix, "block_gather", "block",
                     entries, rebase, entryBytes);
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
    KernelSpec image = gatherSpec("pool_image_gather" + suffix, "image_gather",
                                  "entry", entries, rebase, 0);
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

/// A flat model whose one STATE class forks one entry per request keeps its
/// checkpoints as images in PAGE units, as a copy class does
/// (specs/checkpoint-placement.md): they share the block pool's bytes and
/// its eviction instead of a state group each. The image is the class's
/// image_gather (its carried ranges), cut against the PAGE class's block,
/// which must be one region (a unit is one PAGE entry). Not with drafts
/// (entries_per_req > 1) or several STATE classes: those keep fork groups.
void forkImageKernels(ModelOp model, std::vector<KernelSpec> &out) {
  EntryClassOp state, page;
  int states = 0;
  bool windows = false;
  for (EntryClassOp c : model.getEntryClasses()) {
    windows |= c.isWindow();
    if (c.isPage()) {
      page = c;
    } else {
      state = c;
      ++states;
    }
  }
  if (!page || !page.getEntries() || states != 1 || !state.getTransferAttr())
    return;
  StringRef k = state.getTransferAttr().getKind();
  poolrt::TransferKind kind = k == "fork"   ? poolrt::TransferKind::Fork
                              : k == "copy" ? poolrt::TransferKind::Copy
                                            : poolrt::TransferKind::None;
  if (!poolrt::forkImagesInPageUnits(states, kind,
                                              int64_t(state.getEntriesPerReq()),
                                              bool(model.getRowSpace()), windows))
    return;
  const KernelSpec *image = nullptr, *unit = nullptr;
  for (const KernelSpec &k : out) {
    if (k.name == "pool_image_gather_" + state.getName().str())
      image = &k;
    if (k.name == "pool_block_gather_" + page.getName().str())
      unit = &k;
  }
  if (!image || !unit || unit->itemBytes <= 0 ||
      unit->itemBytes != unit->stagingStride || unit->segments.size() != 1)
    return;
  KernelSpec store = imageStoreOf(*image, *unit, i64(page.getEntries()));
  out.push_back(finish(store));
  out.push_back(finish(scatterOf(out.back(), "pool_image_restore", "image_restore")));
}

std::string idName(const KernelSpec &k, IdSource s) {
  switch (s) {
  case IdSource::PairFirst:
    return "ids[2*i]";
  case IdSource::PairSecond:
    return "ids[2*i+1]";
  case IdSource::List:
    return "ids[i]";
  case IdSource::ItemIndex:
    return "i";
  case IdSource::Tuple:
    return "ids[" + std::to_string(k.idsPerItem()) + "*i+k]";
  }
  return "?";
}

} // namespace

int mlir::pool::idIndex(const KernelSpec &k, const CopySegment &seg, bool src) {
  switch (src ? k.srcId : k.dstId) {
  case IdSource::PairFirst:
  case IdSource::List:
    return 0;
  case IdSource::PairSecond:
    return 1;
  case IdSource::ItemIndex:
    return -1;
  case IdSource::Tuple:
    return src ? seg.srcIdIndex : seg.dstIdIndex;
  }
  return -1;
}

FailureOr<std::vector<KernelSpec>>
mlir::pool::deriveKernelSpecs(ModelOp model) {
  if (failed(model.requirePlanned()))
    return failure();
  std::vector<KernelSpec> out;
  RowSpaceOp rs = model.getRowSpace();
  if (rs)
    rowSpaceKernels(model, rs, out);
  arenaKernels(model, rs, out);
  if (!rs)
    forkImageKernels(model, out);
  return out;
}

poolrt::KernelInfo mlir::pool::kernelInfo(const KernelSpec &k) {
  poolrt::KernelInfo info;
  info.name = k.name;
  info.kind = k.kind;
  info.entity = k.entity;
  info.idsPerItem = k.idsPerItem();
  info.idMax = k.maxId;
  for (const IdSlot &slot : k.idTuple)
    info.idTuple.push_back({slot.entity, slot.maxId, slot.read, slot.written});
  info.itemBytes = k.itemBytes;
  info.stagingStride = k.stagingStride;
  info.srcIsStaging = k.src == Space::Staging;
  info.dstIsStaging = k.dst == Space::Staging;
  info.srcIdName = idName(k, k.srcId);
  info.dstIdName = idName(k, k.dstId);
  info.vecBytes = int64_t(k.vecBytes);
  info.rebase = k.rebase;
  for (const CopySegment &s : k.segments)
    info.segments.push_back({s.srcOff, s.srcStride, s.dstOff, s.dstStride,
                             s.bytes, idIndex(k, s, true), idIndex(k, s, false),
                             s.what});
  return info;
}

void mlir::pool::KernelTuning::apply(std::vector<KernelSpec> &specs) const {
  for (KernelSpec &k : specs) {
    if (unroll)
      k.unroll = unroll;
    if (streaming >= 0)
      k.streaming = streaming != 0;
    if (segmentTable >= 0)
      k.segmentTable = segmentTable;
    if (minBlocks)
      k.minBlocksPerSM = minBlocks;
    if (tableWalk >= 0)
      k.tableWalk = tableWalk;
    if (tileVectors > 0)
      k.tileVectors = tileVectors;
    if (hostUnroll)
      k.hostUnroll = hostUnroll;
    if (hostThreads)
      k.hostThreads = hostThreads;
  }
}
