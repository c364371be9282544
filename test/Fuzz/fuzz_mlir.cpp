//===- fuzz_mlir.cpp - libFuzzer target: the .mlir input of poolc ---------===//
//
// Any byte string is a `pool` module in textual MLIR, as `poolc X.mlir` and
// `pool-opt` read it: it is parsed, verified and run through poolc's
// pipeline at two budgets (a small one and a real one), and a module that
// plans is written as the layout report and the address header. Every
// refusal must come with an error diagnostic; nothing may crash, hang or
// touch memory it does not own (ASan, UBSan). The dialect, the verifiers,
// the passes and the writers are instrumented; libMLIR is not.
//
//===----------------------------------------------------------------------===//

#include "codegen/Header.h"
#include "codegen/Report.h"
#include "dialects/Pool/IR/PoolOps.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

MLIRContext &context() {
  static MLIRContext *ctx = [] {
    auto *c = new MLIRContext(MLIRContext::Threading::DISABLED);
    c->getOrLoadDialect<pool::PoolDialect>();
    return c;
  }();
  return *ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  bool sawError = false;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      sawError = true;
    return success();
  });
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, ParserConfig(&ctx));
  if (!module) {
    if (!sawError)
      std::abort(); // refused without saying why
    return 0;
  }
  const int64_t budgets[] = {int64_t(64) << 20, int64_t(150) << 30};
  for (int64_t budget : budgets) {
    OwningOpRef<ModuleOp> copy = module->clone();
    sawError = false;
    PassManager pm(&ctx);
    pool::PlanPoolsOptions opts;
    opts.budget = budget;
    opts.maxNumSeqs = 16;
    pool::buildPoolPipeline(pm, opts);
    if (failed(pm.run(*copy))) {
      if (!sawError)
        std::abort();
      continue;
    }
    for (pool::ModelOp model : copy->getOps<pool::ModelOp>()) {
      std::string out;
      llvm::raw_string_ostream os(out);
      FailureOr<llvm::json::Value> report = pool::buildReport(model, pool::ReportInputs{});
      if (succeeded(report))
        os << *report;
      (void)pool::emitAddressHeader(model, os);
    }
  }
  return 0;
}
