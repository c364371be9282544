//===- boundary_e2e.cpp - Host end-to-end: moving the pool boundary ------===//
//
// A DeepSeek-V4 model on the host backend, every count read from the
// artifact: PAGE blocks and STATE slots share the planes' rows, so the
// cache manager can re-split them at run time. A long random run admits
// requests (shared prefixes, so cached blocks are hit and shared), finishes
// some, and moves the boundary up and down. Every block's bytes carry a
// stamp of its content (the block's chained hash; a request-unique value
// for a partial tail) and every slot a stamp of its request, written in
// every segment the generated kernels move. After each move the block and
// slot relocations it reported run through the generated block_copy and
// slot_copy kernels, and then every live request's blocks and slot must
// still hold their stamps, a later prefix hit must read the right bytes,
// and the pools' invariants must hold.
//
//===----------------------------------------------------------------------===//

#include "E2E.h"

#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/Setup.h"


#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

using namespace poolrt;

using e2e::expect;

namespace {

using Stamp = std::array<uint64_t, 4>;

Stamp stampOf(uint64_t v) {
  Stamp s;
  for (size_t i = 0; i < s.size(); ++i) {
    v ^= v >> 31;
    v *= 0x9E3779B97F4A7C15ull;
    s[i] = v;
  }
  return s;
}

} // namespace

int main(int argc, char **argv) {
  auto artifact = e2e::loadArtifact(argc, argv, "boundary_e2e");
  if (!artifact)
    return 2;
  auto ks = KernelSet::fromArtifact(*artifact);
  if (!ks.ok()) {
    std::fprintf(stderr, "boundary_e2e: %s\n", ks.error().message.c_str());
    return 2;
  }
  SolvedLayout layout = e2e::layoutOf(*artifact);
  int64_t blockSize = layout.geometry.blockSize;
  // Every count from the artifact; plain slots (no checkpoints): this test
  // moves bytes only.
  auto cfgOr = cacheManagerConfig(*artifact, CachePolicy{0, true});
  expect(cfgOr.ok() && cfgOr->boundary.has_value(),
         "configuration and boundary geometry from the artifact");
  if (!cfgOr.ok() || !cfgOr->boundary)
    return 1;
  CacheManagerConfig cfg = *cfgOr;
  cfg.pagedCheckpoints.reset();
  auto mOr = CacheManager::create(cfg);
  expect(mOr.ok(), "cache manager with a boundary geometry");
  if (!mOr.ok()) {
    std::printf("%s\n", mOr.error().message.c_str());
    return 1;
  }
  CacheManager &m = **mOr;
  const int64_t slots0 = cfg.numGroups;

  std::unique_ptr<Device> devPtr = e2e::openBackend(argc, argv, *artifact);
  if (!devPtr)
    return 2;
  Device &dev = *devPtr;
  DevicePtr arena = *dev.allocate(uint64_t(ks->allocationBytes()));
  KernelLauncher launcher(dev, arena);
  const KernelInfo *blockGather = ks->byKind("block_gather");
  const KernelInfo *blockCopy = ks->byKind("block_copy");
  const KernelInfo *slotCopy = ks->byKind("slot_copy");
  expect(blockGather && blockCopy && slotCopy,
         "the artifact has block_gather, block_copy and slot_copy kernels");
  if (!blockGather || !blockCopy || !slotCopy)
    return 1;

  // Stamp positions: start, middle and end of every segment a kernel moves.
  auto spots = [](const KernelInfo &k, int64_t id) {
    std::vector<int64_t> at;
    for (const KernelSegment &s : k.segments) {
      int64_t base = s.srcOff + id * s.srcStride;
      int64_t last = s.bytes - int64_t(sizeof(Stamp));
      for (int64_t off : {int64_t(0), last / 2 / 8 * 8, last})
        at.push_back(base + off);
    }
    return at;
  };
  auto write = [&](const KernelInfo &k, int64_t id, uint64_t v) {
    Stamp s = stampOf(v);
    for (int64_t a : spots(k, id))
      (void)dev.copyToDevice(arena + uint64_t(a), s.data(), sizeof s);
  };
  auto holds = [&](const KernelInfo &k, int64_t id, uint64_t v) {
    Stamp want = stampOf(v), got;
    for (int64_t a : spots(k, id)) {
      (void)dev.copyFromDevice(got.data(), arena + uint64_t(a), sizeof got);
      if (got != want)
        return false;
    }
    return true;
  };
  // The content a block of `r` holds: its chained hash when full.
  auto blockValue = [&](const Request &r, int64_t i) {
    int64_t full = r.numTokens() / blockSize;
    if (i < full)
      return m.prefixHashes(r, i + 1)[size_t(i)];
    return uint64_t(0xB10C000000000000ull) ^ uint64_t(r.id);
  };
  auto slotValue = [](const Request &r) {
    return uint64_t(0x5107000000000000ull) ^ uint64_t(r.id);
  };

  std::mt19937_64 rng(20261129);
  std::vector<std::unique_ptr<Request>> live;
  int64_t nextId = 1, admitted = 0, hitBlocks = 0, moves = 0, blockMoves = 0,
          slotMoves = 0, checks = 0, stamped = 0, partialMoves = 0;
  int64_t maxGroups = slots0, minGroups = slots0;
  bool contentOk = true, tablesOk = true;

  auto checkAll = [&]() {
    for (const auto &r : live) {
      for (size_t i = 0; i < r->blockTable.size(); ++i)
        if (!holds(*blockGather, r->blockTable[i].value, blockValue(*r, int64_t(i)))) {
          contentOk = false;
          std::printf("request %lld block %zu (id %d) lost its content\n",
                      (long long)r->id, i, r->blockTable[i].value);
        }
      if (r->state.group.valid() &&
          !holds(*slotCopy, m.slotKernelId(r->state.group), slotValue(*r))) {
        contentOk = false;
        std::printf("request %lld slot (group %d) lost its content\n",
                    (long long)r->id, r->state.group.value);
      }
      ++checks;
    }
  };

  const int kSteps = 1500;
  for (int step = 0; step < kSteps; ++step) {
    int op = int(rng() % 100);
    if (op < 45) { // admit a request: one of 4 shared prefixes, own tail
      auto r = std::make_unique<Request>();
      r->id = nextId++;
      int64_t family = int64_t(rng() % 4);
      int64_t prefixBlocks = 8 + family * 4;
      int64_t tail = int64_t(rng() % (6 * blockSize)) + 1;
      for (int64_t t = 0; t < prefixBlocks * blockSize; ++t)
        r->tokens.push_back(1000 * (family + 1) + t);
      for (int64_t t = 0; t < tail; ++t)
        r->tokens.push_back(int64_t(1) << 40 | (r->id << 16) | t);
      r->numPromptTokens = r->numTokens();
      // Plain slots (transfer none) cannot resume, so a stateful request
      // never hits (spec §6); stateless ones share the published prefixes.
      r->state.hasPerReqCache = rng() % 2 == 0;
      int64_t hit = m.canAllocate(*r);
      if (hit < 0)
        continue;
      Status s = m.allocate(*r, hit);
      expect(s.ok(), "allocate after can_allocate");
      if (!s.ok())
        continue;
      ++admitted;
      hitBlocks += hit;
      // The hit blocks were written by earlier requests: they must read right.
      for (int64_t i = 0; i < hit; ++i)
        if (!holds(*blockGather, r->blockTable[size_t(i)].value, blockValue(*r, i))) {
          contentOk = false;
          std::printf("request %lld hit block %lld reads wrong bytes\n",
                      (long long)r->id, (long long)i);
        }
      // The "forward": write the fresh blocks and the slot, then publish.
      for (size_t i = size_t(hit); i < r->blockTable.size(); ++i, ++stamped)
        write(*blockGather, r->blockTable[i].value, blockValue(*r, int64_t(i)));
      if (r->state.group.valid())
        write(*slotCopy, m.slotKernelId(r->state.group), slotValue(*r));
      expect(m.hashBlocks(*r, r->numTokens() - hit * blockSize).ok(), "publish");
      r->numCachedTokens = r->numTokens();
      live.push_back(std::move(r));
    } else if (op < 75) { // finish one
      if (live.empty())
        continue;
      size_t k = size_t(rng() % live.size());
      expect(m.deallocate(*live[k]).ok(), "deallocate");
      live.erase(live.begin() + std::ptrdiff_t(k));
    } else { // move the boundary: more or fewer slots
      int64_t now = m.groups()->numGroups();
      int64_t target = std::max<int64_t>(
          1, now + int64_t(rng() % 9) - 4);
      std::vector<Request *> ptrs;
      for (auto &r : live)
        ptrs.push_back(r.get());
      auto mv = m.moveBoundary(target, ptrs);
      expect(mv.ok(), "move_boundary");
      if (!mv.ok()) {
        std::printf("%s\n", mv.error().message.c_str());
        continue;
      }
      ++moves;
      if (!mv->reachedTarget)
        ++partialMoves;
      blockMoves += int64_t(mv->blockMoves.size());
      slotMoves += int64_t(mv->groupMoves.size());
      if (!mv->blockCopyIds.empty())
        expect(launcher.run(*blockCopy, mv->blockCopyIds).ok(), "block_copy relocations");
      if (!mv->slotCopyIds.empty())
        expect(launcher.run(*slotCopy, mv->slotCopyIds).ok(), "slot_copy relocations");
      maxGroups = std::max(maxGroups, mv->numGroups);
      minGroups = std::min(minGroups, mv->numGroups);
      // Every table entry is a held block of the pool now.
      for (auto &r : live) {
        for (BlockId b : r->blockTable)
          if (b.value >= m.blocks().numBlocks() ||
              m.blocks().state(b) != BlockState::Held)
            tablesOk = false;
        if (r->state.group.valid() &&
            r->state.group.value >= m.groups()->numGroups())
          tablesOk = false;
      }
      checkAll();
    }
    m.completePreviousStateBatch();
    if (step % 50 == 49) {
      expect(m.blocks().invariantsHold() && m.groups()->invariantsHold(),
             "pool invariants hold");
    }
  }
  checkAll();
  expect(moves > 0 && blockMoves > 0 && slotMoves > 0,
         "the run moved held blocks and live slots");
  expect(tablesOk, "every re-pointed table names held blocks and live groups");
  expect(contentOk, "every live block and slot holds its content after every move");
  expect(m.blocks().invariantsHold() && m.groups()->invariantsHold(),
         "pool invariants hold at the end");
  std::printf("boundary e2e: %d passed, %d failed (%lld admitted, %lld hit blocks, "
              "%lld boundary moves (%lld stopped early), %lld block and %lld slot "
              "relocations, groups between %lld and %lld, %lld request checks)\n",
              e2e::passed, e2e::failed, (long long)admitted, (long long)hitBlocks,
              (long long)moves, (long long)partialMoves, (long long)blockMoves,
              (long long)slotMoves, (long long)minGroups, (long long)maxGroups,
              (long long)checks);
  return e2e::failed ? 1 : 0;
}
