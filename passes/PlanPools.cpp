//===- PlanPools.cpp - Size every pool from a byte budget -----------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/StateArena.h"
#include "poolrt/SubPool.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <limits>

namespace mlir::pool {
#define GEN_PASS_DEF_PLANPOOLS
#include "passes/Passes.h.inc"

namespace {

LogicalResult planModel(ModelOp model, int64_t budget, int64_t maxNumSeqs,
                        int64_t ppMinBlocks, llvm::Statistic &numPage,
                        llvm::Statistic &numState) {
  Builder b(model.getContext());
  SmallVector<EntryClassOp> ops;
  std::vector<poolrt::SubPoolSpec> specs;
  llvm::StringMap<EntryClassOp> seen;
  for (EntryClassOp cls : model.getBodyBlock().getOps<EntryClassOp>()) {
    // planPools would merge same-name specs itself, but each op would then
    // receive the merged counts and get its own region: the allocation
    // double-counts the class.
    auto [it, inserted] = seen.try_emplace(cls.getName(), cls);
    if (!inserted) {
      auto diag = cls.emitOpError("entry class '")
                  << cls.getName()
                  << "' is declared more than once; run "
                     "pool-merge-entry-classes first";
      diag.attachNote(it->second.getLoc()) << "first declared here";
      return diag;
    }
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
  if (ppMinBlocks >= 0 && ppMinBlocks < solved.pagedEntries()) {
    auto reconciled = solved.withPagedEntries(ppMinBlocks);
    if (!reconciled)
      return model.emitOpError(reconciled.error().message);
    solved = reconciled.take();
  } else if (ppMinBlocks >= 0 && !solved.pagedClass()) {
    return model.emitOpError("pp-min-blocks given, but the model has no PAGE "
                             "entry class to reconcile");
  }

  // One allocation: the PAGE region first, then the STATE arenas in
  // declaration order, each start 256-aligned.
  SmallVector<EntryClassOp> order;
  for (EntryClassOp cls : ops)
    if (cls.isPage())
      order.push_back(cls);
  for (EntryClassOp cls : ops)
    if (cls.isState())
      order.push_back(cls);
  std::vector<int64_t> sizes;
  for (EntryClassOp cls : order)
    sizes.push_back(solved.find(cls.getName().str())->reservedBytes);
  auto regions = poolrt::planRegions(sizes);
  if (!regions)
    return model.emitOpError(regions.error().message);
  // The counts are the reference's (one source: planPools). Carving them
  // into one allocation aligns each region start to 256 B; with 256-multiple
  // entry sizes (every real model) that adds nothing, otherwise
  // allocation_bytes exceeds total_reserved_bytes by under 256 B a region.

  for (auto [i, cls] : llvm::enumerate(order)) {
    const poolrt::PlannedClass *pc = solved.find(cls.getName().str());
    cls.setEntriesAttr(b.getI64IntegerAttr(pc->entries));
    cls.setReservedBytesAttr(b.getI64IntegerAttr(pc->reservedBytes));
    cls.setRegionOffsetAttr(b.getI64IntegerAttr(regions->offsets[i]));
    if (cls.isPage())
      numPage += pc->entries;
    else
      numState += pc->entries;
  }
  model.setBudgetAttr(b.getI64IntegerAttr(budget));
  model.setMaxNumSeqsAttr(b.getI64IntegerAttr(maxNumSeqs));
  model.setTotalReservedBytesAttr(
      b.getI64IntegerAttr(solved.totalReservedBytes()));
  model.setAllocationBytesAttr(b.getI64IntegerAttr(regions->total));
  return success();
}

struct PlanPools : impl::PlanPoolsBase<PlanPools> {
  using PlanPoolsBase::PlanPoolsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (budget == std::numeric_limits<int64_t>::min()) {
      module.emitError("pool-plan-pools needs a budget (budget=BYTES)");
      return signalPassFailure();
    }
    if (maxNumSeqs < 0) {
      // Streaming the Option itself picks Diagnostic's `char` overload.
      module.emitError("pool-plan-pools needs max-num-seqs >= 0, got ")
          << static_cast<int64_t>(maxNumSeqs);
      return signalPassFailure();
    }
    for (ModelOp model : module.getOps<ModelOp>())
      if (failed(planModel(model, budget, maxNumSeqs, ppMinBlocks,
                           numPageEntries, numStateEntries)))
        return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
