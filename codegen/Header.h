//===- Header.h - The address header for engines' own kernels ---*- C++ -*-===//
#ifndef POOL_CODEGEN_HEADER_H
#define POOL_CODEGEN_HEADER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::pool {
/// Write a self-contained C++ header (host C++, HIP and CUDA device code;
/// no includes) with the solved constants and the address functions of the
/// first planned pool.model in `module`. Returns false with `error` set if
/// the module is not planned.
bool emitAddressHeader(ModuleOp module, llvm::raw_ostream &os,
                       std::string &error);
} // namespace mlir::pool

#endif // POOL_CODEGEN_HEADER_H
