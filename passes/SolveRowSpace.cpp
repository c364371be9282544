//===- SolveRowSpace.cpp - Solve a model's row space ----------------------===//
//
// The geometry itself is poolrt::RowSpaceGeometry (one implementation for
// the compiler, the report, the header and the runtime); this pass feeds it
// the declaration, derives the PAGE and slot bytes from it, and records the
// result in a pool.row_space op.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "poolrt/Checked.h"
#include "poolrt/RowSpace.h"
#include "poolrt/Runs.h"

#include <numeric>

namespace mlir::pool {
#define GEN_PASS_DEF_SOLVEROWSPACE
#include "passes/Passes.h.inc"

namespace {

SmallVector<int64_t> flatten(ArrayRef<poolrt::Run> runs) {
  SmallVector<int64_t> flat;
  for (auto [a, n] : runs) {
    flat.push_back(a);
    flat.push_back(n);
  }
  return flat;
}

LogicalResult solveModel(ModelOp model, llvm::Statistic &numRowSpaces) {
  if (!model.inRowSpace())
    return success();
  MLIRContext *ctx = model.getContext();
  Builder b(ctx);
  LayersOp layers = model.getLayersOp();
  EntryClassOp slot = model.getSlotClass(), page = model.getPageClass();
  if (!layers || !slot || !page)
    return model.emitOpError("a row space needs layers, a derived PAGE class "
                             "and a derived STATE (slot) class; run pool-verify");
  SmallVector<PlaneOp> planes = model.getPlanes();
  SmallVector<int64_t> widths;
  SmallVector<StringRef> names;
  int64_t sumW = 0;
  for (PlaneOp p : planes) {
    widths.push_back(int64_t(p.getRowBytes()));
    names.push_back(p.getName());
    sumW += int64_t(p.getRowBytes()); // each <= 2^20 (plane verifier)
  }
  int64_t ring = int64_t(model.getSlidingWindow()) + int64_t(model.getSpecDepth());
  int64_t arenaRows = slot.getArenaRows() ? int64_t(*slot.getArenaRows()) : 0;
  ArrayRef<int64_t> ratios = layers.getRatios();
  int64_t absent = llvm::count(ratios, poolrt::kAbsentRatio);

  // Windows carried as state fields: k plane rows per window row.
  int64_t slotAlign = 2;
  SmallVector<StateFieldOp> windowFields;
  for (StateFieldOp f : model.fieldsOf(slot.getName())) {
    if (!f.getWindow())
      continue;
    windowFields.push_back(f);
    auto field = toStateField(f).value();
    if (field.shape.empty() || field.shape[0] != ring)
      return f.emitOpError("window field '")
             << f.getName() << "' must hold one row per ring position: shape["
             << "0] is " << (field.shape.empty() ? 0 : field.shape[0])
             << ", the ring is " << ring << " (sliding_window + spec_depth)";
    if (f.getLayers() != uint64_t(absent))
      return f.emitOpError("window field '")
             << f.getName() << "' spans " << int64_t(f.getLayers())
             << " layers, but " << absent
             << " layers are absent (-1) from the row space";
    int64_t rowBytes = field.bytesPerEntry() / std::max<int64_t>(1, field.layers) /
                       field.shape[0];
    PlaneOp plane = f.getPlane() ? model.findPlane(*f.getPlane()) : PlaneOp();
    if (!plane || !f.getOffset())
      return f.emitOpError("window field '")
             << f.getName()
             << "' is not placed; run pool-assign-field-planes and "
                "pool-layout-state-fields first";
    int64_t w = int64_t(plane.getRowBytes());
    if (rowBytes % w != 0)
      return f.emitOpError("window field '")
             << f.getName() << "': a window row of " << rowBytes
             << " bytes is not a whole number of rows of plane '"
             << plane.getName() << "' (" << w << " B)";
    int64_t k = rowBytes / w;
    if (int64_t(*f.getOffset()) % (k * w) != 0)
      return f.emitOpError("window field '")
             << f.getName() << "' starts at byte " << int64_t(*f.getOffset())
             << ", not on one of its own " << k * w
             << "-byte rows; give it align = " << k * w;
    f.setRowsPerWindowRowAttr(b.getI64IntegerAttr(k));
    slotAlign = std::lcm(slotAlign, k);
  }
  if (absent > 0 && windowFields.empty())
    return layers.emitOpError()
           << absent
           << " layers are absent (-1) from the row space, but no state "
              "field of the slot class carries their windows (window = true)";

  auto geo = poolrt::RowSpaceGeometry::create(
      std::vector<int64_t>(ratios.begin(), ratios.end()), 0, 0, ring,
      int64_t(model.getBlockSize()), std::nullopt, arenaRows, std::nullopt,
      slotAlign);
  if (!geo)
    return layers.emitOpError(geo.error().message);
  for (StateFieldOp f : windowFields) {
    int64_t w = int64_t(model.findPlane(*f.getPlane()).getRowBytes());
    auto params = geo->fieldWindowParams(int64_t(*f.getOffset()) / w,
                                         int64_t(*f.getRowsPerWindowRow()));
    if (!params)
      return f.emitOpError(params.error().message);
  }

  // Bytes: a block is its envelope in every plane, plus whatever rides the
  // block table with explicit bytes (an indexer); a slot is its rows in
  // every plane.
  auto pageMain = poolrt::checkedMul(geo->envelopeRows(), sumW, "PAGE bytes");
  auto slotBytes = poolrt::checkedMul(geo->slotRows(), sumW, "slot bytes");
  if (!pageMain || !slotBytes)
    return model.emitOpError("row space bytes overflow 64-bit arithmetic");
  if (page.getDerived()) {
    int64_t extra = page.getBytes() ? int64_t(*page.getBytes()) : 0;
    auto total = poolrt::checkedAdd(*pageMain, extra, "PAGE bytes");
    if (!total)
      return page.emitOpError(total.error().message);
    if (*total < 1)
      return page.emitOpError("entry class '")
             << page.getName()
             << "' derives 0 bytes: no layer keeps compressed rows in the "
                "row space and nothing rides the block table";
    page.setEntryBytesAttr(b.getI64IntegerAttr(*total));
  }
  slot.setEntryBytesAttr(b.getI64IntegerAttr(*slotBytes));

  // The checkpoint image: per plane the carried fields, then the window
  // rows some position reaches, merged where they abut.
  std::vector<poolrt::Run> entryRuns = geo->entryRowRuns();
  SmallVector<Attribute> imageRanges;
  int64_t imageBytes = 0;
  ArrayAttr fieldRanges = slot.getPlaneCheckpointRangesAttr();
  for (size_t p = 0; p < planes.size(); ++p) {
    std::vector<poolrt::Run> runs;
    if (fieldRanges) {
      ArrayRef<int64_t> flat =
          cast<DenseI64ArrayAttr>(fieldRanges[p]).asArrayRef();
      for (size_t i = 0; i + 1 < flat.size(); i += 2)
        runs.push_back({flat[i], flat[i + 1]});
    }
    for (auto [start, count] : entryRuns)
      runs.push_back({(arenaRows + start) * widths[p], count * widths[p]});
    auto merged = poolrt::mergeAbutting(runs);
    if (!merged)
      return slot.emitOpError("checkpoint image of plane '")
             << names[p] << "': " << merged.error().message;
    for (auto [off, len] : merged.value())
      imageBytes += len;
    imageRanges.push_back(b.getDenseI64ArrayAttr(flatten(merged.value())));
  }

  SmallVector<Attribute> classes;
  for (const poolrt::ClassLayout &c : geo->classes()) {
    auto params = geo->windowParams(c.ratio).value();
    classes.push_back(RowClassAttr::get(
        ctx, c.ratio, c.layers, c.blockRows, c.ringStride, c.envelopeOffset,
        c.envelopeRows, c.entryOffset, c.entryRows, params.ringStart,
        params.runRows));
  }

  if (RowSpaceOp old = model.getRowSpace())
    old.erase();
  OpBuilder ob(ctx);
  ob.setInsertionPointToEnd(&model.getBodyBlock());
  RowSpaceOp::create(
      ob, layers.getLoc(), b.getStringAttr(page.getName()),
      b.getStringAttr(slot.getName()), b.getI64IntegerAttr(geo->blockSize()),
      b.getI64IntegerAttr(ring), b.getI64IntegerAttr(arenaRows),
      b.getI64IntegerAttr(slotAlign), b.getI64IntegerAttr(geo->envelopeRows()),
      b.getI64IntegerAttr(geo->entryRows()), b.getI64IntegerAttr(geo->slotRows()),
      b.getDenseI64ArrayAttr(ratios), b.getStrArrayAttr(names),
      b.getDenseI64ArrayAttr(widths), b.getArrayAttr(classes),
      b.getDenseI64ArrayAttr(flatten(entryRuns)), b.getArrayAttr(imageRanges),
      b.getI64IntegerAttr(imageBytes), nullptr, nullptr, nullptr, nullptr,
      nullptr, nullptr, nullptr, nullptr);
  ++numRowSpaces;
  return success();
}

struct SolveRowSpace : impl::SolveRowSpaceBase<SolveRowSpace> {
  using SolveRowSpaceBase::SolveRowSpaceBase;
  void runOnOperation() override {
    if (failed(solveModel(getOperation(), numRowSpaces)))
      return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::pool
