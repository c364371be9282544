//===- copy_e2e.cpp - Host end-to-end: a PAGE-unit checkpoint and resume --===//
//
// A DeepSeek-V4 model (copy transfer: checkpoints are images stored in PAGE
// units borrowed from the block pool) on the host backend, every count read
// from the artifact. Request 1 writes its slot, the ladder asks for a
// checkpoint, and the batch's store op runs: the generated image gather
// packs the carried part of the slot, and the image is laid into the PAGE
// units the store reserved (each unit's envelope in every plane, then its
// block-table riders). Request 1 finishes. Request 2 with the same prompt
// hits up to the checkpoint, gets a fresh slot with the restore queued, and
// the restore op runs: units -> staging -> the generated image scatter into
// the new slot. The resumed slot's image must equal the checkpointed one.
//
//===----------------------------------------------------------------------===//

#include "E2E.h"

#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <vector>

using namespace poolrt;

using e2e::expect;

int main(int argc, char **argv) {
  auto artifact = e2e::loadArtifact(argc, argv, "copy_e2e");
  if (!artifact)
    return 2;
  auto ks = KernelSet::fromArtifact(*artifact);
  nlohmann::json layout = e2e::layoutOf(*artifact);
  const nlohmann::json &rs = layout["row_space"];
  int64_t blockSize = layout["geometry"]["block_size"].get<int64_t>();
  int64_t pageBytes = 0, slotBytes = 0, blocks = 0, slots = 0;
  std::string layoutId;
  for (const auto &c : layout["entry_classes"]) {
    if (c["pool"] == "page") {
      pageBytes = c["entry_bytes"].get<int64_t>();
      blocks = c["entries"].get<int64_t>();
    } else {
      slotBytes = c["entry_bytes"].get<int64_t>();
      slots = c["entries"].get<int64_t>();
      layoutId = c["transfer"]["layout_id"].get<std::string>();
    }
  }
  int64_t imageBytes = rs["image_bytes"].get<int64_t>();
  int64_t positions = rs["slot_positions"].get<int64_t>();
  auto spec = PagedStateCheckpointSpec::create(pageBytes, slotBytes, layoutId, imageBytes);
  expect(spec.ok(), "checkpoint spec from the artifact");
  CacheManagerConfig cfg;
  cfg.blockSize = blockSize;
  cfg.numBlocks = blocks;
  cfg.numGroups = slots;
  cfg.checkpointIntervalTokens = 4 * blockSize;
  cfg.pagedCheckpoints = spec.value();
  auto mOr = CacheManager::create(cfg);
  expect(mOr.ok(), "cache manager with PAGE-unit checkpoints");
  if (!mOr.ok())
    return 1;
  CacheManager &m = **mOr;

  auto devOr = openDevice("host");
  Device &dev = **devOr;
  expect(dev.loadKernels(*artifact).ok(), "load code/host");
  DevicePtr arena = *dev.allocate(uint64_t(ks->allocationBytes()));
  DevicePtr staging = *dev.allocate(uint64_t(2 * imageBytes));
  KernelLauncher launcher(dev, arena);
  const KernelInfo *gather = ks->byKind("image_gather");
  const KernelInfo *scatter = ks->byKind("image_scatter");
  const KernelInfo *blockGather = ks->byKind("block_gather");
  expect(gather && scatter && blockGather, "image and block kernels present");
  // A physical slot for a group (group 0 = the topmost position).
  auto physical = [&](GroupId g) { return int32_t(positions - 1 - g.value); };
  // An image laid into its units: each unit's regions (the block gather's
  // segments: envelopes in every plane, then the riders), unit-major.
  auto unitsCopy = [&](const std::vector<BlockId> &units, bool toUnits) {
    int64_t at = 0;
    for (BlockId u : units)
      for (const KernelSegment &seg : blockGather->segments) {
        if (at >= imageBytes)
          return;
        int64_t n = std::min<int64_t>(seg.bytes, imageBytes - at);
        DevicePtr unit = arena + uint64_t(u.value * seg.srcStride + seg.srcOff);
        (void)(toUnits ? dev.copyOnDevice(unit, staging + uint64_t(at), uint64_t(n))
                       : dev.copyOnDevice(staging + uint64_t(at), unit, uint64_t(n)));
        at += n;
      }
  };

  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < 9 * blockSize + 5; ++i)
    prompt.push_back(7 + 3 * i);

  // Request 1: admit, fill its whole slot, prefill to the last rung.
  Request r1;
  r1.id = 1;
  r1.tokens = prompt;
  r1.numPromptTokens = int64_t(prompt.size());
  expect(m.canAllocate(r1) == 0, "first request: nothing cached");
  expect(m.allocate(r1, 0).ok(), "first request: allocate");
  int32_t s1 = physical(r1.state.group);
  for (const auto &p : rs["planes"]) {
    int64_t w = p["row_bytes"].get<int64_t>();
    int64_t span = rs["slot_rows"].get<int64_t>() * w;
    std::vector<uint8_t> bytes(static_cast<size_t>(span));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = uint8_t(i * 2654435761u >> 13);
    (void)dev.copyToDevice(arena + uint64_t(p["offset"].get<int64_t>() + s1 * span),
                           bytes.data(), bytes.size());
  }
  int64_t rung = m.checkpointLimit(r1);
  int64_t chunk = m.finalizePrefillChunk(r1, 0, r1.numPromptTokens);
  expect(rung > 0 && chunk == rung, "the first chunk ends on the last rung");
  expect(m.hashBlocks(r1, chunk).ok(), "publish the first chunk (checkpoint intent)");
  r1.numCachedTokens = chunk;
  auto ops = m.takeStateMaintenanceOps();
  expect(ops.stores.size() == 1 && ops.restores.empty(), "one store op at batch construction");
  std::vector<uint8_t> kept(static_cast<size_t>(imageBytes));
  if (ops.stores.size() == 1) {
    const CheckpointStoreOp &st = ops.stores[0];
    expect(int64_t(st.unitIds.size()) == m.pagedStore()->unitsPerCheckpoint(),
           "the store reserved units_per_checkpoint PAGE units");
    expect(launcher.run(*gather, {physical(GroupId(st.srcSlot.value))}, staging).ok(),
           "image gather (keep)");
    (void)dev.copyFromDevice(kept.data(), staging, kept.size());
    unitsCopy(st.unitIds, /*toUnits=*/true);
  }
  m.completePreviousStateBatch(); // the store lands: READY
  expect(m.hashBlocks(r1, r1.numPromptTokens - chunk).ok(), "publish the rest");
  r1.numCachedTokens = r1.numPromptTokens;
  expect(m.deallocate(r1).ok(), "first request finishes");
  m.completePreviousStateBatch();

  // Request 2: hit up to the checkpoint, resume into a fresh slot.
  Request r2;
  r2.id = 2;
  r2.tokens = prompt;
  r2.numPromptTokens = r1.numPromptTokens;
  int64_t hit = m.canAllocate(r2);
  expect(hit == rung / blockSize, "second request hits up to the checkpoint");
  expect(m.allocate(r2, hit).ok(), "second request: allocate (slot + queued restore)");
  int32_t s2 = physical(r2.state.group);
  (void)s1;
  // Poison the new slot's image so a missing restore shows.
  (void)dev.fill(staging + uint64_t(imageBytes), 0xA5, uint64_t(imageBytes));
  expect(launcher.run(*scatter, {s2}, staging + uint64_t(imageBytes)).ok(), "poison slot 2");
  ops = m.takeStateMaintenanceOps();
  expect(ops.restores.size() == 1, "one restore op at batch construction");
  if (ops.restores.size() == 1) {
    unitsCopy(ops.restores[0].unitIds, /*toUnits=*/false);
    expect(launcher.run(*scatter, {physical(GroupId(ops.restores[0].dstSlot.value))},
                        staging).ok(),
           "image scatter (resume)");
  }
  m.completePreviousStateBatch();
  expect(launcher.run(*gather, {s2}, staging + uint64_t(imageBytes)).ok(),
         "gather the resumed slot");
  std::vector<uint8_t> resumed(static_cast<size_t>(imageBytes));
  (void)dev.copyFromDevice(resumed.data(), staging + uint64_t(imageBytes), resumed.size());
  expect(resumed == kept, "the resumed slot holds the checkpointed image byte for byte");
  expect(m.deallocate(r2).ok(), "second request finishes");
  m.completePreviousStateBatch();
  expect(m.funnel().fates.kept == 1, "one checkpoint kept");
  expect(m.blocks().invariantsHold() && m.groups()->invariantsHold() &&
             m.pagedStore()->checkInvariants().ok(),
         "pool and store invariants hold at the end");
  std::printf("copy e2e: %d passed, %d failed (image %lld bytes in %lld PAGE units)\n",
              e2e::passed, e2e::failed, (long long)imageBytes,
              (long long)m.pagedStore()->unitsPerCheckpoint());
  return e2e::failed ? 1 : 0;
}
