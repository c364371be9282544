//===- pool-pack-info.cpp - Inspect and verify a .poolpack ----------------===//
//
//   pool-pack-info FILE.poolpack                 summary (verifies it)
//   pool-pack-info FILE.poolpack --extract NAME  one section's bytes to stdout
//
// Reads through poolrt's artifact reader, which refuses a truncated,
// corrupted or version-mismatched file with the offset of the fault, and
// the manifest through the runtime's one reader (readSolvedLayout).
//
//===----------------------------------------------------------------------===//

#include "poolrt/Artifact.h"
#include "poolrt/SolvedLayout.h"
#include "tools/lib/Output.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <string>

/// A kernel's id tuple, runs of one entity folded: "slot, 5 x block".
static std::string itemTuple(const poolrt::KernelInfo &kernel) {
  const std::vector<poolrt::KernelIdSlot> &ids = kernel.idTuple;
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j < ids.size() && ids[j].entity == ids[i].entity)
      ++j;
    const std::string &e = ids[i].entity;
    std::string run = j - i > 2    ? std::to_string(j - i) + " x " + e
                      : j - i == 2 ? e + ", " + e
                                   : e;
    out += (out.empty() ? "" : ", ") + run;
    i = j;
  }
  return out;
}

int main(int argc, char **argv) {
  if (argc != 2 && !(argc == 4 && std::strcmp(argv[2], "--extract") == 0)) {
    llvm::errs() << "usage: pool-pack-info FILE.poolpack [--extract SECTION]\n";
    return 2;
  }
  auto artifact = poolrt::readArtifactFile(argv[1]);
  if (!artifact.ok()) {
    llvm::errs() << "pool-pack-info: error: " << artifact.error().message << "\n";
    return 1;
  }
  if (argc == 4) {
    const poolrt::ArtifactSection *s = artifact->find(argv[3]);
    if (!s) {
      llvm::errs() << "pool-pack-info: error: no section '" << argv[3] << "' in "
                   << argv[1] << "\n";
      return 1;
    }
    llvm::outs() << s->data;
    return ::pool::finishStdout("pool-pack-info");
  }
  llvm::outs() << argv[1] << ": poolpack version " << artifact->version << ", "
               << artifact->sections.size() << " sections\n";
  for (const poolrt::ArtifactSection &s : artifact->sections)
    llvm::outs() << "  " << s.name << ": " << s.data.size() << " bytes\n";
  // The runtime's one reader: what it refuses, this tool refuses, in the
  // same words.
  auto layout = poolrt::readSolvedLayout(*artifact);
  if (!layout.ok()) {
    llvm::errs() << "pool-pack-info: error: " << layout.error().message << "\n";
    return 1;
  }
  llvm::outs() << "model " << layout->model << ", fingerprint "
               << layout->fingerprint << ", layout fingerprint "
               << poolrt::layoutFingerprintText(layout->layoutFingerprint) << "\n";
  for (const poolrt::SolvedTarget &t : layout->targets)
    llvm::outs() << "target " << t.target << " (" << t.format << ") in "
                 << t.section << "\n";
  for (const poolrt::KernelInfo &k : layout->kernels)
    llvm::outs() << "kernel " << k.name << ": " << k.kind << ", "
                 << k.itemBytes << " bytes per " << k.entity << ", "
                 << k.segments.size() << " segments, " << k.vecBytes
                 << "-byte accesses"
                 << (k.rebase ? ", rebased per item on AMD" : "")
                 << ", item (" << itemTuple(k) << ")\n";
  return ::pool::finishStdout("pool-pack-info");
}
