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

/// What the declaration says about the row space, gathered once. (Op
/// handles: the steps below write through them, so they take it non-const.)
struct Declared {
  LayersOp layers;
  EntryClassOp slot, page;
  SmallVector<PlaneOp> planes;
  SmallVector<int64_t> widths;
  SmallVector<StringRef> names;
  int64_t sumWidths = 0;
  int64_t ring = 0;      // sliding_window + spec_depth
  int64_t arenaRows = 0; // the slot class's state rows (pool-assign-field-planes)
  int64_t absent = 0;    // layers outside the row space (-1)
};

FailureOr<Declared> declared(ModelOp model) {
  Declared d;
  d.layers = model.getLayersOp();
  d.slot = model.getSlotClass();
  d.page = model.getPageClass();
  if (!d.layers || !d.slot || !d.page)
    return model.emitOpError("a row space needs layers, a derived PAGE class "
                             "and a derived STATE (slot) class; run pool-verify");
  d.planes = model.getPlanes();
  for (PlaneOp p : d.planes) {
    d.widths.push_back(int64_t(p.getRowBytes()));
    d.names.push_back(p.getName());
    d.sumWidths += int64_t(p.getRowBytes()); // each <= 2^20 (plane verifier)
  }
  d.ring = int64_t(model.getSlidingWindow()) + int64_t(model.getSpecDepth());
  d.arenaRows =
      d.slot.getArenaRows() ? int64_t(*d.slot.getArenaRows()) : 0;
  d.absent = llvm::count(d.layers.getRatios(), poolrt::kAbsentRatio);
  return d;
}

/// Windows carried as state fields of the slot class (the absent layers'):
/// each holds one row per ring position and reads its plane retyped to k
/// plane rows per window row. Sets `rows_per_window_row` on each and
/// returns the slot alignment, lcm(2, every k).
FailureOr<int64_t> placeWindowFields(ModelOp model, Declared &d,
                                     SmallVectorImpl<StateFieldOp> &windows) {
  Builder b(model.getContext());
  int64_t slotAlign = 2;
  for (StateFieldOp f : model.fieldsOf(d.slot.getName())) {
    if (!f.getWindow())
      continue;
    windows.push_back(f);
    auto field = toStateField(f).value();
    if (field.shape.empty() || field.shape[0] != d.ring)
      return f.emitOpError("window field '")
             << f.getName() << "' must hold one row per ring position: shape["
             << "0] is " << (field.shape.empty() ? 0 : field.shape[0])
             << ", the ring is " << d.ring << " (sliding_window + spec_depth)";
    if (f.getLayers() != uint64_t(d.absent))
      return f.emitOpError("window field '")
             << f.getName() << "' spans " << int64_t(f.getLayers())
             << " layers, but " << d.absent
             << " layers are absent (-1) from the row space";
    int64_t rowBytes = field.bytesPerEntry() / std::max<int64_t>(1, field.layers) /
                       field.shape[0];
    // Zero layers (or an empty row) would make a window row of 0 bytes and
    // a division by it below (found by fuzz-mlir).
    if (field.layers < 1 || rowBytes < 1)
      return f.emitOpError("window field '")
             << f.getName() << "' carries no window rows: " << field.layers
             << " layers of " << rowBytes
             << "-byte rows (a window field needs at least one layer, one per "
                "absent layer)";
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
  if (d.absent > 0 && windows.empty())
    return d.layers.emitOpError()
           << d.absent
           << " layers are absent (-1) from the row space, but no state "
              "field of the slot class carries their windows (window = true)";
  return slotAlign;
}

/// The one solve of the row space (poolrt::RowSpaceGeometry, no counts:
/// pool-plan-pools only splits the plane it describes), and the proof that
/// every window field has window parameters in it.
FailureOr<poolrt::RowSpaceGeometry>
solveGeometry(ModelOp model, Declared &d, int64_t slotAlign,
              ArrayRef<StateFieldOp> windows) {
  ArrayRef<int64_t> ratios = d.layers.getRatios();
  auto geo = poolrt::RowSpaceGeometry::create(
      std::vector<int64_t>(ratios.begin(), ratios.end()), 0, 0, d.ring,
      int64_t(model.getBlockSize()), std::nullopt, d.arenaRows, std::nullopt,
      slotAlign);
  if (!geo)
    return d.layers.emitOpError(geo.error().message);
  for (StateFieldOp f : windows) {
    int64_t w = int64_t(model.findPlane(*f.getPlane()).getRowBytes());
    auto params = geo->fieldWindowParams(int64_t(*f.getOffset()) / w,
                                         int64_t(*f.getRowsPerWindowRow()));
    if (!params)
      return f.emitOpError(params.error().message);
  }
  return geo.take();
}

/// Bytes: a block is its envelope in every plane, plus whatever rides the
/// block table with explicit bytes (an indexer); a slot is its rows in
/// every plane.
LogicalResult deriveEntryBytes(ModelOp model, Declared &d,
                               const poolrt::RowSpaceGeometry &geo) {
  Builder b(model.getContext());
  auto pageMain =
      poolrt::checkedMul(geo.envelopeRows(), d.sumWidths, "PAGE bytes");
  auto slotBytes = poolrt::checkedMul(geo.slotRows(), d.sumWidths, "slot bytes");
  if (!pageMain || !slotBytes)
    return model.emitOpError("row space bytes overflow 64-bit arithmetic");
  EntryClassOp page = d.page;
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
  EntryClassOp slot = d.slot;
  slot.setEntryBytesAttr(b.getI64IntegerAttr(*slotBytes));
  return success();
}

/// The checkpoint image: per plane the carried fields, then the window
/// rows some position reaches, merged where they abut. Appends one flat
/// (offset, bytes) array per plane to `ranges`; returns the image's bytes.
FailureOr<int64_t> checkpointImage(Declared &d,
                                   ArrayRef<poolrt::Run> entryRuns,
                                   SmallVectorImpl<Attribute> &ranges) {
  Builder b(d.slot.getContext());
  EntryClassOp slot = d.slot;
  int64_t imageBytes = 0;
  ArrayAttr fieldRanges = slot.getPlaneCheckpointRangesAttr();
  for (size_t p = 0; p < d.planes.size(); ++p) {
    std::vector<poolrt::Run> runs;
    if (fieldRanges) {
      ArrayRef<int64_t> flat =
          cast<DenseI64ArrayAttr>(fieldRanges[p]).asArrayRef();
      for (size_t i = 0; i + 1 < flat.size(); i += 2)
        runs.push_back({flat[i], flat[i + 1]});
    }
    for (auto [start, count] : entryRuns)
      runs.push_back(
          {(d.arenaRows + start) * d.widths[p], count * d.widths[p]});
    auto merged = poolrt::mergeAbutting(runs);
    if (!merged)
      return slot.emitOpError("checkpoint image of plane '")
             << d.names[p] << "': " << merged.error().message;
    for (auto [off, len] : merged.value())
      imageBytes += len;
    ranges.push_back(b.getDenseI64ArrayAttr(flatten(merged.value())));
  }
  return imageBytes;
}

/// Replace any earlier pool.row_space with the one solved now.
void recordRowSpace(ModelOp model, Declared &d, int64_t slotAlign,
                    const poolrt::RowSpaceGeometry &geo,
                    ArrayRef<poolrt::Run> entryRuns,
                    ArrayRef<Attribute> imageRanges, int64_t imageBytes) {
  MLIRContext *ctx = model.getContext();
  Builder b(ctx);
  SmallVector<Attribute> classes;
  for (const poolrt::ClassLayout &c : geo.classes()) {
    auto params = geo.windowParams(c.ratio).value();
    classes.push_back(RowClassAttr::get(
        ctx, c.ratio, c.layers, c.blockRows, c.ringStride, c.envelopeOffset,
        c.envelopeRows, c.entryOffset, c.entryRows, params.ringStart,
        params.runRows));
  }
  if (RowSpaceOp old = model.getRowSpace())
    old.erase();
  OpBuilder ob(ctx);
  ob.setInsertionPointToEnd(&model.getBodyBlock());
  EntryClassOp page = d.page, slot = d.slot;
  RowSpaceOp::create(
      ob, d.layers.getLoc(), b.getStringAttr(page.getName()),
      b.getStringAttr(slot.getName()), b.getI64IntegerAttr(geo.blockSize()),
      b.getI64IntegerAttr(d.ring), b.getI64IntegerAttr(d.arenaRows),
      b.getI64IntegerAttr(slotAlign), b.getI64IntegerAttr(geo.envelopeRows()),
      b.getI64IntegerAttr(geo.entryRows()), b.getI64IntegerAttr(geo.slotRows()),
      b.getDenseI64ArrayAttr(d.layers.getRatios()), b.getStrArrayAttr(d.names),
      b.getDenseI64ArrayAttr(d.widths), b.getArrayAttr(classes),
      b.getDenseI64ArrayAttr(flatten(entryRuns)), b.getArrayAttr(imageRanges),
      b.getI64IntegerAttr(imageBytes), nullptr, nullptr, nullptr, nullptr,
      nullptr, nullptr, nullptr, nullptr);
}

LogicalResult solveModel(ModelOp model, llvm::Statistic &numRowSpaces) {
  if (!model.inRowSpace())
    return success();
  FailureOr<Declared> d = declared(model);
  if (failed(d))
    return failure();
  SmallVector<StateFieldOp> windows;
  FailureOr<int64_t> slotAlign = placeWindowFields(model, *d, windows);
  if (failed(slotAlign))
    return failure();
  FailureOr<poolrt::RowSpaceGeometry> geo =
      solveGeometry(model, *d, *slotAlign, windows);
  if (failed(geo) || failed(deriveEntryBytes(model, *d, *geo)))
    return failure();
  std::vector<poolrt::Run> entryRuns = geo->entryRowRuns();
  SmallVector<Attribute> imageRanges;
  FailureOr<int64_t> imageBytes = checkpointImage(*d, entryRuns, imageRanges);
  if (failed(imageBytes))
    return failure();
  recordRowSpace(model, *d, *slotAlign, *geo, entryRuns, imageRanges,
                 *imageBytes);
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
