//===- Import.h - Build the pool dialect from a model declaration -*- C++ -*-===//
#ifndef POOL_IMPORT_IMPORT_H
#define POOL_IMPORT_IMPORT_H

#include "dialects/Pool/Yaml/ModelDecl.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::pool {
/// Build a module holding one pool.model from `decl`; every op carries the
/// file:line:col of its YAML item. The module is verified: on failure the
/// diagnostics were emitted (at those locations) and null is returned.
OwningOpRef<ModuleOp> importModelDecl(MLIRContext *ctx,
                                      const ::pool::yaml::ModelDecl &decl);
} // namespace mlir::pool

#endif // POOL_IMPORT_IMPORT_H
