//===- Import.cpp - Build the pool dialect from a model declaration -------===//

#include "dialects/Pool/Import/Import.h"
#include "dialects/Pool/IR/PoolOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::pool;

OwningOpRef<ModuleOp>
mlir::pool::importModelDecl(MLIRContext *ctx,
                            const ::pool::yaml::ModelDecl &decl) {
  ctx->getOrLoadDialect<PoolDialect>();
  OpBuilder b(ctx);
  // One vocabulary: aliases ("fp8", "float32") become canonical names.
  auto canonical = [](const std::string &dtype) -> std::string {
    auto t = poolrt::parseDType(dtype);
    return t ? poolrt::dtypeName(*t) : dtype;
  };
  auto loc = [&](const ::pool::yaml::SrcLoc &l) -> Location {
    return FileLineColLoc::get(ctx, decl.file, l.line, l.col);
  };
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc(decl.loc));
  b.setInsertionPointToEnd(module->getBody());
  auto model = ModelOp::create(
      b, loc(decl.loc), b.getStringAttr(decl.name),
      b.getI64IntegerAttr(decl.blockSize), b.getI64IntegerAttr(decl.hashBlockSize),
      b.getI64IntegerAttr(decl.slidingWindow), b.getI64IntegerAttr(decl.specDepth),
      /*budget=*/nullptr, /*max_num_seqs=*/nullptr,
      /*total_reserved_bytes=*/nullptr, /*allocation_bytes=*/nullptr);
  Block *body = b.createBlock(&model.getBody());
  b.setInsertionPointToEnd(body);

  for (const auto &p : decl.planes)
    PlaneOp::create(b, loc(p.loc), p.name, p.rowBytes, canonical(p.dtype));
  if (decl.layers)
    LayersOp::create(b, loc(decl.layersLoc), *decl.layers);
  for (const auto &f : decl.fields) {
    auto op = StateFieldOp::create(
        b, loc(f.loc), b.getStringAttr(f.name), b.getStringAttr(f.entryClass),
        b.getI64IntegerAttr(f.layers), b.getDenseI64ArrayAttr(f.shape),
        b.getStringAttr(canonical(f.dtype)), b.getF64FloatAttr(f.fill),
        b.getI64IntegerAttr(f.align), b.getBoolAttr(f.inCheckpoint),
        /*offset=*/nullptr, /*end=*/nullptr);
    (void)op;
  }
  for (const auto &c : decl.classes) {
    TransferAttr transfer;
    auto emitErr = [&]() { return emitError(loc(c.loc)); };
    if (c.transfer)
      transfer = TransferAttr::getChecked(
          llvm::function_ref<InFlightDiagnostic()>(emitErr), ctx,
          StringRef(c.transfer->kind), c.transfer->tokens,
          StringRef(c.transfer->layoutId));
    if (c.transfer && !transfer)
      return nullptr;
    EntryClassOp::create(
        b, loc(c.loc), b.getStringAttr(c.name), b.getStringAttr(c.pool),
        c.bytes ? b.getI64IntegerAttr(*c.bytes) : IntegerAttr(),
        c.derived ? b.getUnitAttr() : UnitAttr(),
        b.getI64IntegerAttr(c.entriesPerReq), b.getI64IntegerAttr(c.extraEntries),
        transfer, /*arena_bytes=*/nullptr, /*entry_bytes=*/nullptr,
        /*checkpoint_ranges=*/nullptr, /*entries=*/nullptr,
        /*reserved_bytes=*/nullptr, /*region_offset=*/nullptr);
  }
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
