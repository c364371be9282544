//===- copy_e2e.cpp - Host end-to-end: a PAGE-unit checkpoint and resume --===//
//
// A DeepSeek-V4 model (copy transfer: checkpoints are images stored in PAGE
// units borrowed from the block pool) on the host backend, every count read
// from the artifact. Request 1 writes its slot, the ladder asks for a
// checkpoint, and the batch's store op runs: the generated image store
// moves the carried part of the slot straight into the PAGE units the store
// reserved (unit-major: each unit's envelope in every plane, then its
// block-table riders), one launch, no staging. Request 1 finishes. Request
// 2 with the same prompt hits up to the checkpoint, gets a fresh slot with
// the restore queued, and the restore op runs: the generated image restore
// moves the units into the new slot. The units must hold the image
// unit-major (and nothing past it), and the resumed slot's image must equal
// the checkpointed one.
//
//===----------------------------------------------------------------------===//

#include "E2E.h"

#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/Setup.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

using namespace poolrt;

using e2e::expect;

int main(int argc, char **argv) {
  auto artifact = e2e::loadArtifact(argc, argv, "copy_e2e");
  if (!artifact)
    return 2;
  auto ks = KernelSet::fromArtifact(*artifact);
  SolvedLayout layout = e2e::layoutOf(*artifact);
  if (!layout.rowSpace || !layout.rowSpace->slotPositions) {
    std::printf("FAIL: the copy model has no planned row space\n");
    return 1;
  }
  const SolvedRowSpace &rs = *layout.rowSpace;
  int64_t blockSize = layout.geometry.blockSize;
  int64_t imageBytes = rs.imageBytes;
  int64_t positions = *rs.slotPositions;
  // Every count from the artifact (the runtime's one reader of it).
  auto cfgOr = cacheManagerConfig(*artifact, CachePolicy{4 * blockSize, true});
  expect(cfgOr.ok() && cfgOr->pagedCheckpoints && cfgOr->boundary,
         "a copy-transfer configuration with a boundary from the artifact");
  if (!cfgOr.ok() || !cfgOr->pagedCheckpoints)
    return 1;
  CacheManagerConfig cfg = *cfgOr;
  expect(cfg.pagedCheckpoints->imageBytes() == imageBytes,
         "the checkpoint image is the row space's image_bytes");
  auto mOr = CacheManager::create(cfg);
  expect(mOr.ok(), "cache manager with PAGE-unit checkpoints");
  if (!mOr.ok())
    return 1;
  CacheManager &m = **mOr;

  std::unique_ptr<Device> devPtr = e2e::openBackend(argc, argv, *artifact);
  if (!devPtr)
    return 2;
  Device &dev = *devPtr;
  DevicePtr arena = *dev.allocate(uint64_t(ks->allocationBytes()));
  DevicePtr staging = *dev.allocate(uint64_t(2 * imageBytes));
  KernelLauncher launcher(dev, arena);
  const KernelInfo *gather = ks->byKind("image_gather");
  const KernelInfo *scatter = ks->byKind("image_scatter");
  const KernelInfo *blockGather = ks->byKind("block_gather");
  const KernelInfo *store = ks->byKind("image_store");
  const KernelInfo *restore = ks->byKind("image_restore");
  expect(gather && scatter && blockGather && store && restore,
         "image, block and image store/restore kernels present");
  if (!(gather && scatter && blockGather && store && restore))
    return 1;
  expect(store->idsPerItem == 1 + m.pagedStore()->unitsPerCheckpoint() &&
             restore->idsPerItem == store->idsPerItem,
         "store/restore items are (slot, units_per_checkpoint units)");
  // The slot kernels' id of a group (its physical slot).
  auto physical = [&](GroupId g) { return m.slotKernelId(g); };
  // The item of a store or restore: the physical slot, then the units.
  auto unitItem = [&](SlotIndex slot, const std::vector<BlockId> &units) {
    std::vector<int32_t> ids{physical(GroupId(slot.value))};
    for (BlockId u : units)
      ids.push_back(u.value);
    return ids;
  };
  // The bytes of `units`, unit-major: each unit's regions (the block
  // gather's segments: envelopes in every plane, then the riders).
  auto unitBytes = [&](const std::vector<BlockId> &units) {
    std::vector<uint8_t> out;
    for (BlockId u : units)
      for (const KernelSegment &seg : blockGather->segments) {
        size_t at = out.size();
        out.resize(at + size_t(seg.bytes));
        (void)dev.copyFromDevice(
            out.data() + at,
            arena + uint64_t(u.value * seg.srcStride + seg.srcOff),
            uint64_t(seg.bytes));
      }
    return out;
  };
  auto fillUnits = [&](const std::vector<BlockId> &units, uint8_t v) {
    for (BlockId u : units)
      for (const KernelSegment &seg : blockGather->segments)
        (void)dev.fill(arena + uint64_t(u.value * seg.srcStride + seg.srcOff),
                       v, uint64_t(seg.bytes));
  };

  // The launcher checks each position against its own range: slots in
  // [0, slot_positions), units in [0, num_blocks).
  {
    std::vector<int32_t> item{int32_t(positions - 1)};
    for (int32_t u = 0; u < int32_t(store->idsPerItem) - 1; ++u)
      item.push_back(u);
    std::vector<int32_t> badUnit = item, badSlot = item;
    badUnit.back() = int32_t(cfg.numBlocks);
    badSlot[0] = int32_t(positions);
    expect(!launcher.run(*store, badUnit).ok(),
           "a unit id past num_blocks is refused");
    expect(!launcher.run(*restore, badSlot).ok(),
           "a slot id past slot_positions is refused");
    item.pop_back();
    expect(!launcher.run(*store, item).ok(),
           "a store short of one unit is refused");
  }
  // A manifest whose image kernels are malformed is refused, saying where.
  auto refusedWith = [&](const char *what, auto mutate,
                         const std::string &words) {
    nlohmann::json j = nlohmann::json::parse(artifact->find("manifest")->data);
    for (auto &k : j["kernels"])
      if (k["kind"] == "image_store")
        mutate(k);
    Artifact bad = *artifact;
    for (ArtifactSection &sec : bad.sections)
      if (sec.name == "manifest")
        sec.data = j.dump();
    auto set = KernelSet::fromArtifact(bad);
    bool ok = !set.ok() && set.error().message.find(words) != std::string::npos;
    if (!ok)
      std::printf("  %s\n",
                  set.ok() ? "accepted" : set.error().message.c_str());
    expect(ok, what);
  };
  refusedWith(
      "a manifest without id_tuple is refused",
      [](nlohmann::json &k) { k.erase("id_tuple"); },
      "('pool_image_store').id_tuple: missing");
  refusedWith(
      "ids_per_item disagreeing with id_tuple is refused",
      [](nlohmann::json &k) { k["ids_per_item"] = 2; },
      "id_tuple: must list ids_per_item (2)");
  refusedWith(
      "a segment naming a position past the tuple is refused",
      [](nlohmann::json &k) { k["segments"][3]["dst_id"] = k["ids_per_item"]; },
      "segments[3]: dst_id");
  refusedWith(
      "a segment writing through the slot's (read) position is refused",
      [](nlohmann::json &k) { k["segments"][0]["dst_id"] = 0; },
      "names a position the kernel does not write");
  refusedWith(
      "a segment without dst_id is refused",
      [](nlohmann::json &k) { k["segments"][1].erase("dst_id"); },
      "segments[1].dst_id: missing");
  refusedWith(
      "segments that do not add up to item_bytes are refused",
      [](nlohmann::json &k) {
        k["item_bytes"] = k["item_bytes"].get<int64_t>() + 16;
      },
      "segments move");
  refusedWith(
      "a unit position without a range is refused",
      [](nlohmann::json &k) { k["id_tuple"][2].erase("id_range"); },
      "id_tuple[2].id_range: missing");

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
  for (const SolvedRowPlane &p : rs.planes) {
    int64_t w = p.rowBytes;
    int64_t span = rs.slotRows * w;
    std::vector<uint8_t> bytes(static_cast<size_t>(span));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = uint8_t(i * 2654435761u >> 13);
    (void)dev.copyToDevice(arena + uint64_t(p.offset.value_or(0) + s1 * span),
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
    // The image as the staging gather packs it: what the units must hold.
    expect(launcher.run(*gather, {physical(GroupId(st.srcSlot.value))}, staging)
               .ok(),
           "image gather of the kept slot");
    (void)dev.copyFromDevice(kept.data(), staging, kept.size());
    fillUnits(st.unitIds, 0x5A);
    expect(launcher.run(*store, unitItem(st.srcSlot, st.unitIds)).ok(),
           "image store (keep): slot -> PAGE units");
    std::vector<uint8_t> units = unitBytes(st.unitIds);
    expect(units.size() >= kept.size() &&
               std::equal(kept.begin(), kept.end(), units.begin()),
           "the units hold the image unit-major, byte for byte");
    expect(std::all_of(units.begin() + int64_t(kept.size()), units.end(),
                       [](uint8_t b) { return b == 0x5A; }),
           "the store writes nothing past the image in its last unit");
    std::vector<int32_t> twice = unitItem(st.srcSlot, st.unitIds);
    twice.back() = twice[1];
    expect(!launcher.run(*store, twice).ok(),
           "a store naming one unit twice is refused");
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
  // The whole of slot 2 (the slot copy's segments: its span in every
  // plane), before and after the restore: only the image may change.
  const KernelInfo *slotCopy = ks->byKind("slot_copy");
  auto slotBytes2 = [&]() {
    std::vector<uint8_t> out;
    for (const KernelSegment &seg : slotCopy->segments) {
      size_t at = out.size();
      out.resize(at + size_t(seg.bytes));
      (void)dev.copyFromDevice(
          out.data() + at, arena + uint64_t(s2 * seg.srcStride + seg.srcOff),
          uint64_t(seg.bytes));
    }
    return out;
  };
  std::vector<uint8_t> expected =
      slotCopy ? slotBytes2() : std::vector<uint8_t>{};
  if (slotCopy) {
    // Lay the kept image over its runs (the gather's segments, in order).
    int64_t at = 0;
    for (const KernelSegment &run : gather->segments) {
      int64_t addr = s2 * run.srcStride + run.srcOff, base = 0;
      for (const KernelSegment &plane : slotCopy->segments) {
        int64_t start = s2 * plane.srcStride + plane.srcOff;
        if (addr >= start && addr + run.bytes <= start + plane.bytes)
          std::copy(kept.begin() + at, kept.begin() + at + run.bytes,
                    expected.begin() + base + (addr - start));
        base += plane.bytes;
      }
      at += run.bytes;
    }
  }
  if (ops.restores.size() == 1) {
    expect(launcher
               .run(*restore,
                    unitItem(ops.restores[0].dstSlot, ops.restores[0].unitIds))
               .ok(),
           "image restore (resume): PAGE units -> slot");
  }
  expect(slotCopy && slotBytes2() == expected,
         "the restore writes the image into slot 2 and nothing else of it");
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
