//===- ArtifactWriter.cpp - Assemble a .poolpack from a solved module -----===//
//
// The fingerprint is XXH64 over everything that moves bytes: the solved
// layout (the report without its provenance: source path and parameters),
// every kernel description, and every code object. Two artifacts with the
// same fingerprint place and move every byte identically, so a tier store
// can key stored state on it.
//
//===----------------------------------------------------------------------===//

#include "codegen/ArtifactWriter.h"
#include "codegen/Header.h"
#include "codegen/KernelGen.h"
#include "codegen/KernelSpec.h"
#include "codegen/Manifest.h"
#include "codegen/Report.h"
#include "passes/Passes.h"

#include "poolrt/Servable.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <xxhash.h>

using namespace mlir;
using namespace mlir::pool;
namespace json = llvm::json;

FailureOr<poolrt::Artifact>
mlir::pool::buildArtifact(ModelOp model, MLIRContext *kernelCtx,
                          poolrt::SolvedLayout layout,
                          const std::vector<std::string> &targets,
                          poolrt::SolvedLayout *written,
                          const KernelTuning &tuning) {
  poolrt::Artifact out;
  // What the runtime cannot serve is refused here, at the declaration
  // that asks for it (pool-check-servable's rule, poolrt/Servable.h).
  if (failed(checkServable(model)))
    return failure();
  // A plan of 0 PAGE blocks is a valid answer to "what does this budget
  // buy" (quirk Q3), but nothing can run on it: every request needs a
  // block, and the runtime refuses kernels whose block ids have no range.
  // Refuse the artifact here, saying what would make one.
  if (const poolrt::SolvedClass *page = layout.page(); page && page->entries < 1)
    return model.emitError("the budget buys 0 PAGE blocks (")
           << layout.unreservedBytes << " B left after the reservations, one '"
           << page->name << "' block is " << page->entryBytes
           << " B); an artifact needs at least one: raise --budget by at least "
           << (page->entryBytes - layout.unreservedBytes) << " B";
  FailureOr<std::vector<KernelSpec>> derived = deriveKernelSpecs(model);
  if (failed(derived))
    return failure();
  tuning.apply(*derived);
  const std::vector<KernelSpec> &specs = *derived;
  if (specs.empty())
    return model.emitError("the model has no kernels (is it planned?)");
  layout.kernels.clear();
  layout.targets.clear();
  for (const KernelSpec &k : specs)
    layout.kernels.push_back(kernelInfo(k));

  // The layout part of the report: everything but provenance.
  json::Object fingerprinted = *reportJson(layout).getAsObject();
  fingerprinted.erase("source");
  std::string layoutText =
      llvm::formatv("{0}", json::Value(std::move(fingerprinted)));
  std::string kernelText;
  for (const poolrt::KernelInfo &k : layout.kernels)
    kernelText += llvm::formatv("{0}", kernelJson(k)).str();

  XXH64_state_t *st = XXH64_createState();
  XXH64_reset(st, 0);
  XXH64_update(st, layoutText.data(), layoutText.size());
  XXH64_update(st, kernelText.data(), kernelText.size());

  std::vector<poolrt::ArtifactSection> code;
  for (const std::string &t : targets)
    if (!isKnownTarget(t)) {
      XXH64_freeState(st);
      return model.emitError("unknown target '")
             << t << "' (expected " << knownTargetList() << ")";
    }
  // The targets lower in parallel; the artifact takes them in order.
  FailureOr<std::vector<std::string>> lowered =
      lowerKernelsForTargets(model, kernelCtx, specs, targets, CodeFormat::Binary);
  if (failed(lowered)) {
    XXH64_freeState(st);
    return failure();
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string &t = targets[i];
    std::string bytes = std::move((*lowered)[i]);
    XXH64_update(st, t.data(), t.size());
    XXH64_update(st, bytes.data(), bytes.size());
    layout.targets.push_back(
        {t, "code/" + t, targetCodeFormat(*parseTarget(t)), int64_t(bytes.size())});
    code.push_back({"code/" + t, std::move(bytes)});
  }
  uint64_t fp = XXH64_digest(st);
  XXH64_freeState(st);
  layout.fingerprint = llvm::formatv("{0:x16}", fp).str();
  layout.blockThreads = int64_t(kBlockThreads);
  layout.headerSection = "header";

  std::string header;
  {
    llvm::raw_string_ostream os(header);
    if (failed(emitAddressHeader(model, os)))
      return failure();
  }

  std::string manifest = llvm::formatv("{0:2}", manifestJson(layout)).str();
  // The backstop: the runtime's own reader and its serve rule on the
  // solved numbers must accept what is about to be written (the check
  // above names the declarations; this catches anything it misses, so no
  // artifact the runtime refuses is ever written).
  {
    auto read = poolrt::parseManifest(manifest);
    if (!read.ok())
      return model.emitError("internal error: the runtime would refuse this "
                             "artifact's manifest: ")
             << read.error().message;
    if (poolrt::Status s = poolrt::checkServable(*read); !s.ok())
      return model.emitError("the runtime cannot run this model: ")
             << s.error().message;
  }
  out.sections.push_back({"manifest", std::move(manifest)});
  out.sections.push_back({layout.headerSection, std::move(header)});
  for (poolrt::ArtifactSection &s : code)
    out.sections.push_back(std::move(s));
  if (written)
    *written = std::move(layout);
  return out;
}
