//===- tier_load.cpp - One tier load from host memory onto a device -------===//
//
//   pool-tier-load ARTIFACT BACKEND [PREFIX_TOKENS [ITERATIONS]]
//
// The tier seed's transfer figure (seed 004: "one load is 21.3 MiB per rank
// ... 40 ms p50 server-side retrieve"), measured through the code that
// serves: a prefix of PREFIX_TOKENS (default 4096) is stored as tier
// objects in the host tier, in the device's host memory (page-locked on a
// GPU: Device::allocateHost), the last one with its checkpoint. One load
// is what Engine::tierRestore does for a hit of that prefix: get every
// object from the host tier, decode it, and TierDevice::loadKv /
// loadCheckpoint them onto the device (one host-to-device copy per object's
// KV, one generated block_scatter per 32 MiB staged, the checkpoint's copy
// and image_scatter or group spans), then synchronize.
//
// In the same run, for the same bytes: cuMemcpyHtoD (the backend's
// copyToDevice) of the objects from the tier's own page-locked buffers
// (the link's speed for exactly these copies, no kernels), and of one
// pageable buffer of the same size (what a tier in ordinary memory gets).
//
// Before timing, the load is checked: every object is gathered back from
// the device with the artifact's block_gather / image_gather and must be
// byte-identical to the object stored. A mismatch exits 1.
//
// Plain C++17 over libpoolrt: CMake builds it here (ctest runs it on the
// host backend), bench/gpu/run.sh builds it with g++ on the GPU machine.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Checked.h"
#include "poolrt/Arena.h"
#include "poolrt/Artifact.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/SolvedLayout.h"
#include "poolrt/Tier.h"
#include "poolrt/TierTransfer.h"
#include "poolrt/serve/TierDevice.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace poolrt;
using Clock = std::chrono::steady_clock;

namespace {

int fail(const std::string &m) {
  std::fprintf(stderr, "pool-tier-load: error: %s\n", m.c_str());
  return 1;
}

double percentile(const std::vector<double> &v, double q) { return latencyPercentile(v, q); }

double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

std::string randomBytes(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    for (int b = 0; b < 8; ++b)
      s[i + size_t(b)] = char((v >> (8 * b)) & 0xff);
  }
  return s;
}

// The command line: ARTIFACT BACKEND [PREFIX_TOKENS [ITERATIONS]].
struct Options {
  const char *artifact = nullptr;
  const char *backend = nullptr;
  int64_t prefixTokens = 4096;
  int iterations = 200;
};

// Reads the command line into `opt`; 0 when it is usable, else the exit code.
int parseOptions(int argc, char **argv, Options &opt) {
  if (argc < 3 || argc > 5) {
    std::fprintf(stderr, "usage: %s ARTIFACT BACKEND [PREFIX_TOKENS [ITERATIONS]]\n", argv[0]);
    return 2;
  }
  opt.artifact = argv[1];
  opt.backend = argv[2];
  opt.prefixTokens = argc > 3 ? std::atoll(argv[3]) : 4096;
  opt.iterations = argc > 4 ? std::atoi(argv[4]) : 200;
  if (opt.prefixTokens < 1 || opt.iterations < 1)
    return fail("PREFIX_TOKENS and ITERATIONS must be positive");
  return 0;
}

// What one load works with: the device, the prefix's shape, and the prefix
// stored in the host tier.
struct Bench {
  Device &d;
  TierDevice &T;
  const TierGeometry &geo;
  TierBackend &tier;
  int64_t cb;
  int64_t objects;
  const KernelInfo *scatter;
  int32_t stateId;
  std::vector<TierKey> keys;
  std::vector<std::string> stored;
  int64_t loadBytes = 0;
};

// Stores the prefix's objects in the host tier, the last one with its checkpoint.
Status storePrefix(Bench &B) {
  for (int64_t i = 0; i < B.objects; ++i) {
    TierKey k{B.geo.layoutFingerprint, 0x9e3779b97f4a7c15ull * uint64_t(i + 1)};
    bool last = i + 1 == B.objects;
    std::string kv = randomBytes(size_t(B.cb * B.geo.kvBlockBytes), uint32_t(2 * i + 1));
    std::string ck = last && B.geo.stateful()
                         ? randomBytes(size_t(B.geo.checkpointBytes), uint32_t(2 * i + 2))
                         : std::string();
    B.stored.push_back(encodeTierObject(k, B.cb, kv, ck));
    B.loadBytes += int64_t(B.stored.back().size());
    if (TierResult p = B.tier.put(k.text(), B.stored.back()); !p.ok())
      return Error::invalid("host tier put: " + p.message);
    B.keys.push_back(k);
  }
  return Status::success();
}

// Blocks [b, b + cb) of object i land in blocks i*cb + b, spread over the
// pool's ids (the last ones: never 0, so a wrong id shows).
std::vector<int32_t> idsOf(const Bench &B, int64_t i) {
  std::vector<int32_t> ids;
  for (int64_t b = 0; b < B.cb; ++b)
    ids.push_back(int32_t(B.scatter->idMax - 1 - (i * B.cb + b)));
  return ids;
}

// The microseconds of one load's host part (get + decode) and device part.
struct Phase {
  double get = 0, device = 0;
};

// One load of the whole prefix from the host tier onto the device, timed.
Status load(const Bench &B, Phase &ph) {
  auto t0 = Clock::now();
  std::vector<TierGet> got;
  std::vector<TierObjectView> views(static_cast<size_t>(B.objects));
  for (int64_t i = 0; i < B.objects; ++i) {
    got.push_back(B.tier.get(B.keys[size_t(i)].text()));
    if (!got.back().ok())
      return Error::invalid("get " + B.keys[size_t(i)].text() + ": " + got.back().message);
    TierResult r = decodeTierObject(got.back().bytes, B.keys[size_t(i)], B.geo, B.cb,
                                    views[size_t(i)], got.back().verified);
    if (!r.ok())
      return Error::invalid(r.message);
  }
  auto t1 = Clock::now();
  std::vector<TierDevice::KvLoad> loads;
  for (int64_t i = 0; i < B.objects; ++i)
    loads.push_back({&views[size_t(i)], 0, idsOf(B, i)});
  if (Status k = B.T.loadKv(loads); !k.ok())
    return k;
  if (B.stateId >= 0)
    if (Status k = B.T.loadCheckpoint(views.back(), B.stateId); !k.ok())
      return k;
  if (Status y = B.d.synchronize(); !y.ok())
    return y;
  auto t2 = Clock::now();
  ph.get = us(t0, t1);
  ph.device = us(t1, t2);
  return Status::success();
}

// The check: a load, then every object gathered back and compared.
Status checkLoad(const Bench &B) {
  Phase warm;
  if (Status s = load(B, warm); !s.ok())
    return s;
  for (int64_t i = 0; i < B.objects; ++i) {
    bool last = i + 1 == B.objects;
    auto back = B.T.save(B.keys[size_t(i)], idsOf(B, i), last ? B.stateId : -1);
    if (!back.ok())
      return back.error();
    if (*back != B.stored[size_t(i)])
      return Error::invalid("object " + std::to_string(i) + " gathered back from the device differs "
                            "from the one stored");
  }
  return Status::success();
}

// The timings of every row of the report, in microseconds.
struct Timings {
  std::vector<double> total, gets, device, pinned, pageable;
};

// Times `iterations` loads.
Status timeLoads(const Bench &B, int iterations, Timings &t) {
  for (int it = 0; it < iterations; ++it) {
    Phase ph;
    if (Status s = load(B, ph); !s.ok())
      return s;
    t.gets.push_back(ph.get);
    t.device.push_back(ph.device);
    t.total.push_back(ph.get + ph.device);
  }
  return Status::success();
}

// The copies alone, same bytes: from the tier's page-locked buffers, and
// from one pageable buffer.
Status timeCopies(const Bench &B, int iterations, Timings &t) {
  Device &d = B.d;
  auto scratch = d.allocate(uint64_t(B.loadBytes));
  if (!scratch.ok())
    return scratch.error();
  std::vector<TierGet> held;
  for (const TierKey &k : B.keys)
    held.push_back(B.tier.get(k.text()));
  std::string flat(size_t(B.loadBytes), '\1');
  for (int it = 0; it < iterations; ++it) {
    auto t0 = Clock::now();
    uint64_t off = 0;
    for (const TierGet &g : held) {
      if (Status c = d.copyToDevice(*scratch + off, g.bytes.data(), g.bytes.size()); !c.ok())
        return c;
      off += g.bytes.size();
    }
    auto t1 = Clock::now();
    if (Status c = d.copyToDevice(*scratch, flat.data(), flat.size()); !c.ok())
      return c;
    auto t2 = Clock::now();
    t.pinned.push_back(us(t0, t1));
    t.pageable.push_back(us(t1, t2));
  }
  (void)d.release(*scratch);
  return Status::success();
}

// Prints what one load is and the table of timings.
void printReport(const Bench &B, const SolvedLayout &L, int iterations, const Timings &t) {
  Device &d = B.d;
  int64_t bs = L.geometry.blockSize;
  int64_t loadBytes = B.loadBytes;
  double mib = double(loadBytes) / double(1 << 20);
  auto gbps = [&](double micros) { return micros > 0 ? double(loadBytes) / micros / 1e3 : 0; };
  std::printf("tier load on %s (%s): %s, host tier in %s memory\n", d.name(),
              d.description().c_str(), L.model.c_str(), d.hostMemoryKind().c_str());
  std::printf("  one load: a %lld-token prefix = %lld objects of %lld block(s) (%lld B KV each)%s, "
              "%lld B = %.2f MiB\n",
              (long long)(B.objects * B.cb * bs), (long long)B.objects, (long long)B.cb,
              (long long)(B.cb * B.geo.kvBlockBytes),
              B.stateId >= 0 ? (" + the checkpoint (" + std::to_string(B.geo.checkpointBytes) + " B)").c_str() : "",
              (long long)loadBytes, mib);
  std::printf("  staging: %lld blocks per block_scatter\n", (long long)B.T.stagingBlocks());
  std::printf("  checked: every object gathered back from the device is byte-identical to the one stored\n");
  std::printf("  %d loads:\n", iterations);
  std::printf("  %-44s %10s %10s %10s\n", "what", "p50 us", "p99 us", "GB/s p50");
  auto row = [&](const char *what, const std::vector<double> &v, bool rate = true) {
    std::printf("  %-44s %10.1f %10.1f ", what, percentile(v, 0.5), percentile(v, 0.99));
    if (rate)
      std::printf("%10.2f\n", gbps(percentile(v, 0.5)));
    else
      std::printf("%10s\n", "-");
  };
  row("tier load (get + decode + copies + scatter)", t.total);
  row("  of it: get + decode (host)", t.gets, false);
  row("  of it: copies + scatter kernels, synced", t.device);
  row("copyToDevice from the tier's own buffers", t.pinned);
  row("copyToDevice from one pageable buffer", t.pageable);
  std::printf("  load p50 / the same buffers' copy p50: %.3f\n",
              percentile(t.total, 0.5) / std::max(1e-9, percentile(t.pinned, 0.5)));
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (int rc = parseOptions(argc, argv, opt))
    return rc;
  auto artifact = readArtifactFile(opt.artifact);
  if (!artifact.ok())
    return fail(artifact.error().message);
  auto layout = readSolvedLayout(*artifact);
  if (!layout.ok())
    return fail(layout.error().message);
  const SolvedLayout &L = *layout;
  auto dev = openDevice(opt.backend);
  if (!dev.ok())
    return fail(dev.error().message);
  Device &d = **dev;
  if (Status k = d.loadKernels(*artifact); !k.ok())
    return fail(k.error().message);
  auto arena = DeviceArena::create(d, L);
  if (!arena.ok())
    return fail(arena.error().message);
  KernelLauncher launcher(d, arena->base());
  auto geo = tierGeometryOf(L);
  if (!geo.ok())
    return fail(geo.error().message);
  int64_t bs = L.geometry.blockSize;
  // The engine's default object: 256 tokens rounded up to whole blocks.
  int64_t cb = std::max<int64_t>(1, poolrt::ceilDiv(256, bs));
  int64_t objects = std::max<int64_t>(1, opt.prefixTokens / (cb * bs));
  auto td = TierDevice::create(L, d, launcher, arena->base(), *geo, cb);
  if (!td.ok())
    return fail(td.error().message);
  TierDevice &T = **td;
  const KernelInfo *scatter = L.kernelByKind("block_scatter");
  int64_t blocksNeeded = objects * cb;
  if (blocksNeeded > scatter->idMax)
    return fail("the prefix needs " + std::to_string(blocksNeeded) + " blocks, the artifact has " +
                std::to_string(scatter->idMax));
  int32_t stateId = -1;
  if (geo->stateful()) {
    const KernelInfo *img = L.kernelByKind("image_scatter");
    int64_t states = img ? img->idMax : L.stateGroupCount();
    if (states < 1)
      return fail("a stateful geometry with no slot or group to restore into");
    stateId = int32_t(states - 1);
  }

  // The host tier in the device's host memory, holding the prefix.
  auto tier = makeHostTier(int64_t(4) << 30, hostMemoryOf(d));
  Bench B{d, T, *geo, *tier, cb, objects, scatter, stateId, {}, {}, 0};
  if (Status s = storePrefix(B); !s.ok())
    return fail(s.error().message);
  if (Status s = checkLoad(B); !s.ok())
    return fail(s.error().message);
  Timings t;
  if (Status s = timeLoads(B, opt.iterations, t); !s.ok())
    return fail(s.error().message);
  if (Status s = timeCopies(B, opt.iterations, t); !s.ok())
    return fail(s.error().message);
  printReport(B, L, opt.iterations, t);
  return 0;
}
