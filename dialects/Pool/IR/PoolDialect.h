//===- PoolDialect.h - The pool dialect -------------------------*- C++ -*-===//
#ifndef POOL_DIALECT_H
#define POOL_DIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Pool/IR/PoolOpsDialect.h.inc"

#endif // POOL_DIALECT_H
