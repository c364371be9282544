//===- Pipeline.cpp - The poolc pass pipeline -----------------------------===//

#include "passes/Passes.h"

void mlir::pool::buildPoolPipeline(OpPassManager &pm,
                                   const PlanPoolsOptions &options,
                                   bool servable) {
  // Every pass works on one pool.model (IsolatedFromAbove): the models of a
  // module are independent.
  OpPassManager &models = pm.nest<ModelOp>();
  models.addPass(createPoolVerify());
  models.addPass(createMergeEntryClasses());
  models.addPass(createAssignFieldPlanes());
  models.addPass(createLayoutStateFields());
  models.addPass(createSolveRowSpace());
  models.addPass(createPlanPools(options));
  models.addPass(createCheckAddressing());
  if (servable)
    models.addPass(createCheckServable());
}
