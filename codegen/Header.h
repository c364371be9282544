//===- Header.h - The address header for engines' own kernels ---*- C++ -*-===//
#ifndef POOL_CODEGEN_HEADER_H
#define POOL_CODEGEN_HEADER_H

#include "dialects/Pool/IR/PoolOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::pool {
/// Write a self-contained C++ header (host C++, HIP and CUDA device code;
/// no includes) with the solved constants and the address functions of the
/// planned `model`. Fails, with the error on the model, if it is not planned.
LogicalResult emitAddressHeader(ModelOp model, llvm::raw_ostream &os);
} // namespace mlir::pool

#endif // POOL_CODEGEN_HEADER_H
