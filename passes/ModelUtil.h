//===- ModelUtil.h - Lookups over a pool.model shared by the passes -*- C++ -*-===//
#ifndef POOL_PASSES_MODELUTIL_H
#define POOL_PASSES_MODELUTIL_H

#include "dialects/Pool/IR/PoolOps.h"

#include "poolrt/StateArena.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::pool {

inline SmallVector<PlaneOp> getPlanes(ModelOp model) {
  return llvm::to_vector(model.getBodyBlock().getOps<PlaneOp>());
}

/// A model is a row-space model when it declares planes.
inline bool inRowSpace(ModelOp model) {
  return !model.getBodyBlock().getOps<PlaneOp>().empty();
}

inline LayersOp getLayersOp(ModelOp model) {
  auto ops = model.getBodyBlock().getOps<LayersOp>();
  return ops.empty() ? LayersOp() : *ops.begin();
}

inline RowSpaceOp getRowSpace(ModelOp model) {
  auto ops = model.getBodyBlock().getOps<RowSpaceOp>();
  return ops.empty() ? RowSpaceOp() : *ops.begin();
}

/// The first declaration of a class (after merging, the only one).
inline EntryClassOp findClass(ModelOp model, StringRef name) {
  for (EntryClassOp c : model.getBodyBlock().getOps<EntryClassOp>())
    if (c.getName() == name)
      return c;
  return EntryClassOp();
}

inline SmallVector<StateFieldOp> fieldsOf(ModelOp model, StringRef cls) {
  SmallVector<StateFieldOp> out;
  for (StateFieldOp f : model.getBodyBlock().getOps<StateFieldOp>())
    if (f.getEntryClass() == cls)
      out.push_back(f);
  return out;
}

/// The STATE class whose entry is a row-space slot: the derived STATE class
/// (there must be exactly one in a row-space model; pool-verify checks).
inline EntryClassOp getSlotClass(ModelOp model) {
  for (EntryClassOp c : model.getBodyBlock().getOps<EntryClassOp>())
    if (c.isState() && c.getDerived())
      return c;
  return EntryClassOp();
}

inline EntryClassOp getPageClass(ModelOp model) {
  for (EntryClassOp c : model.getBodyBlock().getOps<EntryClassOp>())
    if (c.isPage())
      return c;
  return EntryClassOp();
}

/// Passes after pool-merge-entry-classes assume one op per class name: a
/// second declaration would get the merged counts and its own region, so
/// the allocation would count the class twice. Diagnoses the first repeat.
inline LogicalResult requireMergedClasses(ModelOp model) {
  llvm::StringMap<EntryClassOp> seen;
  for (EntryClassOp cls : model.getBodyBlock().getOps<EntryClassOp>()) {
    auto [it, inserted] = seen.try_emplace(cls.getName(), cls);
    if (inserted)
      continue;
    auto diag = cls.emitOpError("entry class '")
                << cls.getName()
                << "' is declared more than once; run "
                   "pool-merge-entry-classes first";
    diag.attachNote(it->second.getLoc()) << "first declared here";
    return diag;
  }
  return success();
}

} // namespace mlir::pool

#endif // POOL_PASSES_MODELUTIL_H
