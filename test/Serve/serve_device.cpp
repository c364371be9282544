//===- serve_device.cpp - The serving loop on any backend, outputs only ---===//
//
//   serve_device ARTIFACT BACKEND TRACE NUM_SPEC INTERVAL on|off [MODEL_KERNEL]
//
// MODEL_KERNEL: a compiled model kernel (libpoolmodel-MODEL[-cuda].so) to
// forward through instead of the manifest-driven reference model.
//
// Replays TRACE (a file or multi-turn:...) through the engine on BACKEND
// (host, cuda, hip) and prints pool-serve's --outputs lines: one per
// request, its output and final-state checksums. Plain C++17 over
// libpoolrt (no CLI11, no HTTP): bench/gpu/run.sh builds it with g++ on a
// GPU machine, where the lines are compared with the host's (pool-serve
// here) byte for byte. The summary goes to stderr.
//
// POOLC_TIER=SPEC (pool-serve's --tier, e.g. host:12GiB) replays through
// the offload tier; the summary then gives its shares and latencies.
//
//===----------------------------------------------------------------------===//

#include "poolrt/serve/Engine.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace poolrt;
using namespace poolrt::serve;

int main(int argc, char **argv) {
  if (argc != 7 && argc != 8) {
    std::fprintf(stderr, "usage: %s ARTIFACT BACKEND TRACE NUM_SPEC INTERVAL on|off [MODEL_KERNEL]\n", argv[0]);
    return 2;
  }
  auto artifact = readArtifactFile(argv[1]);
  if (!artifact.ok()) {
    std::fprintf(stderr, "serve_device: error: %s\n", artifact.error().message.c_str());
    return 1;
  }
  auto dev = openDevice(argv[2]);
  if (!dev.ok()) {
    std::fprintf(stderr, "serve_device: error: %s\n", dev.error().message.c_str());
    return 1;
  }
  ServeOptions o;
  o.numSpec = std::atoll(argv[4]);
  o.policy.checkpointIntervalTokens = std::atoll(argv[5]);
  o.policy.prefixCaching = std::string(argv[6]) == "on";
  if (argc == 8)
    o.modelKernel = argv[7];
  if (const char *tier = std::getenv("POOLC_TIER"))
    o.tier = tier;
  auto engine = Engine::create(*artifact, **dev, o);
  if (!engine.ok()) {
    std::fprintf(stderr, "serve_device: error: %s\n", engine.error().message.c_str());
    return 1;
  }
  Engine &e = **engine;
  TraceOptions to;
  to.tokensPerPrefixHash = e.layout().geometry.hashBlockSize;
  auto trace = loadTrace(argv[3], to);
  if (!trace.ok()) {
    std::fprintf(stderr, "serve_device: error: %s\n", trace.error().message.c_str());
    return 1;
  }
  e.submit(*trace);
  auto t0 = std::chrono::steady_clock::now();
  Status ran = e.run();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!ran.ok()) {
    std::fprintf(stderr, "serve_device: error: replay stopped: %s\n", ran.error().message.c_str());
    return 1;
  }
  if (Status d = e.drainTier(); !d.ok()) {
    std::fprintf(stderr, "serve_device: error: %s\n", d.error().message.c_str());
    return 1;
  }
  // The lines pool-serve's --outputs writes.
  std::fputs(outcomesJsonl(e.outcomes()).c_str(), stdout);
  EngineSnapshot x = e.snapshot();
  std::fprintf(stderr,
               "serve_device %s on %s (%s), prefix cache %s: %" PRId64 " requests, hit %.1f%%, "
               "%" PRId64 " image stores, %" PRId64 " restores, %" PRId64
               " fork copies, %" PRId64 " model accesses, %.1f s\n",
               e.layout().model.c_str(), (*dev)->name(), e.model().describe().c_str(), argv[6], x.requestsTotal,
               100 * x.stats.hit(), x.imageStores, x.imageRestores, x.forkCopies, e.model().accesses(), s);
  if (e.hasTier()) {
    TierLatencies lat = e.tierLatencyMicros();
    auto pct = latencyPercentile;
    int64_t full = x.stats.fullTokens;
    std::fprintf(stderr,
                 "serve_device tier %s: %" PRId64 " lookups, prompt tokens HBM %.1f%% / tier %.1f%% "
                 "(of %" PRId64 "), %" PRId64 " late, %" PRId64 " failed, %" PRId64
                 " refused loads; %" PRId64 " B loaded; fetch p50 %.0f us p99 %.0f us; "
                 "restore on the device p50 %.0f us p99 %.0f us (%zu loads)\n",
                 o.tier.c_str(), x.tierLookups, full ? 100.0 * double(x.stats.cachedTokens) / double(full) : 0.0,
                 full ? 100.0 * double(x.tierHitTokens) / double(full) : 0.0, full, x.tierLoadsLate,
                 x.tierLoadsFailed, x.tierObjectsRefused, x.tierBytesLoaded, pct(lat.fetch, 0.5),
                 pct(lat.fetch, 0.99), pct(lat.restore, 0.5), pct(lat.restore, 0.99), lat.restore.size());
  }
  return 0;
}
