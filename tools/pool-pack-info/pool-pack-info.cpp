//===- pool-pack-info.cpp - Inspect and verify a .poolpack ----------------===//
//
//   pool-pack-info FILE.poolpack                 summary (verifies it)
//   pool-pack-info FILE.poolpack --extract NAME  one section's bytes to stdout
//
// Reads through poolrt's artifact reader, which refuses a truncated,
// corrupted or version-mismatched file with the offset of the fault.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Artifact.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <string>

/// A kernel's id tuple, runs of one entity folded: "slot, 5 x block".
static std::string itemTuple(const llvm::json::Object &kernel) {
  const llvm::json::Array *ids = kernel.getArray("id_tuple");
  if (!ids)
    return "?";
  auto entityAt = [&](size_t i) {
    const llvm::json::Object *p = (*ids)[i].getAsObject();
    auto e = p ? p->getString("entity") : std::nullopt;
    return e ? e->str() : std::string("?");
  };
  std::string out;
  for (size_t i = 0; i < ids->size();) {
    size_t j = i;
    while (j < ids->size() && entityAt(j) == entityAt(i))
      ++j;
    std::string run = j - i > 2    ? std::to_string(j - i) + " x " + entityAt(i)
                      : j - i == 2 ? entityAt(i) + ", " + entityAt(i)
                                   : entityAt(i);
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
    return 0;
  }
  llvm::outs() << argv[1] << ": poolpack version " << artifact->version << ", "
               << artifact->sections.size() << " sections\n";
  for (const poolrt::ArtifactSection &s : artifact->sections)
    llvm::outs() << "  " << s.name << ": " << s.data.size() << " bytes\n";
  const poolrt::ArtifactSection *m = artifact->find("manifest");
  if (!m) {
    llvm::errs() << "pool-pack-info: error: no manifest section\n";
    return 1;
  }
  auto manifest = llvm::json::parse(m->data);
  if (!manifest) {
    llvm::errs() << "pool-pack-info: error: the manifest is not JSON: "
                 << llvm::toString(manifest.takeError()) << "\n";
    return 1;
  }
  const llvm::json::Object *o = manifest->getAsObject();
  if (!o || !o->getString("fingerprint") || !o->getArray("kernels") ||
      !o->getArray("targets")) {
    llvm::errs() << "pool-pack-info: error: the manifest lacks fingerprint, "
                    "kernels or targets\n";
    return 1;
  }
  llvm::outs() << "model " << *o->getString("model") << ", fingerprint "
               << *o->getString("fingerprint") << "\n";
  for (const llvm::json::Value &t : *o->getArray("targets")) {
    const llvm::json::Object &to = *t.getAsObject();
    std::string section = to.getString("section")->str();
    if (!artifact->find(section)) {
      llvm::errs() << "pool-pack-info: error: target " << *to.getString("target")
                   << " names a missing section " << section << "\n";
      return 1;
    }
    llvm::outs() << "target " << *to.getString("target") << " ("
                 << *to.getString("format") << ") in " << section << "\n";
  }
  for (const llvm::json::Value &k : *o->getArray("kernels")) {
    const llvm::json::Object &ko = *k.getAsObject();
    llvm::outs() << "kernel " << *ko.getString("name") << ": "
                 << *ko.getString("kind") << ", "
                 << *ko.getInteger("item_bytes") << " bytes per "
                 << *ko.getString("entity") << ", "
                 << ko.getArray("segments")->size() << " segments, "
                 << *ko.getInteger("vec_bytes") << "-byte accesses"
                 << (*ko.getBoolean("rebase") ? ", rebased per item on AMD"
                                              : "")
                 << ", item (" << itemTuple(ko) << ")\n";
  }
  return 0;
}
