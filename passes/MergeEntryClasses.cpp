//===- MergeEntryClasses.cpp - Same name, same index space ----------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/SubPool.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::pool {
#define GEN_PASS_DEF_MERGEENTRYCLASSES
#include "passes/Passes.h.inc"

namespace {

std::string render(EntryClassOp op) {
  return "SubPoolSpec(pool=" + op.getPool().str() + ", name='" +
         op.getName().str() + "', entry_bytes=" +
         (op.getBytes() ? std::to_string(int64_t(*op.getBytes()))
                        : std::string("derived")) +
         ", entries_per_req=" + std::to_string(int64_t(op.getEntriesPerReq())) +
         ", extra_entries=" + std::to_string(int64_t(op.getExtraEntries())) +
         ")";
}

LogicalResult mergeModel(ModelOp model, llvm::Statistic &numMerged) {
  llvm::StringMap<EntryClassOp> first;
  SmallVector<EntryClassOp> toErase;
  Builder b(model.getContext());
  for (EntryClassOp cls :
       llvm::make_early_inc_range(model.getEntryClasses())) {
    auto [it, inserted] = first.try_emplace(cls.getName(), cls);
    if (inserted)
      continue;
    EntryClassOp keep = it->second;
    if (keep.getPool() != cls.getPool() ||
        keep.getEntriesPerReq() != cls.getEntriesPerReq() ||
        keep.getExtraEntries() != cls.getExtraEntries()) {
      auto diag = cls.emitOpError("entry class '")
                  << cls.getName()
                  << "' declared twice with different pool/multiplicity: "
                  << render(keep) << " vs " << render(cls);
      diag.attachNote(keep.getLoc()) << "first declared here";
      return diag;
    }
    if (keep.getTransferAttr() && cls.getTransferAttr() &&
        keep.getTransferAttr() != cls.getTransferAttr()) {
      auto diag = cls.emitOpError("entry class '")
                  << cls.getName() << "' declared twice with different "
                  << "transfers: " << keep.getTransferAttr() << " vs "
                  << cls.getTransferAttr();
      diag.attachNote(keep.getLoc()) << "first declared here";
      return diag;
    }
    if (auto bytes = cls.getBytes()) {
      int64_t sum = int64_t(*bytes);
      if (auto kept = keep.getBytes())
        if (__builtin_add_overflow(int64_t(*kept), int64_t(*bytes), &sum))
          return cls.emitOpError("entry class '")
                 << cls.getName()
                 << "': merged bytes overflow 64-bit arithmetic";
      keep.setBytesAttr(b.getI64IntegerAttr(sum));
    }
    if (cls.getDerived())
      keep.setDerived(true);
    if (!keep.getTransfer() && cls.getTransfer())
      keep.setTransferAttr(cls.getTransferAttr());
    toErase.push_back(cls);
  }
  for (EntryClassOp op : toErase) {
    op.erase();
    ++numMerged;
  }
  return success();
}

struct MergeEntryClasses : impl::MergeEntryClassesBase<MergeEntryClasses> {
  using MergeEntryClassesBase::MergeEntryClassesBase;
  void runOnOperation() override {
    if (failed(mergeModel(getOperation(), numMerged)))
      return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
