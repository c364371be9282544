//===- fork_e2e.cpp - Host end-to-end: a fork checkpoint and its resume ---===//
//
// A GDN-style model (fork(1) transfer) on the host backend, every count
// read from the artifact: request 1 is admitted, its state written, and the
// ladder keeps a checkpoint (the request forks to a fresh group, the old one
// is indexed); it finishes. Request 2 with the same prompt gets the prefix
// hit gated on that checkpoint, attaches a fresh group that forks from the
// checkpoint, and its first forward (here: the generated group copy kernel)
// resumes the state into the new group. The resumed group must hold the
// checkpointed bytes exactly.
//
//===----------------------------------------------------------------------===//

#include "E2E.h"

#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/Setup.h"

#include <nlohmann/json.hpp>


#include <cstdio>
#include <memory>
#include <cstring>
#include <vector>

using namespace poolrt;

using e2e::expect;

int main(int argc, char **argv) {
  auto artifact = e2e::loadArtifact(argc, argv, "fork_e2e");
  if (!artifact)
    return 2;
  auto ks = KernelSet::fromArtifact(*artifact);
  SolvedLayout layout = e2e::layoutOf(*artifact);
  // One source: counts and sizes from the artifact's solved layout.
  int64_t blockSize = layout.geometry.blockSize;
  int64_t perReq = 1, entryBytes = 0, region = 0;
  for (const SolvedClass &c : layout.classes)
    if (!c.isPage()) {
      perReq = c.entriesPerReq;
      entryBytes = c.entryBytes;
      region = c.regionOffset.value_or(0);
    }
  int64_t groupBytes = perReq * entryBytes;
  // By default a fork class with one entry per request keeps its images in
  // PAGE units: the store's units per image are the image_store kernel's,
  // and they span the image (specs/checkpoint-placement.md).
  if (perReq == 1) {
    auto paged = cacheManagerConfig(*artifact, CachePolicy{});
    const KernelInfo *store = layout.kernelByKind("image_store");
    const KernelInfo *image = layout.kernelByKind("image_gather");
    const SolvedClass *page = layout.page();
    expect(paged.ok() && store && image && page && paged->pagedCheckpoints &&
               !paged->transfer.forks() &&
               paged->pagedCheckpoints->unitsPerCheckpoint() == store->idsPerItem - 1 &&
               paged->pagedCheckpoints->unitsPerCheckpoint() ==
                   (image->itemBytes + page->entryBytes - 1) / page->entryBytes,
           "default: fork images in PAGE units, as many as the image_store kernel names");
  }
  // The group path and the reference's ladder: page-unit fork checkpoints
  // and the sparse placement are the serving tests' (serve-identity).
  CachePolicy policy{4 * blockSize, true};
  policy.placeAsReference();
  policy.forkCheckpointsInPageUnits = false;
  auto cfgOr = cacheManagerConfig(*artifact, policy);
  expect(cfgOr.ok() && cfgOr->transfer.forks() && cfgOr->transfer.forkTokens() == 1,
         "a fork(1) configuration from the artifact");
  if (!cfgOr.ok())
    return 1;
  CacheManagerConfig cfg = *cfgOr;
  auto mOr = CacheManager::create(cfg);
  expect(mOr.ok(), "cache manager from the artifact's counts");
  if (!mOr.ok())
    return 1;
  CacheManager &m = **mOr;

  std::unique_ptr<Device> devPtr = e2e::openBackend(argc, argv, *artifact);
  if (!devPtr)
    return 2;
  Device &dev = *devPtr;
  auto arenaOr = dev.allocate(uint64_t(ks->allocationBytes()));
  expect(arenaOr.ok(), "allocate the arena");
  DevicePtr arena = *arenaOr;
  KernelLauncher launcher(dev, arena);
  const KernelInfo *groupCopy = ks->byKind("group_copy");
  expect(groupCopy != nullptr, "the artifact has a group copy kernel");

  auto groupAddr = [&](GroupId g) { return arena + uint64_t(region + g.value * groupBytes); };
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < 8 * blockSize + 3; ++i)
    prompt.push_back(1000 + i);

  // Request 1: admit, write its state, prefill to the first rung.
  Request r1;
  r1.tokens = prompt;
  r1.numPromptTokens = int64_t(prompt.size());
  int64_t hit1 = m.canAllocate(r1);
  expect(hit1 == 0, "first request: nothing cached");
  expect(m.allocate(r1, hit1).ok(), "first request: allocate");
  GroupId g1 = r1.state.group;
  std::vector<uint8_t> state(static_cast<size_t>(groupBytes));
  for (size_t i = 0; i < state.size(); ++i)
    state[i] = uint8_t((i * 131 + 7) ^ (i >> 9));
  expect(dev.copyToDevice(groupAddr(g1), state.data(), state.size()).ok(), "write state");
  int64_t rung = m.checkpointLimit(r1); // the last rung that leaves room
  int64_t chunk = m.finalizePrefillChunk(r1, 0, r1.numPromptTokens);
  expect(chunk == rung, "the first chunk ends on the last rung");
  expect(m.hashBlocks(r1, chunk).ok(), "publish the first chunk");
  expect(r1.state.group != g1 && r1.state.forkSource == g1,
         "the checkpoint forks: a fresh group, the old one is the source");
  r1.numCachedTokens = chunk;
  m.completePreviousStateBatch();
  expect(m.hashBlocks(r1, r1.numPromptTokens - chunk).ok(), "publish the rest");
  r1.numCachedTokens = r1.numPromptTokens;
  expect(m.deallocate(r1).ok(), "first request finishes");
  m.completePreviousStateBatch();
  m.completePreviousStateBatch();
  expect(m.funnel().fates.kept == 1, "one checkpoint kept");

  // Request 2: the hit is gated on that checkpoint; resume into a new group.
  Request r2;
  r2.tokens = prompt;
  r2.numPromptTokens = r1.numPromptTokens;
  int64_t hit2 = m.canAllocate(r2);
  expect(hit2 == rung / blockSize, "second request hits up to the checkpoint");
  expect(m.allocate(r2, hit2).ok(), "second request: allocate");
  expect(r2.state.forkSource == g1 && r2.state.group.valid() &&
             r2.state.group != g1,
         "resume forks from the checkpointed group into a new one");
  // The first forward reads the source and writes the new group: the
  // generated group copy kernel moves exactly that span.
  expect(launcher.run(*groupCopy, {r2.state.forkSource.value, r2.state.group.value}).ok(),
         "group copy kernel (resume)");
  expect(dev.synchronize().ok(), "synchronize");
  std::vector<uint8_t> resumed(static_cast<size_t>(groupBytes));
  expect(dev.copyFromDevice(resumed.data(), groupAddr(r2.state.group), resumed.size()).ok(),
         "read the resumed group");
  expect(resumed == state, "the resumed group holds the checkpointed state byte for byte");
  std::vector<uint8_t> source(static_cast<size_t>(groupBytes));
  (void)dev.copyFromDevice(source.data(), groupAddr(g1), source.size());
  expect(source == state, "the checkpoint itself is untouched");
  // A crafted manifest (checksummed, not signed) that claims 2^20 groups
  // and strides of 0 passes every bounds check of the reader and the
  // launcher, but the code is the compiler's: the kernel checks each id
  // against the range it was compiled for and skips the item, so the id
  // far past the arena moves nothing (without that check the write would
  // land terabytes past the allocation).
  {
    nlohmann::json j = nlohmann::json::parse(artifact->find("manifest")->data);
    for (auto &k : j["kernels"])
      if (k["kind"] == "group_copy") {
        k["id_range"] = {0, 1 << 20};
        for (auto &slot : k["id_tuple"])
          slot["id_range"] = {0, 1 << 20};
        for (auto &seg : k["segments"])
          seg["src_stride"] = seg["dst_stride"] = 0;
      }
    Artifact crafted = *artifact;
    for (ArtifactSection &sec : crafted.sections)
      if (sec.name == "manifest")
        sec.data = j.dump();
    auto lied = KernelSet::fromArtifact(crafted);
    expect(lied.ok(), "the crafted manifest passes the reader (it is consistent with itself)");
    if (lied.ok()) {
      const KernelInfo *wide = lied->byKind("group_copy");
      std::vector<uint8_t> before(static_cast<size_t>(groupBytes));
      (void)dev.copyFromDevice(before.data(), groupAddr(r2.state.group), before.size());
      expect(launcher.run(*wide, {r2.state.group.value, (1 << 20) - 1}).ok(),
             "the launcher takes an id inside the crafted range");
      expect(launcher.run(*wide, {(1 << 20) - 1, r2.state.group.value}).ok(),
             "and as a source");
      expect(dev.synchronize().ok(), "synchronize after the crafted launches");
      std::vector<uint8_t> after(static_cast<size_t>(groupBytes));
      (void)dev.copyFromDevice(after.data(), groupAddr(r2.state.group), after.size());
      expect(after == before,
             "the kernel skipped the items whose ids pass its compiled range");
    }
  }
  expect(m.deallocate(r2).ok(), "second request finishes");
  m.completePreviousStateBatch();
  m.completePreviousStateBatch();
  expect(m.blocks().invariantsHold() && m.groups()->invariantsHold(),
         "pool invariants hold at the end");
  (void)dev.release(arena);
  std::printf("fork e2e: %d passed, %d failed\n", e2e::passed, e2e::failed);
  return e2e::failed ? 1 : 0;
}
