//===- poolc.cpp - The poolc ahead-of-time driver -------------------------===//
//
//   poolc MODEL.yaml --budget SIZE --max-num-seqs N [--emit=report|text|mlir|solved]
//         [--pp-min-blocks N] [--param NAME=VALUE ...] [-o FILE]
//
// Reads a model (YAML, or a pool-dialect .mlir file), runs verify, merge,
// layout and plan, and writes the chosen view. Output is written atomically
// (a temporary file renamed into place) and only on success: a failed run
// never leaves a partial file or clobbers a good one.
//
//===----------------------------------------------------------------------===//

#include "SizeArg.h"
#include "codegen/Report.h"
#include "dialects/Pool/IR/PoolOps.h"
#include "dialects/Pool/Import/Import.h"
#include "passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory poolcCat("poolc options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.yaml|model.mlir>"),
                                      cl::Required, cl::cat(poolcCat));
static cl::opt<std::string> budgetArg("budget",
                                      cl::desc("bytes available to the pools (e.g. 150GiB)"),
                                      cl::value_desc("SIZE"), cl::cat(poolcCat));
static cl::opt<int64_t> maxNumSeqs("max-num-seqs", cl::desc("requests in flight at once"),
                                   cl::init(-1), cl::cat(poolcCat));
static cl::opt<int64_t> ppMinBlocks("pp-min-blocks",
                                    cl::desc("minimum PAGE block count over pipeline stages"),
                                    cl::init(-1), cl::cat(poolcCat));
static cl::list<std::string> params("param", cl::desc("override a model parameter"),
                                    cl::value_desc("NAME=VALUE"), cl::cat(poolcCat));
enum class Emit { Report, Text, Mlir, Solved };
static cl::opt<Emit> emit(
    "emit", cl::desc("what to write"), cl::init(Emit::Report),
    cl::values(clEnumValN(Emit::Report, "report", "JSON layout report (default)"),
               clEnumValN(Emit::Text, "text", "human-readable tables"),
               clEnumValN(Emit::Mlir, "mlir", "the imported pool dialect module"),
               clEnumValN(Emit::Solved, "solved", "the module after every pass")),
    cl::cat(poolcCat));
static cl::opt<bool> showRemarks("remarks",
                                 cl::desc("print the passes' remarks (addressing marks)"),
                                 cl::init(false), cl::cat(poolcCat));
static cl::opt<std::string> outputFile("o", cl::desc("output file (default: stdout)"),
                                       cl::value_desc("FILE"), cl::init("-"),
                                       cl::cat(poolcCat));

static int usage(const std::string &msg) {
  llvm::errs() << "poolc: error: " << msg << "\n";
  return 2;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(poolcCat);
  cl::ParseCommandLineOptions(argc, argv, "poolc: compile a model's cache layout\n");

  std::vector<std::pair<std::string, int64_t>> overrides;
  for (const std::string &p : params) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      return usage("--param expects NAME=VALUE, got '" + p + "'");
    std::string value = p.substr(eq + 1);
    int64_t v;
    std::string why;
    if (!::pool::yaml::evalIntExpr(value, {}, v, why))
      return usage("--param " + p.substr(0, eq) + ": " + why);
    overrides.push_back({p.substr(0, eq), v});
  }

  bool plan = emit != Emit::Mlir;
  int64_t budget = -1;
  if (plan) {
    if (budgetArg.empty())
      return usage("--budget SIZE is required (e.g. --budget 150GiB)");
    std::string why;
    auto b = ::pool::parseByteSize(budgetArg, why);
    if (!b)
      return usage("--budget '" + budgetArg + "': " + why);
    budget = *b;
    if (maxNumSeqs < 0)
      return usage("--max-num-seqs N (>= 0) is required");
  }

  MLIRContext ctx;
  ctx.getOrLoadDialect<mlir::pool::PoolDialect>();
  // Diagnostics point into the model file; a dump of the module adds noise.
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &ctx);
  // Remarks (e.g. which planes need 64-bit offsets) are for --remarks.
  ctx.getDiagEngine().registerHandler([](Diagnostic &diag) {
    return success(diag.getSeverity() == DiagnosticSeverity::Remark &&
                   !showRemarks);
  });
  {
    std::string err;
    auto buf = mlir::openInputFile(inputFile, &err);
    if (!buf) {
      llvm::errs() << inputFile << ": error: " << err << "\n";
      return 1;
    }
    sourceMgr.AddNewSourceBuffer(std::move(buf), llvm::SMLoc());
  }

  OwningOpRef<ModuleOp> module;
  std::vector<std::pair<std::string, int64_t>> usedParams;
  if (llvm::StringRef(inputFile).ends_with(".mlir")) {
    if (!overrides.empty())
      return usage("--param applies to YAML models only");
    module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  } else {
    ::pool::yaml::ModelDecl decl;
    ::pool::yaml::YamlError err;
    if (!::pool::yaml::loadModelYaml(inputFile, overrides, decl, err)) {
      llvm::errs() << err.str() << "\n";
      return 1;
    }
    usedParams = decl.params;
    module = mlir::pool::importModelDecl(&ctx, decl);
  }
  if (!module)
    return 1;

  if (plan) {
    PassManager pm(&ctx);
    mlir::pool::PlanOptions opts;
    opts.budget = budget;
    opts.maxNumSeqs = maxNumSeqs;
    opts.ppMinBlocks = ppMinBlocks;
    mlir::pool::buildPoolPipeline(pm, opts);
    if (failed(pm.run(*module)))
      return 1;
  } else if (failed(verify(*module))) {
    return 1;
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  if (emit == Emit::Mlir || emit == Emit::Solved) {
    module->print(os);
    os << "\n";
  } else {
    mlir::pool::ReportInputs inputs{inputFile, usedParams, ppMinBlocks};
    std::string error;
    llvm::json::Value report = mlir::pool::buildReport(*module, inputs, error);
    if (!error.empty()) {
      llvm::errs() << "poolc: error: " << error << "\n";
      return 1;
    }
    if (emit == Emit::Report)
      os << llvm::formatv("{0:2}", report) << "\n";
    else
      mlir::pool::printTextReport(report, os);
  }

  if (outputFile == "-") {
    llvm::outs() << text;
    return 0;
  }
  if (llvm::Error e = llvm::writeToOutput(outputFile, [&](llvm::raw_ostream &out) {
        out << text;
        return llvm::Error::success();
      })) {
    llvm::errs() << outputFile << ": error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}
