//===- Passes.h - pool dialect passes ---------------------------*- C++ -*-===//
#ifndef POOL_PASSES_H
#define POOL_PASSES_H

#include "dialects/Pool/IR/PoolOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <limits>

namespace mlir::pool {
/// pool-plan-pools' options when not given. Only "not given" means not
/// given: a negative budget or pp-min-blocks is refused, never read as none.
constexpr int64_t kNoBudget = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoPpMinBlocks = std::numeric_limits<int64_t>::min();

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The pipeline poolc runs on every pool.model: verify, merge, lay out,
/// plan (with `options`), check addressing; and, for a model that becomes
/// an artifact (`servable`), check that the runtime can serve it.
void buildPoolPipeline(OpPassManager &pm, const PlanPoolsOptions &options,
                       bool servable = false);

/// pool-check-servable's check on one model (poolrt/Servable.h's rule),
/// emitting at the declaration it refuses. The artifact writer calls it too.
LogicalResult checkServable(ModelOp model);
} // namespace mlir::pool

#endif // POOL_PASSES_H
