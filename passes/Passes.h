//===- Passes.h - pool dialect passes ---------------------------*- C++ -*-===//
#ifndef POOL_PASSES_H
#define POOL_PASSES_H

#include "dialects/Pool/IR/PoolOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::pool {
#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

struct PlanOptions {
  int64_t budget = -1;
  int64_t maxNumSeqs = -1;
  int64_t ppMinBlocks = -1;
  bool fitAllocation = false;
};

/// The pipeline poolc runs: verify, merge, lay out, plan.
void buildPoolPipeline(OpPassManager &pm, const PlanOptions &options);
} // namespace mlir::pool

#endif // POOL_PASSES_H
