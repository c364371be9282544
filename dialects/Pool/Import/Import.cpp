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
  // Built through the generic (named attribute) builders, so solved
  // attributes added to the ops later never change this code.
  auto attr = [&](StringRef name, Attribute value) {
    return b.getNamedAttr(name, value);
  };
  for (const auto &f : decl.fields) {
    SmallVector<NamedAttribute> attrs{
        attr("name", b.getStringAttr(f.name)),
        attr("entry_class", b.getStringAttr(f.entryClass)),
        attr("layers", b.getI64IntegerAttr(f.layers)),
        attr("shape", b.getDenseI64ArrayAttr(f.shape)),
        attr("dtype", b.getStringAttr(canonical(f.dtype))),
        attr("fill", b.getF64FloatAttr(f.fill)),
        attr("align", b.getI64IntegerAttr(f.align)),
        attr("in_checkpoint", b.getBoolAttr(f.inCheckpoint)),
        attr("window", b.getBoolAttr(f.window))};
    StateFieldOp::create(b, loc(f.loc), TypeRange(), ValueRange(), attrs);
  }
  for (const auto &c : decl.classes) {
    SmallVector<NamedAttribute> attrs{
        attr("name", b.getStringAttr(c.name)),
        attr("pool", b.getStringAttr(c.pool)),
        attr("entries_per_req", b.getI64IntegerAttr(c.entriesPerReq)),
        attr("extra_entries", b.getI64IntegerAttr(c.extraEntries))};
    if (c.bytes)
      attrs.push_back(attr("bytes", b.getI64IntegerAttr(*c.bytes)));
    if (c.derived)
      attrs.push_back(attr("derived", b.getUnitAttr()));
    if (c.transfer) {
      auto emitErr = [&]() { return emitError(loc(c.loc)); };
      TransferAttr transfer = TransferAttr::getChecked(
          llvm::function_ref<InFlightDiagnostic()>(emitErr), ctx,
          StringRef(c.transfer->kind), c.transfer->tokens,
          StringRef(c.transfer->layoutId));
      if (!transfer)
        return nullptr;
      attrs.push_back(attr("transfer", transfer));
    }
    if (c.attention) {
      attrs.push_back(attr("attention", b.getStringAttr(c.attention->kind)));
      if (c.attention->tokens)
        attrs.push_back(attr("attention_tokens", b.getI64IntegerAttr(c.attention->tokens)));
      if (c.attention->forwardTokens)
        attrs.push_back(attr("forward_tokens", b.getI64IntegerAttr(c.attention->forwardTokens)));
      if (c.attention->cachePercent)
        attrs.push_back(attr("cache_percent", b.getI64IntegerAttr(c.attention->cachePercent)));
    }
    EntryClassOp::create(b, loc(c.loc), TypeRange(), ValueRange(), attrs);
  }
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
