//===- Pipeline.cpp - The poolc pass pipeline -----------------------------===//

#include "passes/Passes.h"

void mlir::pool::buildPoolPipeline(OpPassManager &pm,
                                   const PlanOptions &options) {
  // Every pass works on one pool.model (IsolatedFromAbove): the models of a
  // module are independent.
  OpPassManager &models = pm.nest<ModelOp>();
  models.addPass(createPoolVerify());
  models.addPass(createMergeEntryClasses());
  models.addPass(createAssignFieldPlanes());
  models.addPass(createLayoutStateFields());
  models.addPass(createSolveRowSpace());
  PlanPoolsOptions plan;
  plan.budget = options.budget;
  plan.maxNumSeqs = options.maxNumSeqs;
  plan.ppMinBlocks = options.ppMinBlocks;
  plan.fitAllocation = options.fitAllocation;
  models.addPass(createPlanPools(plan));
  models.addPass(createCheckAddressing());
}
