//===- PoolDialect.cpp - The pool dialect ---------------------------------===//

#include "dialects/Pool/IR/PoolDialect.h"
#include "dialects/Pool/IR/PoolOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pool;

#include "dialects/Pool/IR/PoolOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Pool/IR/PoolAttrs.cpp.inc"

void PoolDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Pool/IR/PoolOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Pool/IR/PoolAttrs.cpp.inc"
      >();
}

LogicalResult
TransferAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     StringRef kind, int64_t tokens, StringRef layoutId) {
  if (kind == "none") {
    if (tokens != 0 || !layoutId.empty())
      return emitError() << "transfer \"none\" takes neither tokens nor a "
                            "layout_id";
    return success();
  }
  if (kind == "fork") {
    if (tokens < 1)
      return emitError() << "transfer \"fork\" needs tokens >= 1 (the "
                            "successor room), got "
                         << tokens;
    if (!layoutId.empty())
      return emitError() << "transfer \"fork\" takes no layout_id";
    return success();
  }
  if (kind == "copy") {
    if (layoutId.empty())
      return emitError() << "transfer \"copy\" needs a non-empty layout_id "
                            "naming the checkpoint image geometry";
    if (tokens != 0)
      return emitError() << "transfer \"copy\" takes no tokens";
    return success();
  }
  return emitError() << "unknown transfer kind \"" << kind
                     << "\" (expected \"none\", \"fork\" or \"copy\")";
}
