//===- PoolVerify.cpp - Check that a model can be compiled ----------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/StateArena.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::pool {
#define GEN_PASS_DEF_POOLVERIFY
#include "passes/Passes.h.inc"

namespace {

struct ClassGroup {
  SmallVector<EntryClassOp> decls;
  bool derived = false;
  bool anyBytes = false;
  int64_t bytes = 0; // sum of explicit bytes (saturating; only compared)
};

using ClassGroups = llvm::MapVector<StringRef, ClassGroup>;
using FieldsByClass = llvm::MapVector<StringRef, SmallVector<StateFieldOp>>;

// Gathers the model's entry class declarations by name and its state fields
// by the class they name.
void collectClasses(ModelOp model, ClassGroups &groups,
                    FieldsByClass &fieldsByClass) {
  for (Operation &op : model.getBodyBlock()) {
    if (auto cls = dyn_cast<EntryClassOp>(op)) {
      ClassGroup &g = groups[cls.getName()];
      g.decls.push_back(cls);
      g.derived |= cls.getDerived();
      if (auto b = cls.getBytes()) {
        g.anyBytes = true;
        int64_t sum;
        g.bytes = __builtin_add_overflow(g.bytes, int64_t(*b), &sum)
                      ? INT64_MAX
                      : sum;
      }
    } else if (auto field = dyn_cast<StateFieldOp>(op)) {
      fieldsByClass[field.getEntryClass()].push_back(field);
    }
  }
}

// Checks the PAGE classes: consistent attention patterns per name, window
// classes beside exactly one full-attention PAGE class, else one PAGE class.
LogicalResult verifyPageClasses(ModelOp model, ClassGroups &groups,
                                SmallVectorImpl<EntryClassOp> &pages) {
  // Structure before budget (quirk Q4): one PAGE class name at most.
  for (auto &[name, g] : groups)
    if (g.decls.front().isPage())
      pages.push_back(g.decls.front());
  // Window classes (sliding / chunked attention, specs/window-classes.md): beside exactly one
  // full-attention PAGE class, in a stateless model without a row space,
  // every declaration of a name with the same pattern.
  bool anyWindow = false;
  for (auto &[name, g] : groups)
    for (EntryClassOp d : g.decls) {
      anyWindow |= d.isWindow();
      EntryClassOp f = g.decls.front();
      if (d.getAttention() != f.getAttention() ||
          d.getAttentionTokens() != f.getAttentionTokens() ||
          d.getForwardTokens() != f.getForwardTokens() ||
          d.getCachePercent() != f.getCachePercent())
        return d.emitOpError("entry class '")
               << name
               << "' is declared twice with different attention patterns";
    }
  if (anyWindow) {
    SmallVector<EntryClassOp> fulls;
    for (EntryClassOp p : pages)
      if (!p.isWindow())
        fulls.push_back(p);
    for (auto &[name, g] : groups) {
      EntryClassOp first = g.decls.front();
      if (first.isState())
        return first.emitOpError("STATE class '")
               << name
               << "' beside window PAGE classes (sliding or chunked "
                  "attention): the runtime runs window classes only in a "
                  "stateless model";
      if (first.isWindow() && model.inRowSpace())
        return first.emitOpError("window class '")
               << name << "' in a row space: a row space keeps one PAGE class";
    }
    if (fulls.size() != 1) {
      auto diag = model.emitOpError("a model with window PAGE classes needs "
                                    "exactly one full-attention PAGE class "
                                    "(it keeps the block table and the prefix "
                                    "index), found ")
                  << fulls.size();
      for (EntryClassOp p : pages)
        diag.attachNote(p.getLoc())
            << "PAGE class '" << p.getName() << "' ("
            << p.getAttention().value_or("full") << ")";
      return diag;
    }
  }
  if (pages.size() > 1 && !anyWindow) {
    std::string list = "[";
    for (auto [i, p] : llvm::enumerate(pages))
      list += (i ? ", '" : "'") + p.getName().str() + "'";
    list += "]";
    auto diag = model.emitOpError("more than one PAGE entry class: ") << list;
    for (EntryClassOp p : pages)
      diag.attachNote(p.getLoc()) << "PAGE class '" << p.getName() << "'";
    return diag;
  }
  return success();
}

// Checks a row-space model's layers, sliding window, slot class, state field
// placement and derived PAGE class.
LogicalResult verifyRowSpace(ModelOp model, LayersOp layers,
                             ClassGroups &groups,
                             FieldsByClass &fieldsByClass,
                             SmallVectorImpl<EntryClassOp> &pages) {
  if (!layers)
    return model.emitOpError("model '")
           << model.getName()
           << "' declares planes but no layers: a row space needs the "
              "per-layer compress ratios (pool.layers)";
  if (int64_t(model.getSlidingWindow()) < 1)
    return model.emitOpError("a row space needs sliding_window >= 1 (every "
                             "slot holds each layer's window)");
  SmallVector<EntryClassOp> slots;
  for (auto &[name, g] : groups)
    if (g.decls.front().isState() && g.derived)
      slots.push_back(g.decls.front());
  if (slots.size() != 1) {
    auto diag = model.emitOpError("a row space needs exactly one STATE class "
                                  "with derived bytes (its slot), found ")
                << slots.size();
    for (EntryClassOp s : slots)
      diag.attachNote(s.getLoc()) << "derived STATE class '" << s.getName()
                                  << "'";
    return diag;
  }
  ClassGroup &slot = groups[slots.front().getName()];
  if (slot.anyBytes)
    return slots.front().emitOpError("entry class '")
           << slots.front().getName()
           << "' is the row space's slot: its bytes are slot rows times "
              "the plane widths, so it takes no explicit bytes";
  for (auto &[cls, fields] : fieldsByClass)
    if (cls != slots.front().getName())
      return fields.front().emitOpError("state field '")
             << fields.front().getName() << "' names class '" << cls
             << "', but in a row space state fields live in the slot class '"
             << slots.front().getName() << "'";
  if (!pages.empty() && !groups[pages.front().getName()].derived)
    return pages.front().emitOpError("entry class '")
           << pages.front().getName()
           << "' is the row space's PAGE class: declare it with derived "
              "bytes (envelope rows times the plane widths; explicit bytes "
              "in another declaration of the same name ride along)";
  return success();
}

// Checks a model without a row space: no layers and no window fields.
LogicalResult verifyNoRowSpace(LayersOp layers, FieldsByClass &fieldsByClass) {
  if (layers)
    return layers.emitOpError("layers describe a row space, which needs "
                              "planes (pool.plane)");
  for (auto &[cls, fields] : fieldsByClass)
    for (StateFieldOp f : fields)
      if (f.getWindow())
        return f.emitOpError("window field '")
               << f.getName() << "' needs a row space (planes and layers)";
  return success();
}

// Checks each class's bytes: derived bytes need a row space or state fields,
// and explicit bytes must hold the state fields' arena.
LogicalResult verifyClassBytes(ClassGroups &groups,
                               FieldsByClass &fieldsByClass, bool rowSpace) {
  for (auto &[name, g] : groups) {
    EntryClassOp first = g.decls.front();
    auto fit = fieldsByClass.find(name);
    bool hasFields = fit != fieldsByClass.end();
    if (g.derived && first.isPage() && !rowSpace)
      return first.emitOpError("entry class '")
             << name
             << "': derived PAGE bytes come from a row space; declare planes "
                "and layers, or give the bytes explicitly";
    if (g.derived && rowSpace)
      continue; // the row space derives the slot's and the block's bytes
    if (g.derived && !hasFields)
      return first.emitOpError("entry class '")
             << name
             << "' derives its bytes from state fields, but no state field "
                "names it";
    if (!g.derived && hasFields && !rowSpace) {
      std::vector<poolrt::StateField> fields;
      for (StateFieldOp f : fit->second)
        fields.push_back(toStateField(f).value()); // op verifier passed
      auto arena = poolrt::entryBytesFor(fields);
      if (!arena)
        return first.emitOpError(arena.error().message);
      if (g.bytes < *arena)
        return first.emitOpError("entry class '")
               << name << "' declares " << g.bytes
               << " bytes, but its state fields need an arena of " << *arena
               << " bytes";
    }
  }
  return success();
}

LogicalResult verifyModel(ModelOp model) {
  ClassGroups groups;
  FieldsByClass fieldsByClass;
  collectClasses(model, groups, fieldsByClass);
  if (groups.empty())
    return model.emitOpError("model '")
           << model.getName() << "' declares no entry class";

  SmallVector<EntryClassOp> pages;
  if (failed(verifyPageClasses(model, groups, pages)))
    return failure();

  bool rowSpace = model.inRowSpace();
  LayersOp layers = model.getLayersOp();
  if (rowSpace) {
    if (failed(verifyRowSpace(model, layers, groups, fieldsByClass, pages)))
      return failure();
  } else {
    if (failed(verifyNoRowSpace(layers, fieldsByClass)))
      return failure();
  }

  return verifyClassBytes(groups, fieldsByClass, rowSpace);
}

struct PoolVerify : impl::PoolVerifyBase<PoolVerify> {
  using PoolVerifyBase::PoolVerifyBase;
  void runOnOperation() override {
    ++numModels;
    if (failed(verifyModel(getOperation())))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
} // namespace mlir::pool
