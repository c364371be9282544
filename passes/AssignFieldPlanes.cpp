//===- AssignFieldPlanes.cpp - State fields across row-space planes -------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/StateArena.h"

#include <algorithm>

namespace mlir::pool {
#define GEN_PASS_DEF_ASSIGNFIELDPLANES
#include "passes/Passes.h.inc"

namespace {

LogicalResult assignModel(ModelOp model, llvm::Statistic &numAssignments) {
  if (!model.inRowSpace())
    return success();
  SmallVector<PlaneOp> planes = model.getPlanes();
  EntryClassOp slot = model.getSlotClass();
  if (!slot)
    return success(); // pool-verify reports a row space without a slot class
  SmallVector<StateFieldOp> ops = model.fieldsOf(slot.getName());
  std::vector<poolrt::StateField> fields;
  for (StateFieldOp f : ops) {
    auto field = toStateField(f);
    if (!field)
      return f.emitOpError(field.error().message);
    fields.push_back(field.value());
  }
  std::vector<int64_t> widths;
  for (PlaneOp p : planes)
    widths.push_back(int64_t(p.getRowBytes()));
  // A window carried as a field reads its plane retyped to whole window
  // rows: only planes whose width divides the window row can hold it.
  std::vector<std::vector<bool>> allowed(fields.size(),
                                         std::vector<bool>(widths.size(), true));
  bool constrained = false;
  for (size_t k = 0; k < fields.size(); ++k) {
    if (!ops[k].getWindow() || fields[k].shape.empty() || fields[k].layers == 0)
      continue;
    int64_t rowBytes =
        fields[k].bytesPerEntry() / fields[k].layers / std::max<int64_t>(1, fields[k].shape[0]);
    for (size_t p = 0; p < widths.size(); ++p)
      if (rowBytes == 0 || rowBytes % widths[p] != 0) {
        allowed[k][p] = false;
        constrained = true;
      }
    if (llvm::none_of(allowed[k], [](bool b) { return b; }))
      return ops[k].emitOpError("window field '")
             << ops[k].getName() << "': a window row of " << rowBytes
             << " bytes is not a whole number of rows of any plane";
  }
  auto split = poolrt::planFieldPlanes(fields, widths,
                                       constrained ? &allowed : nullptr);
  if (!split)
    return slot.emitOpError("entry class '")
           << slot.getName() << "': " << split.error().message
           << "; declare fewer fields (merge fields that always travel "
              "together) or fewer planes";
  int64_t count = 1;
  for (size_t k = 0; k < fields.size(); ++k)
    count *= int64_t(planes.size());
  numAssignments += count;

  Builder b(model.getContext());
  SmallVector<int64_t> slack;
  for (size_t p = 0; p < planes.size(); ++p) {
    std::vector<poolrt::StateField> group;
    for (size_t k : split->groups[p]) {
      ops[k].setPlaneAttr(b.getStringAttr(planes[p].getName()));
      group.push_back(fields[k]);
    }
    int64_t bytes = poolrt::entryBytesFor(group).value(); // checked above
    slack.push_back(split->rows * widths[p] - bytes);
  }
  slot.setArenaRowsAttr(b.getI64IntegerAttr(split->rows));
  slot.setPlaneSlackBytesAttr(b.getDenseI64ArrayAttr(slack));
  return success();
}

struct AssignFieldPlanes : impl::AssignFieldPlanesBase<AssignFieldPlanes> {
  using AssignFieldPlanesBase::AssignFieldPlanesBase;
  void runOnOperation() override {
    if (failed(assignModel(getOperation(), numAssignments)))
      return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
