//===- Driver.cpp - Load a model and run the poolc pipeline ---------------===//

#include "tools/lib/Driver.h"
#include "dialects/Pool/IR/PoolOps.h"
#include "dialects/Pool/Import/Import.h"
#include "dialects/Pool/Yaml/ModelDecl.h"
#include "passes/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using mlir::OwningOpRef;

namespace pool {

void registerKernelLowering(MLIRContext &ctx) {
  static bool passesRegistered = [] {
    mlir::registerAllPasses();
    return true;
  }();
  (void)passesRegistered;
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  ctx.appendDialectRegistry(registry);
}

bool parseParamArg(const std::string &arg,
                         std::pair<std::string, std::string> &out,
                         std::string &why) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    why = "expects NAME=VALUE, got '" + arg + "'";
    return false;
  }
  if (eq + 1 == arg.size()) {
    why = arg.substr(0, eq) + ": expects a value after '='";
    return false;
  }
  out = {arg.substr(0, eq), arg.substr(eq + 1)};
  return true;
}

OwningOpRef<ModuleOp> compileModel(MLIRContext &ctx, llvm::SourceMgr &sourceMgr,
                   const CompileOptions &opts,
                   std::vector<std::pair<std::string, int64_t>> *usedParams,
                   std::vector<std::pair<std::string, std::string>> *usedDtypeParams) {
  ctx.getOrLoadDialect<mlir::pool::PoolDialect>();
  auto report = [&](const std::string &msg) {
    if (opts.onError)
      opts.onError(msg);
    else
      llvm::errs() << msg << "\n";
  };
  std::string err;
  auto buf = openInputFile(opts.input, &err);
  if (!buf) {
    report(opts.input + ": error: " + err);
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buf), llvm::SMLoc());

  OwningOpRef<ModuleOp> module;
  if (llvm::StringRef(opts.input).ends_with(".mlir")) {
    if (!opts.params.empty()) {
      report(opts.input + ": error: --param applies to YAML models only");
      return nullptr;
    }
    module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  } else {
    ::pool::yaml::ModelDecl decl;
    ::pool::yaml::YamlError yerr;
    if (!::pool::yaml::loadModelYaml(opts.input, opts.params, decl, yerr)) {
      report(yerr.str());
      return nullptr;
    }
    if (usedParams)
      *usedParams = decl.params;
    if (usedDtypeParams)
      *usedDtypeParams = decl.dtypeParams;
    module = mlir::pool::importModelDecl(&ctx, decl);
  }
  if (!module)
    return nullptr;
  if (!opts.plan) {
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }
  PassManager pm(&ctx);
  mlir::pool::buildPoolPipeline(pm, opts.planPools);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

} // namespace pool
