//===- PoolOps.h - pool dialect operations ----------------------*- C++ -*-===//
#ifndef POOL_OPS_H
#define POOL_OPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/Pool/IR/PoolDialect.h"
#include "poolrt/StateArena.h"

#define GET_ATTRDEF_CLASSES
#include "dialects/Pool/IR/PoolAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Pool/IR/PoolOps.h.inc"

namespace mlir::pool {
/// Compress ratios a layer may declare.
constexpr int64_t kDenseRatio = 0, kCsaRatio = 4, kHcaRatio = 128,
                  kAbsentRatio = -1;
bool isKnownRatio(int64_t ratio);
/// The model codegen reads: the first pool.model of `module` (poolc compiles
/// one model per module); an error on the module when there is none.
FailureOr<ModelOp> firstModel(ModuleOp module);
/// The layout library's view of a declared field (validated there).
poolrt::Result<poolrt::StateField> toStateField(StateFieldOp op);
} // namespace mlir::pool

#endif // POOL_OPS_H
