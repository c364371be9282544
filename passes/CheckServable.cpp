//===- CheckServable.cpp - Refuse what the runtime cannot serve -----------===//
//
// The rule lives in the layout library (poolrt/Servable.h), where the
// runtime reads it too; this pass only says where a refusal points.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/Servable.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::pool {
#define GEN_PASS_DEF_CHECKSERVABLE
#include "passes/Passes.h.inc"

namespace {

std::optional<poolrt::TransferKind> transferKindOf(TransferAttr t) {
  StringRef k = t.getKind();
  if (k == "fork")
    return poolrt::TransferKind::Fork;
  if (k == "copy")
    return poolrt::TransferKind::Copy;
  return poolrt::TransferKind::None;
}

struct CheckServablePass : impl::CheckServableBase<CheckServablePass> {
  void runOnOperation() override {
    if (failed(checkServable(getOperation()))) {
      ++numRefused;
      signalPassFailure();
    }
  }
};

} // namespace

LogicalResult checkServable(ModelOp model) {
  // A class's first declaration, and its declaration with a transfer (the
  // one a transfer refusal points at).
  llvm::MapVector<StringRef, EntryClassOp> first;
  llvm::StringMap<EntryClassOp> transferOf;
  for (Operation &op : model.getBodyBlock())
    if (auto cls = dyn_cast<EntryClassOp>(op)) {
      first.insert({cls.getName(), cls});
      if (cls.isState() && cls.getTransfer())
        transferOf.try_emplace(cls.getName(), cls);
    }
  poolrt::ServeShape shape;
  shape.model = model.getName().str();
  shape.rowSpace = model.inRowSpace();
  for (auto &[name, cls] : first) {
    poolrt::ServeShapeClass c;
    c.name = name.str();
    c.page = cls.isPage();
    c.window = cls.isWindow();
    if (auto it = transferOf.find(name); it != transferOf.end())
      c.transfer = transferKindOf(it->second.getTransferAttr());
    c.slot = cls.isState() && cls.getDerived();
    c.entriesPerReq = cls.getEntriesPerReq();
    shape.classes.push_back(std::move(c));
  }
  std::optional<poolrt::ServeRefusal> r = poolrt::checkServableShape(shape);
  if (!r)
    return success();
  auto declOf = [&](const std::string &name, bool atTransfer) -> Operation * {
    if (atTransfer)
      if (auto it = transferOf.find(name); it != transferOf.end())
        return it->second;
    auto it = first.find(name);
    return it == first.end() ? model.getOperation() : it->second.getOperation();
  };
  Operation *where = r->subject.empty() ? model.getOperation()
                                        : declOf(r->subject, r->atTransfer);
  InFlightDiagnostic diag = where->emitError(r->message);
  if (!r->noteClass.empty())
    diag.attachNote(declOf(r->noteClass, true)->getLoc()) << r->noteText;
  return diag;
}

} // namespace mlir::pool
