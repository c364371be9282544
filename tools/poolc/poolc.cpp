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

#include "poolrt/ByteSize.h"
#include "tools/lib/Driver.h"
#include "tools/lib/Output.h"
#include "codegen/ArtifactWriter.h"
#include "codegen/Header.h"
#include "codegen/KernelGen.h"
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
enum class Emit { Report, Text, Mlir, Solved, Header, Isa, Artifact };
static cl::opt<Emit> emit(
    "emit", cl::desc("what to write"), cl::init(Emit::Report),
    cl::values(clEnumValN(Emit::Report, "report", "JSON layout report (default)"),
               clEnumValN(Emit::Text, "text", "human-readable tables"),
               clEnumValN(Emit::Mlir, "mlir", "the imported pool dialect module"),
               clEnumValN(Emit::Solved, "solved", "the module after every pass"),
               clEnumValN(Emit::Header, "header", "C++/HIP/CUDA header of constants and address functions"),
               clEnumValN(Emit::Isa, "isa", "the generated kernels' assembly for --target"),
               clEnumValN(Emit::Artifact, "artifact", "a .poolpack for --targets (implied by --targets)")),
    cl::cat(poolcCat));
static cl::opt<std::string> target("target",
                                   cl::desc("target of --emit=isa: gfx942, gfx950, sm_90 or host"),
                                   cl::cat(poolcCat));
static cl::list<std::string> targets(
    "targets", cl::desc("targets of the artifact (implies --emit=artifact)"),
    cl::CommaSeparated, cl::value_desc("gfx942,gfx950,sm_90,host"),
    cl::cat(poolcCat));
static cl::opt<bool> fitAllocation(
    "fit-allocation",
    cl::desc("give up PAGE entries until the one allocation fits the budget "
             "(default: the reference's counts, which may pass it slightly)"),
    cl::init(false), cl::cat(poolcCat));
static cl::opt<bool> showRemarks("remarks",
                                 cl::desc("print the passes' remarks (addressing marks)"),
                                 cl::init(false), cl::cat(poolcCat));
static cl::opt<unsigned> gpuUnroll(
    "gpu-unroll",
    cl::desc("GPU kernels: 16-byte vectors each thread loads before it stores them, 1 to 8 "
             "(default: the compiler's choice; for measuring the kernels)"),
    cl::init(0), cl::cat(poolcCat));
static cl::opt<bool> gpuStreaming(
    "gpu-streaming",
    cl::desc("GPU kernels: read-once loads and nontemporal stores (=false: plain; "
             "default: the compiler's choice; for measuring the kernels)"),
    cl::cat(poolcCat));
static cl::opt<bool> gpuSegmentTable(
    "gpu-segment-table",
    cl::desc("kernels walk a constant table of their segments (=false: one unrolled loop "
             "per segment; default: a table from 32 segments on (V4 Pro's images); for measuring the kernels)"),
    cl::cat(poolcCat));
static cl::opt<unsigned> gpuMinBlocks(
    "gpu-min-blocks",
    cl::desc("GPU kernels: 256-thread blocks per SM (CU) the backend must leave registers for, "
             "1 to 32 (default: the backend's choice; for measuring the kernels)"),
    cl::init(0), cl::cat(poolcCat));
enum class TableWalk { Chunk, Tile, Run };
static cl::opt<TableWalk> gpuTableWalk(
    "gpu-table-walk",
    cl::desc("GPU kernels with a segment table: how a block walks the item (default: the "
             "compiler's choice; for measuring the kernels)"),
    cl::values(clEnumValN(TableWalk::Chunk, "chunk", "one contiguous chunk per block"),
               clEnumValN(TableWalk::Tile, "tile",
                          "tiles of --gpu-tile-vectors vectors dealt round the blocks"),
               clEnumValN(TableWalk::Run, "run",
                          "the same, every tile inside one segment")),
    cl::cat(poolcCat));
static cl::opt<int64_t> gpuTileVectors(
    "gpu-tile-vectors",
    cl::desc("GPU kernels walking a segment table in tiles: 16-byte vectors a tile, a "
             "multiple of 256 up to 1048576 (default: the compiler's choice; for measuring)"),
    cl::init(0), cl::cat(poolcCat));
/// The knobs given (the out-of-range unroll and min-blocks are refused in main).
static mlir::pool::KernelTuning tuning() {
  mlir::pool::KernelTuning t;
  t.unroll = gpuUnroll;
  t.minBlocks = gpuMinBlocks;
  t.tileVectors = gpuTileVectors;
  if (gpuTableWalk.getNumOccurrences())
    t.tableWalk = gpuTableWalk == TableWalk::Run ? 2 : gpuTableWalk == TableWalk::Tile ? 1 : 0;
  if (gpuStreaming.getNumOccurrences())
    t.streaming = gpuStreaming ? 1 : 0;
  if (gpuSegmentTable.getNumOccurrences())
    t.segmentTable = gpuSegmentTable ? 1 : 0;
  return t;
}
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

  if (!targets.empty() && emit.getNumOccurrences() == 0)
    emit = Emit::Artifact;
  if (emit == Emit::Artifact && targets.empty())
    return usage("--emit=artifact needs --targets=gfx942,gfx950,sm_90,host "
                 "(any subset)");
  if (emit == Emit::Artifact && outputFile == "-")
    return usage("an artifact is binary: give -o FILE.poolpack");
  if (gpuUnroll.getNumOccurrences() && (gpuUnroll < 1 || gpuUnroll > 8))
    return usage("--gpu-unroll " + std::to_string(gpuUnroll) + ": expected 1 to 8");
  if (gpuTileVectors.getNumOccurrences() &&
      (gpuTileVectors < 256 || gpuTileVectors > (1 << 20) || gpuTileVectors % 256 != 0))
    return usage("--gpu-tile-vectors " + std::to_string(gpuTileVectors) +
                 ": expected a multiple of 256 from 256 to 1048576");
  if (gpuMinBlocks.getNumOccurrences() && (gpuMinBlocks < 1 || gpuMinBlocks > 32))
    return usage("--gpu-min-blocks " + std::to_string(gpuMinBlocks) + ": expected 1 to 32");
  ::pool::CompileOptions opts;
  opts.input = inputFile;
  for (const std::string &p : params) {
    std::pair<std::string, std::string> kv;
    std::string why;
    if (!::pool::parseParamArg(p, kv, why))
      return usage("--param " + why);
    opts.params.push_back(kv);
  }

  opts.plan = emit != Emit::Mlir;
  if (opts.plan) {
    if (budgetArg.empty())
      return usage("--budget SIZE is required (e.g. --budget 150GiB)");
    std::string why;
    auto b = poolrt::parseByteSize(budgetArg, why);
    if (!b)
      return usage("--budget '" + budgetArg + "': " + why);
    opts.planPools.budget = *b;
    if (maxNumSeqs < 0)
      return usage("--max-num-seqs N (>= 0) is required");
    opts.planPools.maxNumSeqs = maxNumSeqs;
    if (ppMinBlocks.getNumOccurrences()) // a negative one is refused
      opts.planPools.ppMinBlocks = ppMinBlocks;
    opts.planPools.fitAllocation = fitAllocation;
  }

  MLIRContext ctx;
  // Diagnostics point into the model file; a dump of the module adds noise.
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &ctx);
  // Remarks (e.g. which planes need 64-bit offsets) are for --remarks.
  ctx.getDiagEngine().registerHandler([](Diagnostic &diag) {
    return success(diag.getSeverity() == DiagnosticSeverity::Remark &&
                   !showRemarks);
  });
  std::vector<std::pair<std::string, int64_t>> usedParams;
  std::vector<std::pair<std::string, std::string>> usedDtypeParams;
  OwningOpRef<ModuleOp> module =
      ::pool::compileModel(ctx, sourceMgr, opts, &usedParams, &usedDtypeParams);
  if (!module)
    return 1;
  FailureOr<mlir::pool::ModelOp> model = mlir::pool::firstModel(*module);
  if (failed(model))
    return 1;

  std::string text;
  llvm::raw_string_ostream os(text);
  if (emit == Emit::Artifact) {
    mlir::pool::ReportInputs inputs{inputFile, usedParams, ppMinBlocks, usedDtypeParams};
    auto layout = mlir::pool::solvedLayoutOf(*model, inputs);
    if (failed(layout))
      return 1;
    for (const std::string &t : targets) // a flag: said as poolc says flags
      if (!mlir::pool::isKnownTarget(t)) {
        llvm::errs() << "poolc: error: unknown target '" << t << "' (expected "
                     << mlir::pool::knownTargetList() << ")\n";
        return 1;
      }
    MLIRContext kctx;
    kctx.printOpOnDiagnostic(false);
    ::pool::registerKernelLowering(kctx);
    std::vector<std::string> ts(targets.begin(), targets.end());
    auto artifact = mlir::pool::buildArtifact(*model, &kctx, std::move(*layout), ts,
                                              nullptr, tuning());
    if (failed(artifact))
      return 1;
    poolrt::Status written = poolrt::writeArtifactFile(outputFile, *artifact);
    if (!written.ok()) {
      llvm::errs() << "poolc: error: " << written.error().message << "\n";
      return 1;
    }
    return 0;
  }
  if (emit == Emit::Isa) {
    if (!mlir::pool::isKnownTarget(target))
      return usage("--emit=isa needs --target=" +
                   std::string(mlir::pool::knownTargetList()) +
                   (target.empty() ? "" : ", got '" + target + "'"));
    MLIRContext kctx;
    kctx.printOpOnDiagnostic(false);
    ::pool::registerKernelLowering(kctx);
    auto specs = mlir::pool::deriveKernelSpecs(*model);
    if (failed(specs))
      return 1;
    tuning().apply(*specs);
    auto code = mlir::pool::lowerKernels(*model, &kctx, *specs, target,
                                         mlir::pool::CodeFormat::Assembly);
    if (failed(code))
      return 1;
    text = std::move(*code);
  } else if (emit == Emit::Header) {
    if (failed(mlir::pool::emitAddressHeader(*model, os)))
      return 1;
  } else if (emit == Emit::Mlir || emit == Emit::Solved) {
    module->print(os);
    os << "\n";
  } else {
    mlir::pool::ReportInputs inputs{inputFile, usedParams, ppMinBlocks, usedDtypeParams};
    auto layout = mlir::pool::solvedLayoutOf(*model, inputs);
    if (failed(layout))
      return 1;
    // A plan of 0 PAGE blocks is an answer (quirk Q3), but say what it
    // means: no artifact can be made of it, no request can run on it.
    if (const poolrt::SolvedClass *page = layout->page(); page && page->entries < 1)
      model->emitWarning("the budget buys 0 PAGE blocks (one '")
          << page->name << "' block is " << page->entryBytes << " B, "
          << layout->unreservedBytes
          << " B are left): no request can run on this plan";
    if (emit == Emit::Report)
      os << llvm::formatv("{0:2}", mlir::pool::reportJson(*layout)) << "\n";
    else
      mlir::pool::printTextReport(*layout, os);
  }

  if (outputFile == "-") {
    llvm::outs() << text;
    return ::pool::finishStdout("poolc");
  }
  poolrt::Status written = poolrt::writeFileAtomically(outputFile, text, "output");
  if (!written.ok()) {
    llvm::errs() << "poolc: error: " << written.error().message << "\n";
    return 1;
  }
  return 0;
}
