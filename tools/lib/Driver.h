//===- Driver.h - Load a model and run the poolc pipeline -------*- C++ -*-===//
#ifndef POOL_TOOLS_DRIVER_H
#define POOL_TOOLS_DRIVER_H

#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace pool {

struct CompileOptions {
  std::string input; // .yaml, or .mlir holding pool dialect
  /// --param NAME=TEXT, YAML only: an integer expression, or a dtype
  /// name for a dtype parameter.
  std::vector<std::pair<std::string, std::string>> params;
  bool plan = true; // false: import and verify only
  /// pool-plan-pools' options: the budget is required (the pass refuses
  /// kNoBudget), pp-min-blocks only when given.
  mlir::pool::PlanPoolsOptions planPools;
  /// Where errors found before the IR exists go (YAML, files, --param);
  /// the rest are MLIR diagnostics. Default: stderr.
  std::function<void(const std::string &)> onError;
};

/// Load `opts.input` into `ctx` (diagnostics go to the context's handlers;
/// the file is added to `sourceMgr`) and run verify, merge, plane split,
/// layout, row space, plan and addressing checks. Returns null on any error
/// (already reported). `usedParams` receives the model's parameters after
/// overrides (YAML only), `usedDtypeParams` its dtype parameters.
mlir::OwningOpRef<mlir::ModuleOp>
compileModel(mlir::MLIRContext &ctx, llvm::SourceMgr &sourceMgr,
             const CompileOptions &opts,
             std::vector<std::pair<std::string, int64_t>> *usedParams = nullptr,
             std::vector<std::pair<std::string, std::string>> *usedDtypeParams = nullptr);

/// Make `ctx` able to lower kernels for every target (GPU dialects, the
/// NVVM/ROCDL target attributes, LLVM IR translation) and register the
/// upstream passes the lowering pipelines name. Idempotent.
void registerKernelLowering(mlir::MLIRContext &ctx);

/// Split "NAME=VALUE" (the model reader evaluates VALUE: an integer
/// expression, or a dtype name for a dtype parameter); false + `why`.
bool parseParamArg(const std::string &arg, std::pair<std::string, std::string> &out,
                   std::string &why);

} // namespace pool

#endif // POOL_TOOLS_DRIVER_H
