//===- LayoutStateFields.cpp - Entry-major state arenas -------------------===//
//
// The arithmetic lives in poolrt (StateArena.h) so that sizing, the report,
// the artifact and the runtime allocation all come from one expression.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/Runs.h"
#include "poolrt/StateArena.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::pool {
#define GEN_PASS_DEF_LAYOUTSTATEFIELDS
#include "passes/Passes.h.inc"

namespace {

/// In a row space each plane's fields form their own arena at the front of
/// the slot in that plane: offsets are from the slot start in that plane.
LogicalResult layoutPlanes(ModelOp model, EntryClassOp cls,
                           ArrayRef<StateFieldOp> ops, llvm::Statistic &numArenas,
                           llvm::Statistic &numFields) {
  Builder b(model.getContext());
  SmallVector<Attribute> perPlane;
  int64_t arenaBytes = 0;
  for (StateFieldOp f : ops)
    if (!f.getPlane())
      return f.emitOpError("state field '")
             << f.getName()
             << "' has no plane; run pool-assign-field-planes first";
  for (PlaneOp plane : model.getPlanes()) {
    SmallVector<StateFieldOp> group;
    std::vector<poolrt::StateField> fields;
    for (StateFieldOp f : ops)
      if (*f.getPlane() == plane.getName()) {
        group.push_back(f);
        fields.push_back(toStateField(f).value()); // verified
      }
    auto extents = poolrt::fieldExtents(fields);
    auto bytes = poolrt::entryBytesFor(fields);
    auto ranges = poolrt::checkpointRangesFor(fields);
    if (!extents || !bytes || !ranges)
      return cls.emitOpError("entry class '") << cls.getName() << "': "
             << (!extents ? extents.error().message
                 : !bytes ? bytes.error().message
                          : ranges.error().message);
    for (auto [op, ext] : llvm::zip(group, extents.value())) {
      op.setOffsetAttr(b.getI64IntegerAttr(ext.begin));
      op.setEndAttr(b.getI64IntegerAttr(ext.end));
      ++numFields;
    }
    auto merged = poolrt::mergeAbutting(ranges.value());
    if (!merged)
      return cls.emitOpError(merged.error().message);
    SmallVector<int64_t> flat;
    for (auto [off, len] : merged.value()) {
      flat.push_back(off);
      flat.push_back(len);
    }
    perPlane.push_back(b.getDenseI64ArrayAttr(flat));
    arenaBytes += bytes.value();
  }
  cls.setArenaBytesAttr(b.getI64IntegerAttr(arenaBytes));
  cls.setPlaneCheckpointRangesAttr(b.getArrayAttr(perPlane));
  ++numArenas;
  return success();
}

LogicalResult layoutModel(ModelOp model, llvm::Statistic &numArenas,
                          llvm::Statistic &numFields) {
  Builder b(model.getContext());
  llvm::MapVector<StringRef, SmallVector<StateFieldOp>> fieldsByClass;
  for (StateFieldOp f : model.getStateFields())
    fieldsByClass[f.getEntryClass()].push_back(f);

  bool inRowSpace = model.inRowSpace();
  if (failed(model.requireMergedClasses()))
    return failure();
  for (EntryClassOp cls : model.getEntryClasses()) {
    int64_t explicitBytes = cls.getBytes() ? int64_t(*cls.getBytes()) : 0;
    auto fit = fieldsByClass.find(cls.getName());
    if (inRowSpace && fit != fieldsByClass.end()) {
      if (failed(layoutPlanes(model, cls, fit->second, numArenas, numFields)))
        return failure();
      if (cls.getDerived())
        continue; // the slot: pool-solve-row-space derives its bytes
    }
    if (inRowSpace && cls.getDerived())
      continue; // the row space derives these bytes
    int64_t arena = 0;
    if (!inRowSpace && fit != fieldsByClass.end()) {
      std::vector<poolrt::StateField> fields;
      for (StateFieldOp f : fit->second) {
        auto field = toStateField(f);
        if (!field)
          return f.emitOpError(field.error().message);
        fields.push_back(field.value());
      }
      auto extents = poolrt::fieldExtents(fields);
      auto bytes = poolrt::entryBytesFor(fields);
      auto ranges = poolrt::checkpointRangesFor(fields);
      if (!extents || !bytes || !ranges)
        return cls.emitOpError("entry class '")
               << cls.getName() << "': "
               << (!extents  ? extents.error().message
                   : !bytes ? bytes.error().message
                            : ranges.error().message);
      auto merged = poolrt::mergeAbutting(ranges.value());
      if (!merged)
        return cls.emitOpError(merged.error().message);
      for (auto [op, ext] : llvm::zip(fit->second, extents.value())) {
        op.setOffsetAttr(b.getI64IntegerAttr(ext.begin));
        op.setEndAttr(b.getI64IntegerAttr(ext.end));
        ++numFields;
      }
      SmallVector<int64_t> flat;
      for (auto [off, len] : merged.value()) {
        flat.push_back(off);
        flat.push_back(len);
      }
      arena = bytes.value();
      cls.setArenaBytesAttr(b.getI64IntegerAttr(arena));
      cls.setCheckpointRangesAttr(b.getDenseI64ArrayAttr(flat));
      ++numArenas;
      if (!cls.getDerived() && explicitBytes < arena)
        return cls.emitOpError("entry class '")
               << cls.getName() << "' declares " << explicitBytes
               << " bytes, but its state fields need an arena of " << arena
               << " bytes";
    } else if (!inRowSpace && cls.getDerived()) {
      return cls.emitOpError("entry class '")
             << cls.getName()
             << "' derives its bytes, but nothing in this model derives them "
                "(no state field names it)";
    }
    int64_t entry = explicitBytes;
    if (cls.getDerived() && __builtin_add_overflow(explicitBytes, arena, &entry))
      return cls.emitOpError("entry class '")
             << cls.getName() << "': entry bytes overflow 64-bit arithmetic";
    if (fit != fieldsByClass.end() && !inRowSpace) {
      // Without planes the entry is the arena's slot stride: entries past
      // the first must start on the boundary the field views retype from.
      int64_t align = poolrt::kArenaAlign;
      for (StateFieldOp f : fit->second)
        align = std::max<int64_t>(align, int64_t(f.getAlign()));
      if (entry < 1)
        return cls.emitOpError("entry class '")
               << cls.getName()
               << "' derives 0 bytes: its state fields hold nothing";
      if (entry % align != 0)
        return cls.emitOpError("entry class '")
               << cls.getName() << "': an entry of " << entry
               << " bytes holding state fields must be a multiple of " << align
               << ", or entries past the first fall off the boundary their "
                  "field views retype from";
    }
    cls.setEntryBytesAttr(b.getI64IntegerAttr(entry));
  }
  return success();
}

struct LayoutStateFields : impl::LayoutStateFieldsBase<LayoutStateFields> {
  using LayoutStateFieldsBase::LayoutStateFieldsBase;
  void runOnOperation() override {
    if (failed(layoutModel(getOperation(), numArenas, numFields)))
      return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
