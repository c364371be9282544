//===- Manifest.h - The artifact manifest's JSON ----------------*- C++ -*-===//
//
// The one writer of the manifest: a SolvedLayout (with its kernels,
// targets and fingerprint filled) as the JSON the runtime's one reader
// (poolrt::parseManifest) reads back. Keys are the report schema's and
// specs/artifact-format.md's; nothing else writes them.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_CODEGEN_MANIFEST_H
#define POOL_CODEGEN_MANIFEST_H

#include "poolrt/SolvedLayout.h"

#include "llvm/Support/JSON.h"

namespace mlir::pool {

/// One kernel's manifest entry: name, argument signature, launch shape,
/// id tuple, segments.
llvm::json::Value kernelJson(const poolrt::KernelInfo &kernel);

/// The whole manifest: format, model, fingerprint, targets, kernels, the
/// header's section and the layout report.
llvm::json::Value manifestJson(const poolrt::SolvedLayout &layout);

} // namespace mlir::pool

#endif
