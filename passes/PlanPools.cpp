//===- PlanPools.cpp - Size every pool from a byte budget -----------------===//
//
// The counts come from poolrt::planPools and the carving from
// poolrt::carveWithinBudget (runtime/layout/Plan.cpp): this pass feeds them
// the declaration and the solved row space, and records the result. It never
// re-solves the row space: pool-solve-row-space's pool.row_space op is the
// one source of its rows.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/Plan.h"
#include "poolrt/SubPool.h"

namespace mlir::pool {
#define GEN_PASS_DEF_PLANPOOLS
#include "passes/Passes.h.inc"

namespace {

/// Every class as the layout library's spec, in declaration order.
LogicalResult collectSpecs(ModelOp model, SmallVectorImpl<EntryClassOp> &ops,
                           std::vector<poolrt::SubPoolSpec> &specs) {
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
    if (cls.isWindow()) {
      spec.value().attention = {
          *poolrt::parseAttentionKind(cls.getAttention()->str()),
          int64_t(cls.getAttentionTokens())};
      spec.value().forwardTokens = int64_t(cls.getForwardTokens());
      spec.value().cachePercent = int64_t(cls.getCachePercent());
    }
    specs.push_back(spec.value());
    ops.push_back(cls);
  }
  return success();
}

/// The reference's counts; an insufficient budget names every STATE class's
/// reservation.
FailureOr<poolrt::PoolPlan>
sizePools(ModelOp model, ArrayRef<EntryClassOp> ops,
          const std::vector<poolrt::SubPoolSpec> &specs, int64_t budget,
          int64_t maxNumSeqs) {
  auto plan = poolrt::hasWindowClass(specs)
                  ? poolrt::planHybridPools(
                        specs, budget, maxNumSeqs,
                        {int64_t(model.getBlockSize()), int64_t(model.getSpecDepth())})
                  : poolrt::planPools(specs, budget, maxNumSeqs);
  if (plan)
    return plan.take();
  const poolrt::Error &e = plan.error();
  if (e.kind != poolrt::ErrorKind::InsufficientBudget)
    return model.emitOpError(e.message);
  bool windows = poolrt::hasWindowClass(specs);
  auto diag = model.emitError() << "insufficient pool budget: " << e.message;
  if (windows)
    diag << " (window reserves for " << maxNumSeqs << " sequences";
  else
    diag << " (" << e.entries << " STATE entries for " << maxNumSeqs
         << " sequences";
  diag << "; reserved_bytes=" << e.reservedBytes
       << " available_bytes=" << e.availableBytes
       << "); raise the budget or lower max-num-seqs";
  for (auto [cls, spec] : llvm::zip(ops, specs))
    if (spec.attention.isWindow())
      diag.attachNote(EntryClassOp(cls).getLoc())
          << "window class '" << spec.name << "' keeps " << maxNumSeqs
          << " reserves of "
          << spec.attention.reserveBlocks(int64_t(model.getSpecDepth()),
                                          spec.forwardTokens > 0 ? spec.forwardTokens
                                                                 : spec.attention.tokens,
                                          int64_t(model.getBlockSize()))
          << " blocks * " << spec.entryBytes << " bytes";
    else if (spec.pool == poolrt::Pool::State)
      diag.attachNote(EntryClassOp(cls).getLoc())
          << "STATE class '" << spec.name << "' reserves (" << maxNumSeqs
          << " * " << spec.entriesPerReq << " + " << spec.extraEntries
          << ") entries * " << spec.entryBytes << " bytes";
  return diag;
}

/// Pipeline parallelism: every stage keeps the minimum block count.
FailureOr<poolrt::PoolPlan> reconcileStages(ModelOp model,
                                            poolrt::PoolPlan solved,
                                            int64_t ppMinBlocks) {
  if (ppMinBlocks == kNoPpMinBlocks)
    return solved;
  if (!solved.pagedClass())
    return model.emitOpError("pp-min-blocks given, but the model has no PAGE "
                             "entry class to reconcile");
  if (ppMinBlocks >= solved.pagedEntries())
    return solved;
  auto reconciled = solved.withPagedEntries(ppMinBlocks);
  if (!reconciled)
    return model.emitOpError(reconciled.error().message);
  return reconciled.take();
}

/// What the allocation holds, independent of the counts: the classes in
/// declaration order and, in a row space, its solved rows and planes.
poolrt::AllocationShape allocationShape(ArrayRef<EntryClassOp> ops,
                                        RowSpaceOp rowSpace) {
  poolrt::AllocationShape shape;
  for (EntryClassOp cls : ops)
    shape.classes.push_back(
        {cls.getName().str(),
         cls.getBytes() ? std::optional<int64_t>(int64_t(*cls.getBytes()))
                        : std::nullopt});
  if (!rowSpace)
    return shape;
  poolrt::RowSpaceRows rows;
  rows.pageClass = rowSpace.getPageClass().str();
  rows.slotClass = rowSpace.getSlotClass().str();
  rows.envelopeRows = int64_t(rowSpace.getEnvelopeRows());
  rows.slotRows = int64_t(rowSpace.getSlotRows());
  rows.planeWidths.assign(rowSpace.getPlaneWidths().begin(),
                          rowSpace.getPlaneWidths().end());
  rows.arenaRows = int64_t(rowSpace.getArenaRows());
  rows.entryRows = int64_t(rowSpace.getEntryRows());
  rows.slotAlignRows = int64_t(rowSpace.getSlotAlignRows());
  for (Attribute a : rowSpace.getClasses())
    if (__builtin_add_overflow(rows.classEnvelopeRows,
                               cast<RowClassAttr>(a).getEnvelopeRows(),
                               &rows.classEnvelopeRows))
      rows.classEnvelopeRows = -1; // cannot match: refused as stale
  shape.rowSpace = std::move(rows);
  return shape;
}

/// Write the counts, the regions and the row space's split onto the IR.
void recordPlan(ModelOp model, ArrayRef<EntryClassOp> ops, RowSpaceOp rowSpace,
                const poolrt::FittedPlan &fitted, int64_t budget,
                int64_t maxNumSeqs, llvm::Statistic &numPage,
                llvm::Statistic &numState) {
  Builder b(model.getContext());
  const poolrt::Carving &carving = fitted.carving;
  for (auto [op, offset] : llvm::zip(ops, carving.regionOffsets)) {
    EntryClassOp cls = op; // the ops are handles: copies write the IR
    const poolrt::PlannedClass *pc = fitted.plan.find(cls.getName().str());
    cls.setEntriesAttr(b.getI64IntegerAttr(pc->entries));
    cls.setReservedBytesAttr(b.getI64IntegerAttr(pc->reservedBytes));
    if (pc->isWindow()) {
      cls.setReserveBlocksAttr(b.getI64IntegerAttr(pc->reserveBlocks));
      cls.setForwardTokensAttr(b.getI64IntegerAttr(pc->forwardTokens));
      if (pc->cachePercent)
        cls.setCachePercentAttr(b.getI64IntegerAttr(pc->cachePercent));
      cls.setSharesBlocks(pc->sharesBlocks);
    }
    if (offset)
      cls.setRegionOffsetAttr(b.getI64IntegerAttr(*offset));
    else
      cls.removeRegionOffsetAttr();
    if (cls.isPage())
      numPage += pc->entries;
    else
      numState += pc->entries;
  }
  if (rowSpace && carving.rowSpace) {
    const poolrt::RowSpaceSplit &split = *carving.rowSpace;
    rowSpace.setNumBlocksAttr(b.getI64IntegerAttr(split.numBlocks));
    rowSpace.setNumSlotsAttr(b.getI64IntegerAttr(split.numSlots));
    rowSpace.setPlaneRowsAttr(b.getI64IntegerAttr(split.planeRows));
    rowSpace.setSlotPositionsAttr(b.getI64IntegerAttr(split.slotPositions));
    rowSpace.setPlaneOffsetsAttr(b.getDenseI64ArrayAttr(carving.planeOffsets));
  }
  model.setBudgetAttr(b.getI64IntegerAttr(budget));
  model.setMaxNumSeqsAttr(b.getI64IntegerAttr(maxNumSeqs));
  model.setTotalReservedBytesAttr(
      b.getI64IntegerAttr(fitted.plan.totalReservedBytes()));
  model.setAllocationBytesAttr(b.getI64IntegerAttr(carving.total));
}

LogicalResult planModel(ModelOp model, const PlanPoolsOptions &options,
                        llvm::Statistic &numPage, llvm::Statistic &numState) {
  SmallVector<EntryClassOp> ops;
  std::vector<poolrt::SubPoolSpec> specs;
  if (failed(collectSpecs(model, ops, specs)))
    return failure();
  FailureOr<poolrt::PoolPlan> sized =
      sizePools(model, ops, specs, options.budget, options.maxNumSeqs);
  if (failed(sized))
    return failure();
  FailureOr<poolrt::PoolPlan> solved =
      reconcileStages(model, std::move(*sized), options.ppMinBlocks);
  if (failed(solved))
    return failure();

  // The counts are the reference's (one source: planPools). Carving them
  // into one allocation aligns each region start to 256 B; with 256-multiple
  // entry sizes (every real model) that adds nothing, otherwise
  // allocation_bytes exceeds total_reserved_bytes by under 256 B a region.
  // A tight row space rounds the blocks up to whole slots, like the
  // reference: its planes may pass the reservation by under one slot.
  // fit-allocation gives up PAGE entries until the allocation fits instead.
  RowSpaceOp rowSpace = model.getRowSpace();
  poolrt::PlanFault fault = poolrt::PlanFault::Allocation;
  auto fitted = poolrt::carveWithinBudget(
      *solved, allocationShape(ops, rowSpace), options.budget,
      options.fitAllocation, &fault);
  if (!fitted) {
    if (rowSpace && fault == poolrt::PlanFault::RowSpace)
      return rowSpace.emitOpError(fitted.error().message);
    return model.emitOpError(fitted.error().message);
  }
  recordPlan(model, ops, rowSpace, fitted.value(), options.budget,
             options.maxNumSeqs, numPage, numState);
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
    PlanPoolsOptions options;
    options.budget = bytes;
    options.maxNumSeqs = seqs;
    options.ppMinBlocks = minBlocks;
    options.fitAllocation = fitAllocation;
    if (failed(planModel(model, options, numPageEntries, numStateEntries)))
      return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
