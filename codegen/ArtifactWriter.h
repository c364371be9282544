//===- ArtifactWriter.h - Assemble a .poolpack from a solved module -*- C++ -*-===//
#ifndef POOL_CODEGEN_ARTIFACTWRITER_H
#define POOL_CODEGEN_ARTIFACTWRITER_H

#include "codegen/KernelSpec.h"
#include "dialects/Pool/IR/PoolOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"

#include "poolrt/Artifact.h"
#include "poolrt/SolvedLayout.h"

#include <string>
#include <vector>

namespace mlir::pool {

/// Build the artifact of a planned model from its solved `layout`
/// (solvedLayoutOf): the manifest (the layout report, the kernels with
/// their signatures and launch shape, one entry per target, the geometry
/// fingerprint), the address header, and one code object per target.
/// `kernelCtx` must be able to lower kernels (pool::registerKernelLowering).
/// Fails with the error on the model. `written`, when given, receives the
/// layout exactly as the manifest carries it (kernels, targets and
/// fingerprint filled). `tuning` is poolc's
/// --gpu-unroll / --gpu-streaming.
FailureOr<poolrt::Artifact>
buildArtifact(ModelOp model, MLIRContext *kernelCtx, poolrt::SolvedLayout layout,
              const std::vector<std::string> &targets,
              poolrt::SolvedLayout *written = nullptr,
              const KernelTuning &tuning = {});

} // namespace mlir::pool

#endif
