//===- CheckAddressing.cpp - Prove a planned layout addressable -----------===//
//
// Everything here is interval arithmetic on the solved numbers: the passes
// that produced them are trusted no more than hand-written IR is.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/RowSpace.h"

#include <algorithm>
#include <cstdint>

namespace mlir::pool {
#define GEN_PASS_DEF_CHECKADDRESSING
#include "passes/Passes.h.inc"

namespace {

constexpr int64_t kInt32Rows = int64_t(1) << 31;
constexpr int64_t kBufferReach = int64_t(1) << 32; // AMD buffer descriptor

struct Span {
  int64_t begin, end;
  std::string what;
};

/// Sorted by begin: each inside [lo, hi), none overlapping the next.
LogicalResult checkDisjoint(Operation *op, std::vector<Span> spans, int64_t lo,
                            int64_t hi, StringRef space,
                            llvm::Statistic &numProofs) {
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.begin < b.begin; });
  for (size_t i = 0; i < spans.size(); ++i) {
    ++numProofs;
    const Span &s = spans[i];
    if (s.begin < lo || s.end > hi || s.end < s.begin)
      return op->emitOpError("layout check failed: ")
             << s.what << " [" << s.begin << ", " << s.end << ") lies outside "
             << space << " [" << lo << ", " << hi << ")";
    if (i + 1 < spans.size() && spans[i + 1].begin < s.end)
      return op->emitOpError("layout check failed: ")
             << s.what << " [" << s.begin << ", " << s.end << ") overlaps "
             << spans[i + 1].what << " [" << spans[i + 1].begin << ", "
             << spans[i + 1].end << ") in " << space;
  }
  return success();
}

LogicalResult checkRowSpace(ModelOp model, RowSpaceOp rs,
                            llvm::Statistic &numProofs) {
  Builder b(model.getContext());
  if (!rs.getPlaneRows() || !rs.getNumBlocks() || !rs.getNumSlots() ||
      !rs.getSlotPositions())
    return rs.emitOpError("is not planned; run pool-plan-pools first");
  int64_t planeRows = int64_t(*rs.getPlaneRows());
  int64_t nb = int64_t(*rs.getNumBlocks()), ns = int64_t(*rs.getNumSlots());
  int64_t env = int64_t(rs.getEnvelopeRows());
  int64_t slotRows = int64_t(rs.getSlotRows());
  int64_t arenaRows = int64_t(rs.getArenaRows());
  int64_t entryRows = int64_t(rs.getEntryRows());
  int64_t ring = int64_t(rs.getRingSlots());
  int64_t positions = int64_t(*rs.getSlotPositions());
  if (slotRows < 1 || env < 0 || planeRows < 0 || ring < 1)
    return rs.emitOpError("layout check failed: non-positive row counts");
  int64_t held = planeRows / slotRows, origin = positions - held;

  // Every row a kernel computes is an int32 index.
  ++numProofs;
  if (planeRows > kInt32Rows)
    return rs.emitOpError("row index ")
           << planeRows - 1
           << " does not fit int32 (kernels index rows with int32): the plane "
              "holds "
           << planeRows << " rows; lower the budget or split the pool";
  rs.setMaxRowAttr(b.getI64IntegerAttr(planeRows - 1));

  // Blocks from row 0, slots from the top, nothing shared.
  if (origin < 0 || ns > held)
    return rs.emitOpError("layout check failed: ")
           << ns << " slots in a plane that holds " << held;
  int64_t __attribute__((unused)) blockEnd = 0;
  if (__builtin_mul_overflow(nb, env, &blockEnd))
    return rs.emitOpError("layout check failed: block rows overflow");
  int64_t lowestSlot = (positions - ns - origin) * slotRows;
  std::vector<Span> plane{{0, blockEnd, "the blocks"},
                          {lowestSlot, (positions - origin) * slotRows,
                           "the slots"}};
  if (failed(checkDisjoint(rs, plane, 0, planeRows, "the plane", numProofs)))
    return failure();

  // Classes inside the envelope and the entry, disjoint.
  std::vector<Span> envelope, entry;
  for (Attribute a : rs.getClasses()) {
    auto c = cast<RowClassAttr>(a);
    int64_t L = int64_t(c.getLayers().size());
    std::string name = "class " + std::to_string(c.getRatio());
    envelope.push_back({c.getEnvelopeOffset(),
                        c.getEnvelopeOffset() + L * c.getBlockRows(), name});
    ++numProofs;
    if (c.getEnvelopeRows() != L * c.getBlockRows() ||
        c.getEntryRows() < poolrt::entryRowsFor(L, c.getRingStride(), ring))
      return rs.emitOpError("layout check failed: ")
             << name << " reserves fewer rows than its layers reach";
    entry.push_back({c.getEntryOffset(), c.getEntryOffset() + c.getEntryRows(),
                     name + " windows"});
  }
  if (failed(checkDisjoint(rs, envelope, 0, env, "the envelope", numProofs)) ||
      failed(checkDisjoint(rs, entry, 0, entryRows, "the entry", numProofs)))
    return failure();
  std::vector<Span> slot{{0, arenaRows, "the state arena"},
                         {arenaRows, arenaRows + entryRows, "the windows"}};
  if (failed(checkDisjoint(rs, slot, 0, slotRows, "a slot", numProofs)))
    return failure();

  // Fields inside their plane's share of the arena, disjoint; windows
  // carried as fields inside their field.
  SmallVector<PlaneOp> planes = model.getPlanes();
  SmallVector<int64_t> wide, rebase;
  for (auto [p, plane] : llvm::enumerate(planes)) {
    int64_t w = int64_t(plane.getRowBytes());
    std::vector<Span> fields;
    for (StateFieldOp f : model.fieldsOf(rs.getSlotClass())) {
      if (!f.getPlane() || *f.getPlane() != plane.getName())
        continue;
      if (!f.getOffset() || !f.getEnd())
        return f.emitOpError("is not placed; run pool-layout-state-fields");
      fields.push_back({int64_t(*f.getOffset()), int64_t(*f.getEnd()),
                        "field '" + f.getName().str() + "'"});
      if (auto k = f.getRowsPerWindowRow()) {
        int64_t reach = int64_t(f.getLayers()) * ring * int64_t(*k) * w;
        ++numProofs;
        if (int64_t(*f.getOffset()) + reach > int64_t(*f.getEnd()))
          return f.emitOpError("layout check failed: its windows reach ")
                 << reach << " bytes past its start, beyond the field";
      }
    }
    if (failed(checkDisjoint(rs, fields, 0, arenaRows * w,
                             ("the arena in plane '" + plane.getName() + "'")
                                 .str(),
                             numProofs)))
      return failure();

    // Addressing marks: element offsets past 2^31, spans past 4 GiB.
    auto dtype = poolrt::parseDType(plane.getDtype().str());
    int64_t elems = w / poolrt::dtypeSize(*dtype);
    int64_t planeBytes = planeRows * w;
    if (planeRows * std::max<int64_t>(elems, 1) > kInt32Rows) {
      wide.push_back(int64_t(p));
      mlir::emitRemark(plane.getLoc())
          << "plane '" << plane.getName() << "': row * " << elems
          << " elements passes 2^31 at row " << kInt32Rows / elems
          << " of " << planeRows
          << "; its views need 64-bit element offsets";
    }
    if (planeBytes > kBufferReach) {
      rebase.push_back(int64_t(p));
      ++numProofs;
      if (slotRows * w > kBufferReach || env * w > kBufferReach)
        return rs.emitOpError("a slot or block of plane '")
               << plane.getName()
               << "' spans more than the 4 GiB a rebased buffer descriptor "
                  "reaches";
    }
  }
  rs.setWideOffsetPlanesAttr(b.getDenseI64ArrayAttr(wide));
  rs.setRebasePlanesAttr(b.getDenseI64ArrayAttr(rebase));
  return success();
}

LogicalResult checkModel(ModelOp model, llvm::Statistic &numProofs) {
  Builder b(model.getContext());
  if (!model.getAllocationBytes())
    return model.emitOpError("is not planned; run pool-plan-pools first");
  int64_t allocation = int64_t(*model.getAllocationBytes());
  RowSpaceOp rs = model.getRowSpace();

  // Regions of the one allocation.
  std::vector<Span> regions;
  if (rs) {
    if (!rs.getPlaneOffsets() || !rs.getPlaneRows())
      return rs.emitOpError("is not planned; run pool-plan-pools first");
    ArrayRef<int64_t> offsets = *rs.getPlaneOffsets();
    ArrayRef<int64_t> widths = rs.getPlaneWidths();
    ArrayAttr names = rs.getPlaneNames();
    if (offsets.size() != widths.size() || names.size() != widths.size())
      return rs.emitOpError("layout check failed: plane lists disagree");
    for (size_t i = 0; i < widths.size(); ++i)
      regions.push_back(
          Span{offsets[i], offsets[i] + int64_t(*rs.getPlaneRows()) * widths[i],
               "plane '" + cast<StringAttr>(names[i]).getValue().str() + "'"});
  }
  EntryClassOp fullPage;
  for (EntryClassOp cls : model.getEntryClasses())
    if (cls.isPage() && !cls.isWindow())
      fullPage = cls;
  for (EntryClassOp cls : model.getEntryClasses()) {
    cls.removeNeedsRebaseAttr();
    if (!cls.getRegionOffset())
      continue;
    if (cls.getSharesBlocks()) {
      // One block id space: the class addresses the full class's region
      // with the same ids and the same page size, proved equal here.
      if (!fullPage || fullPage.getRegionOffset() != cls.getRegionOffset() ||
          fullPage.getEntries() != cls.getEntries() ||
          fullPage.getEntryBytes() != cls.getEntryBytes())
        return cls.emitOpError("layout check failed: window class '")
               << cls.getName()
               << "' shares the full class's blocks but not its region, "
                  "count or page size";
      ++numProofs;
      continue;
    }
    int64_t off = int64_t(*cls.getRegionOffset());
    int64_t entries = int64_t(*cls.getEntries());
    int64_t per = rs && cls.getName() == rs.getPageClass()
                      ? int64_t(*cls.getBytes())
                      : int64_t(*cls.getEntryBytes());
    int64_t span = 0, end = 0;
    if (entries < 0 || per < 0 || __builtin_mul_overflow(entries, per, &span) ||
        __builtin_add_overflow(off, span, &end))
      return cls.emitOpError("layout check failed: region of ")
             << entries << " entries of " << per
             << " bytes overflows 64-bit arithmetic";
    regions.push_back({off, end, "class '" + cls.getName().str() + "'"});
    ++numProofs;
    if (off % poolrt::kArenaAlign != 0)
      return cls.emitOpError("layout check failed: region offset ")
             << off << " is not 256-aligned";
    if (entries > kInt32Rows)
      return cls.emitOpError("entry index ")
             << entries - 1 << " does not fit int32";
    if (span > kBufferReach) {
      cls.setNeedsRebase(true);
      if (per > kBufferReach)
        return cls.emitOpError("one entry of ")
               << per << " bytes spans more than the 4 GiB a rebased buffer "
                  "descriptor reaches";
    }
  }
  if (failed(checkDisjoint(model, regions, 0, allocation, "the allocation",
                           numProofs)))
    return failure();
  if (rs && failed(checkRowSpace(model, rs, numProofs)))
    return failure();
  return success();
}

struct CheckAddressing : impl::CheckAddressingBase<CheckAddressing> {
  using CheckAddressingBase::CheckAddressingBase;
  void runOnOperation() override {
    if (failed(checkModel(getOperation(), numProofs)))
      return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
