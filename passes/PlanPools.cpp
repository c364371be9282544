//===- PlanPools.cpp - Size every pool from a byte budget -----------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/Checked.h"
#include "poolrt/RowSpace.h"
#include "poolrt/StateArena.h"
#include "poolrt/SubPool.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace mlir::pool {
#define GEN_PASS_DEF_PLANPOOLS
#include "passes/Passes.h.inc"

namespace {

LogicalResult planModel(ModelOp model, int64_t budget, int64_t maxNumSeqs,
                        int64_t ppMinBlocks, bool fitAllocation,
                        llvm::Statistic &numPage,
                        llvm::Statistic &numState) {
  Builder b(model.getContext());
  SmallVector<EntryClassOp> ops;
  std::vector<poolrt::SubPoolSpec> specs;
  if (failed(model.requireMergedClasses()))
    return failure();
  for (EntryClassOp cls : model.getEntryClasses()) {
    if (!cls.getEntryBytes())
      return cls.emitOpError("entry class '")
             << cls.getName()
             << "' has no entry_bytes; run pool-layout-state-fields first";
    auto spec = poolrt::SubPoolSpec::make(
        cls.isPage() ? poolrt::Pool::Page : poolrt::Pool::State,
        cls.getName().str(), int64_t(*cls.getEntryBytes()),
        int64_t(cls.getEntriesPerReq()), int64_t(cls.getExtraEntries()));
    if (!spec)
      return cls.emitOpError(spec.error().message);
    specs.push_back(spec.value());
    ops.push_back(cls);
  }

  auto plan = poolrt::planPools(specs, budget, maxNumSeqs);
  if (!plan) {
    const poolrt::Error &e = plan.error();
    if (e.kind != poolrt::ErrorKind::InsufficientBudget)
      return model.emitOpError(e.message);
    auto diag = model.emitError()
                << "insufficient pool budget: " << e.message << " ("
                << e.entries << " STATE entries for " << maxNumSeqs
                << " sequences; reserved_bytes=" << e.reservedBytes
                << " available_bytes=" << e.availableBytes
                << "); raise the budget or lower max-num-seqs";
    for (auto [cls, spec] : llvm::zip(ops, specs))
      if (spec.pool == poolrt::Pool::State)
        diag.attachNote(cls.getLoc())
            << "STATE class '" << spec.name << "' reserves ("
            << maxNumSeqs << " * " << spec.entriesPerReq << " + "
            << spec.extraEntries << ") entries * " << spec.entryBytes
            << " bytes";
    return diag;
  }
  poolrt::PoolPlan solved = plan.take();
  bool reconcile = ppMinBlocks != kNoPpMinBlocks;
  if (reconcile && ppMinBlocks < solved.pagedEntries()) {
    auto reconciled = solved.withPagedEntries(ppMinBlocks);
    if (!reconciled)
      return model.emitOpError(reconciled.error().message);
    solved = reconciled.take();
  } else if (reconcile && !solved.pagedClass()) {
    return model.emitOpError("pp-min-blocks given, but the model has no PAGE "
                             "entry class to reconcile");
  }

  // One allocation. In a row space the planes hold the blocks and the
  // slots; the PAGE class's explicit bytes (an indexer riding the block
  // table) get their own region after them. Otherwise the PAGE region
  // first, then the STATE arenas in declaration order. Starts 256-aligned.
  RowSpaceOp rowSpace = model.getRowSpace();
  std::optional<poolrt::RowSpaceGeometry> geo;
  std::vector<int64_t> sizes;
  SmallVector<EntryClassOp> regionOwner; // null for a plane
  poolrt::RegionPlan regions;
  auto carve = [&](const poolrt::PoolPlan &plan) -> LogicalResult {
    geo.reset();
    sizes.clear();
    regionOwner.clear();
    if (rowSpace) {
      const poolrt::PlannedClass *pc = plan.find(rowSpace.getPageClass().str());
      const poolrt::PlannedClass *sc = plan.find(rowSpace.getSlotClass().str());
      if (!pc || !sc)
        return rowSpace.emitOpError("names classes the model does not plan");
      auto g = poolrt::RowSpaceGeometry::create(
          std::vector<int64_t>(rowSpace.getRatios().begin(),
                               rowSpace.getRatios().end()),
          pc->entries, sc->entries, int64_t(rowSpace.getRingSlots()),
          int64_t(rowSpace.getBlockSize()), std::nullopt,
          int64_t(rowSpace.getArenaRows()), std::nullopt,
          int64_t(rowSpace.getSlotAlignRows()));
      if (!g)
        return rowSpace.emitOpError(g.error().message);
      if (g->slotRows() != int64_t(rowSpace.getSlotRows()) ||
          g->envelopeRows() != int64_t(rowSpace.getEnvelopeRows()))
        return rowSpace.emitOpError("disagrees with its own geometry: re-run "
                                    "pool-solve-row-space");
      geo = g.take();
      for (int64_t w : rowSpace.getPlaneWidths()) {
        auto bytes = poolrt::checkedMul(geo->planeRows(), w, "plane bytes");
        if (!bytes)
          return rowSpace.emitOpError(bytes.error().message);
        sizes.push_back(*bytes);
        regionOwner.push_back(EntryClassOp());
      }
    }
    for (bool pagePass : {true, false})
      for (EntryClassOp cls : ops) {
        if (cls.isPage() != pagePass)
          continue;
        const poolrt::PlannedClass *pc = plan.find(cls.getName().str());
        int64_t bytes = pc->reservedBytes;
        if (geo && cls.getName() == rowSpace.getSlotClass())
          continue; // in the planes
        if (geo && cls.getName() == rowSpace.getPageClass()) {
          if (!cls.getBytes())
            continue; // entirely in the planes
          bytes = pc->entries * int64_t(*cls.getBytes()); // <= reserved bytes
        }
        sizes.push_back(bytes);
        regionOwner.push_back(cls);
      }
    auto r = poolrt::planRegions(sizes);
    if (!r)
      return model.emitOpError(r.error().message);
    regions = r.take();
    return success();
  };
  if (failed(carve(solved)))
    return failure();
  // fit-allocation: give up PAGE entries until the one allocation (region
  // padding, and in a row space the blocks rounded up to whole slots) fits
  // the budget. Off by default: the counts are then the reference's.
  if (fitAllocation && regions.total > budget && solved.pagedClass()) {
    int64_t lo = 0, hi = solved.pagedEntries(); // largest n that fits
    while (lo < hi) {
      int64_t mid = lo + (hi - lo + 1) / 2;
      auto trial = solved.withPagedEntries(mid);
      if (!trial)
        return model.emitOpError(trial.error().message);
      if (failed(carve(trial.value())))
        return failure();
      if (regions.total <= budget)
        lo = mid;
      else
        hi = mid - 1;
    }
    auto fitted = solved.withPagedEntries(lo);
    if (!fitted)
      return model.emitOpError(fitted.error().message);
    solved = fitted.take();
    if (failed(carve(solved)))
      return failure();
  }
  // The counts are the reference's (one source: planPools). Carving them
  // into one allocation aligns each region start to 256 B; with 256-multiple
  // entry sizes (every real model) that adds nothing, otherwise
  // allocation_bytes exceeds total_reserved_bytes by under 256 B a region.
  // A tight row space rounds the blocks up to whole slots, like the
  // reference: its planes may pass the reservation by under one slot.

  for (EntryClassOp cls : ops) {
    const poolrt::PlannedClass *pc = solved.find(cls.getName().str());
    cls.setEntriesAttr(b.getI64IntegerAttr(pc->entries));
    cls.setReservedBytesAttr(b.getI64IntegerAttr(pc->reservedBytes));
    cls.removeRegionOffsetAttr();
    if (cls.isPage())
      numPage += pc->entries;
    else
      numState += pc->entries;
  }
  SmallVector<int64_t> planeOffsets;
  for (auto [i, owner] : llvm::enumerate(regionOwner)) {
    if (owner)
      owner.setRegionOffsetAttr(b.getI64IntegerAttr(regions.offsets[i]));
    else
      planeOffsets.push_back(regions.offsets[i]);
  }
  if (geo) {
    rowSpace.setNumBlocksAttr(b.getI64IntegerAttr(geo->numBlocks()));
    rowSpace.setNumSlotsAttr(b.getI64IntegerAttr(geo->numSlots()));
    rowSpace.setPlaneRowsAttr(b.getI64IntegerAttr(geo->planeRows()));
    rowSpace.setSlotPositionsAttr(b.getI64IntegerAttr(geo->slotPositions()));
    rowSpace.setPlaneOffsetsAttr(b.getDenseI64ArrayAttr(planeOffsets));
  }
  model.setBudgetAttr(b.getI64IntegerAttr(budget));
  model.setMaxNumSeqsAttr(b.getI64IntegerAttr(maxNumSeqs));
  model.setTotalReservedBytesAttr(
      b.getI64IntegerAttr(solved.totalReservedBytes()));
  model.setAllocationBytesAttr(b.getI64IntegerAttr(regions.total));
  return success();
}

struct PlanPools : impl::PlanPoolsBase<PlanPools> {
  using PlanPoolsBase::PlanPoolsBase;
  void runOnOperation() override {
    ModelOp model = getOperation();
    // Streaming an Option itself picks Diagnostic's `char` overload.
    int64_t bytes = budget, seqs = maxNumSeqs, minBlocks = ppMinBlocks;
    if (bytes == kNoBudget) {
      model.emitError("pool-plan-pools needs a budget (budget=BYTES)");
      return signalPassFailure();
    }
    if (bytes < 0) {
      model.emitError("pool-plan-pools needs a budget >= 0 bytes, got ")
          << bytes;
      return signalPassFailure();
    }
    if (seqs < 0) {
      model.emitError("pool-plan-pools needs max-num-seqs >= 0, got ") << seqs;
      return signalPassFailure();
    }
    if (minBlocks != kNoPpMinBlocks && minBlocks < 0) {
      model.emitError("pool-plan-pools needs pp-min-blocks >= 0 when given, "
                      "got ")
          << minBlocks;
      return signalPassFailure();
    }
    if (failed(planModel(model, budget, maxNumSeqs, ppMinBlocks, fitAllocation,
                         numPageEntries, numStateEntries)))
      return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
