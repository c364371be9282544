//===- ArtifactWriter.h - Assemble a .poolpack from a solved module -*- C++ -*-===//
#ifndef POOL_CODEGEN_ARTIFACTWRITER_H
#define POOL_CODEGEN_ARTIFACTWRITER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"

#include "poolrt/Artifact.h"
#include "poolrt/SolvedLayout.h"

#include <string>
#include <vector>

namespace mlir::pool {

/// Build the artifact of a planned module from its solved `layout`
/// (solvedLayoutOf): the manifest (the layout report, the kernels with
/// their signatures and launch shape, one entry per target, the geometry
/// fingerprint), the address header, and one code object per target. `kernelCtx` must be able to lower kernels
/// (pool::registerKernelLowering). Returns false with `error` set.
/// `written`, when given, receives the layout exactly as the manifest
/// carries it (kernels, targets and fingerprint filled).
bool buildArtifact(ModuleOp module, MLIRContext *kernelCtx,
                   poolrt::SolvedLayout layout,
                   const std::vector<std::string> &targets,
                   poolrt::Artifact &out, std::string &error,
                   poolrt::SolvedLayout *written = nullptr);

} // namespace mlir::pool

#endif
