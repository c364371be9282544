//===- Pipeline.cpp - The poolc pass pipeline -----------------------------===//

#include "passes/Passes.h"

void mlir::pool::buildPoolPipeline(OpPassManager &pm,
                                   const PlanOptions &options) {
  pm.addPass(createPoolVerify());
  pm.addPass(createMergeEntryClasses());
  pm.addPass(createAssignFieldPlanes());
  pm.addPass(createLayoutStateFields());
  pm.addPass(createSolveRowSpace());
  PlanPoolsOptions plan;
  plan.budget = options.budget;
  plan.maxNumSeqs = options.maxNumSeqs;
  plan.ppMinBlocks = options.ppMinBlocks;
  plan.fitAllocation = options.fitAllocation;
  pm.addPass(createPlanPools(plan));
  pm.addPass(createCheckAddressing());
}
