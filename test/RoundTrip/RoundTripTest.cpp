//===- RoundTripTest.cpp - Compiler layout vs. what the runtime reads -----===//
//
// For every bundled model (and a few plans of each), the SolvedLayout the
// compiler filled from the IR is written as a report and as an artifact,
// read back by the runtime's one reader, and compared member by member.
// A report and a manifest therefore cannot drift from each other or from
// the compiler.
//
//===----------------------------------------------------------------------===//

#include "codegen/ArtifactWriter.h"
#include "codegen/Manifest.h"
#include "codegen/Report.h"
#include "tools/lib/Driver.h"

#include "poolrt/SolvedLayout.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;

namespace {

std::vector<std::string> bundledModels() {
  std::vector<std::string> out;
  if (DIR *d = opendir(POOLC_MODELS_DIR)) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.substr(n.size() - 5) == ".yaml")
        out.push_back(std::string(POOLC_MODELS_DIR) + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Plan {
  int64_t budget;
  int64_t seqs;
  int64_t ppMinBlocks = -1;
  bool fit = false;
};

/// Compiles `path` at `plan` and returns the compiler's layout with the
/// manifest members filled (kernels for the host target), plus the
/// artifact. Fails the test on any error.
struct Compiled {
  poolrt::SolvedLayout layout; // as the compiler wrote it
  poolrt::Artifact artifact;
};

bool compile(const std::string &path, const Plan &plan, Compiled &out) {
  MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sm;
  std::string firstError;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
      firstError = d.str();
    return success();
  });
  ::pool::CompileOptions opts;
  opts.input = path;
  opts.planPools.budget = plan.budget;
  opts.planPools.maxNumSeqs = plan.seqs;
  if (plan.ppMinBlocks >= 0)
    opts.planPools.ppMinBlocks = plan.ppMinBlocks;
  opts.planPools.fitAllocation = plan.fit;
  opts.onError = [&](const std::string &m) { firstError = m; };
  std::vector<std::pair<std::string, int64_t>> used;
  auto module = ::pool::compileModel(ctx, sm, opts, &used);
  if (!module) {
    ADD_FAILURE() << path << ": " << firstError;
    return false;
  }
  FailureOr<mlir::pool::ModelOp> model = mlir::pool::firstModel(*module);
  if (failed(model)) {
    ADD_FAILURE() << path << ": " << firstError;
    return false;
  }
  auto layout =
      mlir::pool::solvedLayoutOf(*model, {path, used, plan.ppMinBlocks});
  if (failed(layout)) {
    ADD_FAILURE() << path << ": " << firstError;
    return false;
  }
  MLIRContext kctx;
  kctx.printOpOnDiagnostic(false);
  ::pool::registerKernelLowering(kctx);
  auto artifact =
      mlir::pool::buildArtifact(*model, &kctx, *layout, {"host"}, &out.layout);
  if (failed(artifact)) {
    ADD_FAILURE() << path << ": " << firstError;
    return false;
  }
  out.artifact = std::move(*artifact);
  return true;
}

std::string reportText(const poolrt::SolvedLayout &L) {
  return llvm::formatv("{0:2}", mlir::pool::reportJson(L)).str();
}

/// The layout without what only a manifest carries.
poolrt::SolvedLayout reportPart(poolrt::SolvedLayout L) {
  L.fingerprint.clear();
  L.blockThreads = 0;
  L.targets.clear();
  L.kernels.clear();
  L.headerSection.clear();
  return L;
}

constexpr int64_t GiB = int64_t(1) << 30;

} // namespace

TEST(RoundTrip, EveryBundledModelReadsBackAsTheCompilerWroteIt) {
  std::vector<std::string> models = bundledModels();
  ASSERT_GE(models.size(), 10u) << "models/ not found at " POOLC_MODELS_DIR;
  const Plan plans[] = {{150 * GiB, 256}, {24 * GiB, 16},
                        {24 * GiB, 16, 1000}, {24 * GiB, 16, -1, true}};
  int checked = 0;
  for (const std::string &m : models)
    for (Plan plan : plans) {
      // Gemma 3's window reserves (129 blocks of 6.8 MB per sequence) pass
      // 150 GiB at 256 sequences (refused, models.test): 64 there.
      if (m.find("gemma-3") != std::string::npos && plan.seqs == 256)
        plan.seqs = 64;
      // Llama 4's chunked reserves (641 blocks of 2.4 MB): 32 and 8.
      if (m.find("llama-4") != std::string::npos)
        plan.seqs = plan.seqs == 256 ? 32 : 8;
      SCOPED_TRACE(m + " at " + std::to_string(plan.budget) + " B, " +
                   std::to_string(plan.seqs) + " seqs");
      Compiled c;
      if (!compile(m, plan, c))
        continue;
      ASSERT_FALSE(c.layout.kernels.empty());
      ASSERT_EQ(c.layout.targets.size(), 1u);

      // The artifact, through the runtime's one reader.
      auto fromArtifact = poolrt::readSolvedLayout(c.artifact);
      ASSERT_TRUE(fromArtifact.ok()) << fromArtifact.error().message;
      EXPECT_EQ(poolrt::firstDifference(c.layout, *fromArtifact), "");
      EXPECT_TRUE(c.layout == *fromArtifact);

      // The header carries the layout fingerprint the runtime recomputes
      // from the manifest it read (a kernel built on the header is matched
      // with its artifact by it); the report, without kernels, has the same.
      uint64_t fp = poolrt::layoutFingerprint(*fromArtifact);
      const poolrt::ArtifactSection *header = c.artifact.find("header");
      ASSERT_NE(header, nullptr);
      EXPECT_NE(header->data.find("kLayoutFingerprint = " +
                                  poolrt::layoutFingerprintText(fp) + "ULL;"),
                std::string::npos)
          << poolrt::layoutFingerprintText(fp);
      EXPECT_EQ(poolrt::layoutFingerprint(reportPart(c.layout)), fp);

      // The report, through the same reader.
      auto fromReport = poolrt::parseReport(reportText(c.layout));
      ASSERT_TRUE(fromReport.ok()) << fromReport.error().message;
      EXPECT_EQ(poolrt::firstDifference(reportPart(c.layout), *fromReport), "");

      // The manifest's layout and the report are one serialisation.
      const poolrt::ArtifactSection *manifest = c.artifact.find("manifest");
      ASSERT_NE(manifest, nullptr);
      auto reparsed = poolrt::parseManifest(manifest->data);
      ASSERT_TRUE(reparsed.ok());
      EXPECT_EQ(reportText(*reparsed), reportText(c.layout));
      ++checked;
    }
  EXPECT_EQ(checked, int(models.size()) * 4);
}

TEST(RoundTrip, TheComparisonNamesTheMemberThatDiffers) {
  Compiled c;
  ASSERT_TRUE(compile(std::string(POOLC_MODELS_DIR) + "/deepseek-v4-flash-fp8.yaml",
                      {150 * GiB, 256}, c));
  poolrt::SolvedLayout other = c.layout;
  ASSERT_TRUE(other.rowSpace.has_value());
  ASSERT_GE(other.rowSpace->planes.size(), 2u);
  *other.rowSpace->planes[1].offset += 256;
  EXPECT_EQ(poolrt::firstDifference(c.layout, other).substr(0, 24),
            "row_space.planes[1].offs");
  EXPECT_FALSE(c.layout == other);

  other = c.layout;
  other.kernels[0].segments[0].dstStride += 16;
  EXPECT_EQ(poolrt::firstDifference(c.layout, other).rfind(
                "kernels[0].segments[0].dst_stride", 0),
            0u);

  other = c.layout;
  other.classes[0].transfer = poolrt::SolvedTransfer{};
  EXPECT_NE(poolrt::firstDifference(c.layout, other), "");
}

TEST(RoundTrip, TheLayoutFingerprintSeesEveryPlacementAndNothingElse) {
  Compiled c;
  ASSERT_TRUE(compile(std::string(POOLC_MODELS_DIR) + "/deepseek-v4-flash-fp8.yaml",
                      {150 * GiB, 256}, c));
  const uint64_t fp = poolrt::layoutFingerprint(c.layout);
  // Computed once by the compiler, carried by the layout it wrote.
  EXPECT_EQ(c.layout.layoutFingerprint, fp);
  auto changes = [&](auto edit) {
    poolrt::SolvedLayout other = c.layout;
    edit(other);
    return poolrt::layoutFingerprint(other) != fp;
  };
  // What places a byte changes it, at every depth of the walk.
  EXPECT_TRUE(changes([](auto &L) { *L.rowSpace->planes[1].offset += 256; }));
  EXPECT_TRUE(changes([](auto &L) { L.arenas[0].fields[0].offset += 16; }));
  EXPECT_TRUE(changes([](auto &L) { L.classes[0].entries -= 1; }));
  EXPECT_TRUE(changes([](auto &L) { L.rowSpace->classes[0].window.ringStart += 1; }));
  EXPECT_TRUE(changes([](auto &L) { L.rowSpace->numSlots.reset(); }));
  EXPECT_TRUE(changes([](auto &L) { L.arenas[0].fields[0].fill = -L.arenas[0].fields[0].fill - 1; }));
  EXPECT_TRUE(changes([](auto &L) { L.arenas[0].fields.pop_back(); }));
  EXPECT_TRUE(changes([](auto &L) { L.model += "x"; }));
  // Lengths are hashed: moving an element between adjacent lists changes it.
  EXPECT_TRUE(changes([](auto &L) {
    L.rowSpace->classes[0].layers.push_back(L.rowSpace->classes[1].layers.front());
    L.rowSpace->classes[1].layers.erase(L.rowSpace->classes[1].layers.begin());
  }));
  // Provenance, inputs and what only an artifact adds do not.
  EXPECT_FALSE(changes([](auto &L) { L.source = "/elsewhere/model.yaml"; }));
  EXPECT_FALSE(changes([](auto &L) { L.inputs.budgetBytes += 1; }));
  EXPECT_FALSE(changes([](auto &L) { L.kernels.clear(); }));
  EXPECT_FALSE(changes([](auto &L) { L.fingerprint = "0x0"; }));
  EXPECT_FALSE(changes([](auto &L) { L.layoutFingerprint += 1; }));
  EXPECT_EQ(poolrt::layoutFingerprintText(0xa24d54ca163fe7c8ull), "0xa24d54ca163fe7c8");
}

TEST(RoundTrip, AnEditedManifestReadsBackDifferently) {
  // One number changed in the manifest text is seen by the reader (and a
  // change that breaks an invariant is refused).
  Compiled c;
  ASSERT_TRUE(compile(std::string(POOLC_MODELS_DIR) + "/llama-3.1-8b.yaml",
                      {24 * GiB, 16}, c));
  std::string text = c.artifact.find("manifest")->data;
  std::string key = "\"unreserved_bytes\": ";
  size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + key.size(), "1");
  // The compiler's layout fingerprint no longer matches: refused, named.
  auto refused = poolrt::parseManifest(text);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("layout.layout_fingerprint: is 0x"),
            std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("altered"), std::string::npos);
  // Without the key (a report older than it), the edit reads back, changed.
  std::string fpKey = "\"layout_fingerprint\": \"";
  size_t fpAt = text.find(fpKey);
  ASSERT_NE(fpAt, std::string::npos);
  size_t fpEnd = text.find('\n', fpAt);
  text.erase(fpAt, fpEnd - fpAt + 1);
  if (text[fpAt - 2] == ',') // the key was the last of its object
    text.erase(fpAt - 2, 1);
  auto edited = poolrt::parseManifest(text);
  ASSERT_TRUE(edited.ok()) << edited.error().message;
  EXPECT_EQ(poolrt::firstDifference(c.layout, *edited).rfind("unreserved_bytes", 0),
            0u);

  text = c.artifact.find("manifest")->data;
  key = "\"entries\": ";
  at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + key.size(), "9");
  auto broken = poolrt::parseManifest(text);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("reserved_bytes: is not entries x "
                                        "entry_bytes"),
            std::string::npos);
}
