//===- pool-device-check.cpp - One conformance suite for every backend ----===//
//
//   pool-device-check MODEL.poolpack [--backend host|cuda|hip|all] [--plan PLAN]
//
// Runs the same suite on each backend present: allocation and byte round
// trips at both ends of the arena (past 4 GiB on a large layout), fills,
// device-to-device copies, every kernel of the artifact through the
// validating launcher on a deterministic fill (expected bytes computed on
// the host from the manifest's segments), the checkpoint keep -> resume
// round trips (through staging, and straight through PAGE units where the
// artifact has the image store/restore kernels), and the launcher's
// refusals. An
// absent backend is reported, not a failure, unless it was asked for by
// name. Closes with "N passed, M failed".
//
// The kernel checks above take their expected bytes from the artifact's own
// segment list, so a kernel whose code and description are wrong together
// passes them. --plan runs, on each backend, the cases of a plan written by
// `pool-kernel-check MODEL --gpu-plan PLAN` (tools/lib/KernelPlan.h): their
// hashes come from host kernels checked against the independent reference
// (the solved layout's definitions), never from the artifact under test.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Arena.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "tools/lib/KernelPlan.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace poolrt;

namespace {

int passed = 0, failed = 0;

void expect(bool ok, const std::string &what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

void expectOk(const Status &s, const std::string &what) {
  expect(s.ok(), what + (s.ok() ? "" : ": " + s.error().message));
}

uint8_t patternByte(uint64_t offset, uint64_t seed) {
  uint64_t z = offset * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 29)) * 0xBF58476D1CE4E5B9ull;
  return uint8_t(z >> 56);
}

std::vector<uint8_t> pattern(uint64_t offset, uint64_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i)
    v[i] = patternByte(offset + i, seed);
  return v;
}

/// What the check groups of one backend's run share: the device, the tag
/// that opens each of its messages, the artifact's kernels, the arena and
/// the staging buffer (null when it could not be allocated).
struct SuiteContext {
  Device &dev;
  const KernelSet &ks;
  std::string tag;
  DevicePtr arena;
  uint64_t size;
  DevicePtr staging;
  /// A row space's live slots (the top num_slots positions); -1 otherwise.
  /// Positions below them overlap the block rows (the boundary moves), so
  /// a check that reads slots and writes blocks stays among the live ones.
  int64_t liveSlots = -1;
};

/// Round trips at the front, the middle and the very end of the arena (past
/// 4 GiB on a large layout), a fill and a device-to-device copy.
void checkByteMoves(const SuiteContext &ctx) {
  Device &dev = ctx.dev;
  DevicePtr arena = ctx.arena;
  uint64_t size = ctx.size;
  const std::string &tag = ctx.tag;
  for (uint64_t off : {uint64_t(0), size / 2, size - 4096}) {
    auto data = pattern(off, 4096, 7);
    expectOk(dev.copyToDevice(arena + off, data.data(), data.size()),
             tag + "copy to device at " + std::to_string(off));
    std::vector<uint8_t> back(4096);
    expectOk(dev.copyFromDevice(back.data(), arena + off, back.size()),
             tag + "copy from device at " + std::to_string(off));
    expect(back == data, tag + "round trip at offset " + std::to_string(off));
  }
  expectOk(dev.fill(arena + (size - 8192), 0x5A, 4096), tag + "fill");
  std::vector<uint8_t> filled(4096);
  expectOk(dev.copyFromDevice(filled.data(), arena + (size - 8192), 4096), tag + "read fill");
  expect(std::all_of(filled.begin(), filled.end(), [](uint8_t b) { return b == 0x5A; }),
         tag + "fill writes its value");
  expectOk(dev.copyOnDevice(arena + (size - 12288), arena + (size - 4096), 4096),
           tag + "device-to-device copy");
  std::vector<uint8_t> moved(4096);
  expectOk(dev.copyFromDevice(moved.data(), arena + (size - 12288), 4096), tag + "read copy");
  expect(moved == pattern(size - 4096, 4096, 7), tag + "device-to-device copy moves bytes");
}

/// Room for three items of the kernel with the widest staging side, and at
/// least a page.
DevicePtr allocateStaging(Device &dev, const KernelSet &ks,
                          const std::string &tag) {
  int64_t maxStaging = 0;
  for (const KernelInfo &k : ks.kernels())
    maxStaging = std::max<int64_t>(maxStaging, k.stagingStride * 3);
  maxStaging = std::max<int64_t>(maxStaging, 4096);
  DevicePtr staging;
  if (maxStaging) {
    auto s = dev.allocate(uint64_t(maxStaging));
    expect(s.ok(), tag + "allocate staging");
    if (s.ok())
      staging = *s;
  }
  return staging;
}

/// One kernel through the validating launcher: sources filled with
/// deterministic bytes, destinations poisoned, every segment compared after.
void checkKernelMovesBytes(const SuiteContext &ctx, KernelLauncher &launcher,
                           const KernelInfo &k) {
  Device &dev = ctx.dev;
  DevicePtr arena = ctx.arena, staging = ctx.staging;
  const std::string &tag = ctx.tag;
  // Three items; every position takes the next id from the top of its
  // entity's range (slots sit at the top of a row space, far into the
  // arena), so no entity repeats in the batch.
  size_t per = k.idTuple.size();
  std::vector<std::string> entities;
  std::vector<int64_t> perEntity, rangeOf;
  for (const KernelIdSlot &slot : k.idTuple) {
    auto it = std::find(entities.begin(), entities.end(), slot.entity);
    if (it == entities.end()) {
      entities.push_back(slot.entity);
      perEntity.push_back(1);
      rangeOf.push_back(slot.idMax);
    } else {
      ++perEntity[size_t(it - entities.begin())];
    }
  }
  int64_t items = 3;
  for (size_t e = 0; e < entities.size(); ++e) {
    int64_t range = rangeOf[e];
    if (entities[e] == "slot" && ctx.liveSlots >= 0)
      range = std::min(range, ctx.liveSlots);
    items = std::min<int64_t>(items, range / perEntity[e]);
  }
  if (items <= 0 || per == 0)
    return;
  std::vector<int32_t> ids;
  std::vector<int64_t> taken(entities.size(), 0);
  for (int64_t i = 0; i < items; ++i)
    for (const KernelIdSlot &slot : k.idTuple) {
      size_t e =
          size_t(std::find(entities.begin(), entities.end(), slot.entity) -
                 entities.begin());
      ids.push_back(int32_t(slot.idMax - 1 - taken[e]++));
    }
  auto idOf = [&](int64_t item, const KernelSegment &seg, bool src) -> int64_t {
    int index = src ? seg.srcId : seg.dstId;
    return index < 0 ? item : ids[size_t(item) * per + size_t(index)];
  };
  // Destinations: poison, all of them first. Then sources: deterministic
  // bytes (one item's destination may border another's source).
  for (int64_t i = 0; i < items; ++i)
    for (const KernelSegment &seg : k.segments) {
      uint64_t d = uint64_t(idOf(i, seg, false) * seg.dstStride + seg.dstOff);
      (void)dev.fill((k.dstIsStaging ? staging : arena) + d, 0xA5, uint64_t(seg.bytes));
    }
  for (int64_t i = 0; i < items; ++i)
    for (const KernelSegment &seg : k.segments) {
      uint64_t s = uint64_t(idOf(i, seg, true) * seg.srcStride + seg.srcOff);
      auto data = pattern(s, uint64_t(seg.bytes), k.srcIsStaging ? 3 : 1);
      (void)dev.copyToDevice((k.srcIsStaging ? staging : arena) + s, data.data(), data.size());
    }
  Status run = launcher.run(k, ids, staging);
  expectOk(run, tag + "launch " + k.name);
  expectOk(dev.synchronize(), tag + "synchronize after " + k.name);
  bool same = run.ok();
  for (int64_t i = 0; i < items && same; ++i)
    for (const KernelSegment &seg : k.segments) {
      uint64_t s = uint64_t(idOf(i, seg, true) * seg.srcStride + seg.srcOff);
      uint64_t d = uint64_t(idOf(i, seg, false) * seg.dstStride + seg.dstOff);
      std::vector<uint8_t> got(size_t(seg.bytes));
      (void)dev.copyFromDevice(
          got.data(), (k.dstIsStaging ? staging : arena) + d, got.size());
      if (got != pattern(s, uint64_t(seg.bytes), k.srcIsStaging ? 3 : 1)) {
        same = false;
        break;
      }
    }
  expect(same, tag + k.name + " moves every segment's bytes");
}

/// A checkpoint keep -> resume round trip: gather slot A's image into
/// staging (keep), scatter it into a poisoned slot B (resume), gather B
/// again: the two images must be byte-identical.
void checkStagedRoundTrip(const SuiteContext &ctx, KernelLauncher &launcher) {
  Device &dev = ctx.dev;
  DevicePtr arena = ctx.arena, staging = ctx.staging;
  const std::string &tag = ctx.tag;
  const KernelInfo *gather = ctx.ks.byKind("image_gather");
  const KernelInfo *scatter = ctx.ks.byKind("image_scatter");
  if (!(gather && scatter && gather->idMax >= 2 && staging))
    return;
  int32_t a = int32_t(gather->idMax - 1), b = int32_t(gather->idMax - 2);
  for (const KernelSegment &seg : gather->segments) {
    auto data = pattern(uint64_t(a * seg.srcStride + seg.srcOff),
                        uint64_t(seg.bytes), 11);
    (void)dev.copyToDevice(arena + uint64_t(a * seg.srcStride + seg.srcOff),
                           data.data(), data.size());
    (void)dev.fill(arena + uint64_t(b * seg.srcStride + seg.srcOff), 0xA5,
                   uint64_t(seg.bytes));
  }
  uint64_t image = uint64_t(gather->stagingStride);
  expectOk(launcher.run(*gather, {a}, staging),
           tag + "keep: gather slot image");
  expectOk(launcher.run(*scatter, {b}, staging),
           tag + "resume: scatter into another slot");
  expectOk(launcher.run(*gather, {b}, staging + image),
           tag + "gather the resumed slot");
  expectOk(dev.synchronize(), tag + "synchronize the round trip");
  std::vector<uint8_t> kept(image), resumed(image);
  (void)dev.copyFromDevice(kept.data(), staging, image);
  (void)dev.copyFromDevice(resumed.data(), staging + image, image);
  expect(kept == resumed,
         tag + "checkpoint keep -> resume round trip is byte-identical (" +
             std::to_string(image) + " bytes)");
}

/// The same round trip through PAGE units, no staging: store slot A's
/// image into units (a copy checkpoint kept), restore the units into a
/// poisoned slot B (resumed), gather both: the images must be identical.
/// Then the store's refusals: a unit twice, a unit past the range, two
/// stores into the same units.
void checkPageUnitRoundTrip(const SuiteContext &ctx, KernelLauncher &launcher) {
  Device &dev = ctx.dev;
  DevicePtr arena = ctx.arena, staging = ctx.staging;
  const std::string &tag = ctx.tag;
  const KernelInfo *gather = ctx.ks.byKind("image_gather");
  const KernelInfo *store = ctx.ks.byKind("image_store");
  const KernelInfo *restore = ctx.ks.byKind("image_restore");
  if (!(store && restore && gather && staging && store->idTuple.size() >= 2 &&
        store->idTuple[0].idMax >= 2 &&
        store->idTuple[1].idMax >= int64_t(store->idTuple.size())))
    return;
  int32_t a = int32_t(store->idTuple[0].idMax - 1), b = a - 1;
  std::vector<int32_t> keep{a}, resume{b};
  for (size_t u = 1; u < store->idTuple.size(); ++u) {
    int32_t unit = int32_t(store->idTuple[u].idMax - 1 - int64_t(u));
    keep.push_back(unit);
    resume.push_back(unit);
  }
  for (const KernelSegment &seg : gather->segments) {
    auto data = pattern(uint64_t(a * seg.srcStride + seg.srcOff),
                        uint64_t(seg.bytes), 13);
    (void)dev.copyToDevice(arena + uint64_t(a * seg.srcStride + seg.srcOff),
                           data.data(), data.size());
    (void)dev.fill(arena + uint64_t(b * seg.srcStride + seg.srcOff), 0xA5,
                   uint64_t(seg.bytes));
  }
  uint64_t image = uint64_t(gather->stagingStride);
  expectOk(launcher.run(*store, keep),
           tag + "keep: store slot image into PAGE units");
  expectOk(launcher.run(*restore, resume),
           tag + "resume: restore PAGE units into another slot");
  expectOk(launcher.run(*gather, {a}, staging), tag + "gather the kept slot");
  expectOk(launcher.run(*gather, {b}, staging + image),
           tag + "gather the restored slot");
  expectOk(dev.synchronize(), tag + "synchronize the PAGE-unit round trip");
  std::vector<uint8_t> kept(image), resumed(image);
  (void)dev.copyFromDevice(kept.data(), staging, image);
  (void)dev.copyFromDevice(resumed.data(), staging + image, image);
  expect(kept == resumed,
         tag + "PAGE-unit store -> restore round trip is byte-identical (" +
             std::to_string(image) + " bytes in " +
             std::to_string(store->idTuple.size() - 1) + " units)");
  std::vector<int32_t> twice = keep;
  twice.back() = twice[1];
  expect(!launcher.run(*store, twice).ok(),
         tag + "a store naming one unit twice is refused");
  std::vector<int32_t> past = keep;
  past.back() = int32_t(store->idTuple.back().idMax);
  expect(!launcher.run(*store, past).ok(),
         tag + "a unit id past the block range is refused");
  std::vector<int32_t> two = keep;
  two.insert(two.end(), resume.begin(), resume.end());
  expect(!launcher.run(*store, two).ok(),
         tag + "two stores into the same units in one batch are refused");
}

/// What a kernel cannot check, the launcher must.
void checkLauncherRefusals(const SuiteContext &ctx, KernelLauncher &launcher) {
  const KernelSet &ks = ctx.ks;
  const std::string &tag = ctx.tag;
  if (const KernelInfo *copy = ks.byKind("slot_copy") ? ks.byKind("slot_copy")
                                                      : ks.byKind("group_copy")) {
    int32_t top = int32_t(copy->idMax - 1);
    expect(!launcher.run(*copy, {top, int32_t(copy->idMax)}).ok(),
           tag + "an id past the range is refused");
    expect(!launcher.run(*copy, {top - 1, top, top - 2, top}).ok(),
           tag + "a destination written twice in one batch is refused");
    expect(!launcher.run(*copy, {top - 1, top, top, top - 2}).ok(),
           tag + "an entry both read and written in one batch is refused");
    expect(!launcher.run(*copy, {top}).ok(), tag + "half a pair is refused");
  }
  if (const KernelInfo *gather = ks.byKind("image_gather"))
    expect(!launcher.run(*gather, {0}).ok(), tag + "a gather without staging is refused");
}

/// The carved arena and its DLPack views: a view's address arithmetic must
/// land where the kernels' segments say the bytes are.
void checkCarvedArena(Device &dev, const Artifact &artifact,
                      const KernelSet &ks, const std::string &tag) {
  auto carved = DeviceArena::create(dev, artifact);
  expect(carved.ok(), tag + "carve the arena" +
                          (carved.ok() ? "" : ": " + carved.error().message));
  if (!carved.ok())
    return;
  expect(carved->bytes() == ks.allocationBytes(), tag + "arena size from the manifest");
  for (const std::string &name : carved->fieldNames()) {
    auto v = carved->field(name);
    expect(v.ok(), tag + "view of field " + name);
    if (!v.ok())
      continue;
    expect(v->shape.size() >= 2 && v->strides.size() == v->shape.size() &&
               v->data == carved->base().addr &&
               v->byteOffset < uint64_t(carved->bytes()),
           tag + "DLPack view of " + name + " is well formed");
    // Write one element through the view of the last entry, read it back
    // as raw bytes at the same place.
    int64_t item = v->dtypeBits / 8;
    int64_t last = v->shape[1] - 1;
    uint64_t at = v->byteOffset + uint64_t((v->shape[0] - 1) * v->strides[0] +
                                           last * v->strides[1]) * uint64_t(item);
    expect(at + uint64_t(item) <= uint64_t(carved->bytes()),
           tag + "the last element of " + name + " lies inside the arena");
  }
  if (const KernelInfo *copy = ks.byKind("slot_copy")) {
    // Every plane view starts where the slot copy's segments place it.
    for (const KernelSegment &seg : copy->segments) {
      bool found = false;
      for (const char *plane : {"nope", "rope", "kv"}) {
        auto v = carved->plane(plane);
        if (v.ok() && int64_t(v->byteOffset) == seg.srcOff)
          found = true;
      }
      expect(found, tag + "a plane view starts at slot-copy segment offset " +
                        std::to_string(seg.srcOff));
    }
  }
}

/// The whole suite on one device, check groups in a fixed order. The
/// launcher lives to the end, past the carved-arena checks, as it always has.
void suite(Device &dev, const Artifact &artifact, const KernelSet &ks,
           int64_t liveSlots) {
  std::string tag = std::string("[") + dev.name() + "] ";
  auto arenaOr = dev.allocate(uint64_t(ks.allocationBytes()));
  expect(arenaOr.ok(),
         tag + "allocate the arena of " + std::to_string(ks.allocationBytes()) +
             " bytes" + (arenaOr.ok() ? "" : ": " + arenaOr.error().message));
  if (!arenaOr.ok())
    return;
  SuiteContext ctx{dev,       ks, tag, *arenaOr, uint64_t(ks.allocationBytes()),
                   DevicePtr{}, liveSlots};
  checkByteMoves(ctx);

  expectOk(dev.loadKernels(artifact), tag + "load " + dev.codeSection());
  KernelLauncher launcher(dev, ctx.arena);
  ctx.staging = allocateStaging(dev, ks, tag);
  for (const KernelInfo &k : ks.kernels())
    checkKernelMovesBytes(ctx, launcher, k);
  checkStagedRoundTrip(ctx, launcher);
  checkPageUnitRoundTrip(ctx, launcher);
  checkLauncherRefusals(ctx, launcher);
  if (ctx.staging)
    expectOk(dev.release(ctx.staging), tag + "release staging");
  expectOk(dev.release(ctx.arena), tag + "release the arena");

  checkCarvedArena(dev, artifact, ks, tag);
}

/// XXH64 of `spans` of `base`, read back in chunks, as 16 hex digits.
std::string hashSpans(Device &dev, DevicePtr base, const std::vector<pool::plan::Span> &spans) {
  XXH64_state_t *st = XXH64_createState();
  XXH64_reset(st, 0);
  std::vector<uint8_t> chunk(size_t(16) << 20);
  for (const pool::plan::Span &sp : spans)
    for (int64_t o = 0; o < sp.len; o += int64_t(chunk.size())) {
      int64_t n = std::min<int64_t>(int64_t(chunk.size()), sp.len - o);
      (void)dev.copyFromDevice(chunk.data(), base + uint64_t(sp.off + o), uint64_t(n));
      XXH64_update(st, chunk.data(), size_t(n));
    }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)XXH64_digest(st));
  XXH64_freeState(st);
  return hex;
}

/// The plan's fill for `sp` of `base` (space 1: the arena, 2: staging).
void uploadPattern(Device &dev, DevicePtr base, const pool::plan::Span &sp, uint64_t space) {
  std::vector<uint8_t> chunk(size_t(16) << 20);
  for (int64_t o = 0; o < sp.len; o += int64_t(chunk.size())) {
    int64_t n = std::min<int64_t>(int64_t(chunk.size()), sp.len - o);
    for (int64_t b = 0; b < n; b += 8) {
      uint64_t w = pool::plan::patternWord(uint64_t(sp.off + o + b), space);
      std::memcpy(chunk.data() + b, &w, size_t(std::min<int64_t>(8, n - b)));
    }
    (void)dev.copyToDevice(base + uint64_t(sp.off + o), chunk.data(), uint64_t(n));
  }
}

/// Every case of `plan` through the validating launcher; each output's hash
/// must be the reference-checked host lowering's.
void planSuite(Device &dev, const Artifact &artifact, const KernelSet &ks,
               const pool::plan::Plan &plan) {
  std::string tag = std::string("[") + dev.name() + " plan] ";
  if (plan.arenaBytes != ks.allocationBytes()) {
    expect(false, tag + "the plan's arena (" + std::to_string(plan.arenaBytes) +
                      " bytes) is this artifact's (" +
                      std::to_string(ks.allocationBytes()) + ")");
    return;
  }
  auto arena = dev.allocate(uint64_t(plan.arenaBytes));
  expectOk(arena.ok() ? Status::success() : Status(arena.error()), tag + "allocate the arena");
  if (!arena.ok())
    return;
  int64_t maxStaging = 4096;
  for (const pool::plan::Case &c : plan.cases)
    maxStaging = std::max(maxStaging, c.staging);
  auto staging = dev.allocate(uint64_t(maxStaging));
  expectOk(dev.loadKernels(artifact), tag + "load " + dev.codeSection());
  if (!staging.ok()) {
    expect(false, tag + "allocate staging");
    (void)dev.release(*arena);
    return;
  }
  KernelLauncher launcher(dev, *arena);
  int matched = 0;
  for (const pool::plan::Case &c : plan.cases) {
    const KernelInfo *k = ks.byName(c.kernel);
    if (!k) {
      expect(false, tag + c.name + ": the artifact has no kernel " + c.kernel);
      continue;
    }
    for (const pool::plan::Span &sp : c.poison)
      (void)dev.fill(*arena + uint64_t(sp.off), 0xA5, uint64_t(sp.len));
    if (c.staging)
      (void)dev.fill(*staging, 0xA5, uint64_t(c.staging));
    for (const pool::plan::Span &sp : c.fill)
      uploadPattern(dev, *arena, sp, 1);
    for (const pool::plan::Span &sp : c.fillStaging)
      uploadPattern(dev, *staging, sp, 2);
    Status run = launcher.run(*k, c.ids, *staging);
    expectOk(run, tag + "launch " + c.name);
    expectOk(dev.synchronize(), tag + "synchronize after " + c.name);
    if (!run.ok())
      continue;
    std::string got = c.hashStaging.empty() ? hashSpans(dev, *arena, c.hash)
                                            : hashSpans(dev, *staging, c.hashStaging);
    matched += got == c.expect;
    expect(got == c.expect, tag + c.name + " (" + c.kernel + ", " +
                                std::to_string(c.items) + " items): output " + got +
                                ", reference-checked host lowering " + c.expect);
  }
  std::printf("%s%d of %zu cases match the reference-checked hashes\n", tag.c_str(),
              matched, plan.cases.size());
  (void)dev.release(*staging);
  (void)dev.release(*arena);
}

} // namespace

int main(int argc, char **argv) {
  const char *usage =
      "usage: pool-device-check MODEL.poolpack [--backend host|cuda|hip|all] [--plan PLAN]\n";
  if (argc < 2) {
    std::fputs(usage, stderr);
    return 2;
  }
  std::string backend = "all", planPath;
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc || (std::strcmp(argv[i], "--backend") != 0 &&
                          std::strcmp(argv[i], "--plan") != 0)) {
      std::fputs(usage, stderr);
      return 2;
    }
    (std::strcmp(argv[i], "--backend") == 0 ? backend : planPath) = argv[i + 1];
  }
  pool::plan::Plan plan;
  if (!planPath.empty()) {
    std::string why;
    if (!pool::plan::readPlan(planPath, plan, why)) {
      std::fprintf(stderr, "pool-device-check: %s\n", why.c_str());
      return 1;
    }
  }
  auto artifact = readArtifactFile(argv[1]);
  if (!artifact.ok()) {
    std::fprintf(stderr, "pool-device-check: %s\n", artifact.error().message.c_str());
    return 1;
  }
  auto ks = KernelSet::fromArtifact(*artifact);
  if (!ks.ok()) {
    std::fprintf(stderr, "pool-device-check: %s\n", ks.error().message.c_str());
    return 1;
  }
  auto layout = readSolvedLayout(*artifact);
  if (!layout.ok()) {
    std::fprintf(stderr, "pool-device-check: %s\n", layout.error().message.c_str());
    return 1;
  }
  int64_t liveSlots = layout->rowSpace && layout->rowSpace->numSlots
                          ? *layout->rowSpace->numSlots
                          : -1;
  std::printf("artifact %s: model %s, fingerprint %s, %zu kernels, arena %lld bytes\n",
              argv[1], ks->model().c_str(), ks->fingerprint().c_str(),
              ks->kernels().size(), (long long)ks->allocationBytes());
  for (const BackendInfo &b : probeBackends())
    std::printf("backend %-4s %s: %s\n", b.name.c_str(),
                b.available ? "present" : "absent", b.detail.c_str());
  for (const char *name : {"host", "cuda", "hip"}) {
    if (backend != "all" && backend != name)
      continue;
    auto dev = openDevice(name);
    if (!dev.ok()) {
      if (backend == name)
        expect(false, std::string("open ") + name + ": " + dev.error().message);
      continue;
    }
    suite(**dev, *artifact, *ks, liveSlots);
    if (!planPath.empty())
      planSuite(**dev, *artifact, *ks, plan);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
