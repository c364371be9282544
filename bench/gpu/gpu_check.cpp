// gpu_check: run a .poolpack's sm_90 kernels on an NVIDIA GPU through the
// CUDA driver API (dlopen'ed libcuda.so.1, PTX loaded with cuModuleLoadData),
// check each case's output byte for byte against the host lowering (the
// XXH64 that pool-kernel-check --gpu-plan recorded for the same inputs), and
// time each kernel against cuMemcpyDtoDAsync moving the same bytes, and
// against what an engine does without generated kernels: one
// cuMemcpyDtoDAsync per contiguous run of every item (the reference's way).
// Further artifacts given as NAME=FILE (the same model compiled with
// another --gpu-unroll) are checked and timed beside it, side by side.
//
// Built on the GPU machine by bench/gpu/run.sh (it has CUDA and g++, none of
// our Debian packages): the artifact reader is the project's own, xxhash is
// header-only there.
#include "poolrt/Artifact.h"
#include "poolrt/SolvedLayout.h"
#include "tools/lib/KernelPlan.h"

#include <cuda.h>
#include <dlfcn.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define STR2(x) #x
#define STR(x) STR2(x)

struct Driver {
  void *lib = nullptr;
#define FN(name) decltype(&::name) name = nullptr;
  FN(cuInit) FN(cuDeviceGet) FN(cuDeviceGetName) FN(cuDevicePrimaryCtxRetain)
  FN(cuCtxSetCurrent) FN(cuCtxSynchronize) FN(cuMemAlloc) FN(cuMemFree)
  FN(cuMemcpyHtoD) FN(cuMemcpyDtoH) FN(cuMemcpyDtoDAsync) FN(cuMemsetD8)
  FN(cuModuleLoadData) FN(cuModuleGetFunction) FN(cuLaunchKernel)
  FN(cuEventCreate) FN(cuEventRecord) FN(cuEventSynchronize)
  FN(cuEventElapsedTime) FN(cuGetErrorString) FN(cuMemAllocHost) FN(cuMemFreeHost)
#undef FN
  bool load() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "gpu_check: no CUDA driver here (%s)\n", dlerror());
      return false;
    }
#define LOAD(name)                                                             \
  name = reinterpret_cast<decltype(name)>(dlsym(lib, STR(name)));              \
  if (!name) {                                                                 \
    std::fprintf(stderr, "gpu_check: libcuda lacks %s\n", STR(name));          \
    return false;                                                              \
  }
    LOAD(cuInit) LOAD(cuDeviceGet) LOAD(cuDeviceGetName)
    LOAD(cuDevicePrimaryCtxRetain) LOAD(cuCtxSetCurrent) LOAD(cuCtxSynchronize)
    LOAD(cuMemAlloc) LOAD(cuMemFree) LOAD(cuMemcpyHtoD) LOAD(cuMemcpyDtoH)
    LOAD(cuMemcpyDtoDAsync) LOAD(cuMemsetD8) LOAD(cuModuleLoadData)
    LOAD(cuModuleGetFunction) LOAD(cuLaunchKernel) LOAD(cuEventCreate)
    LOAD(cuEventRecord) LOAD(cuEventSynchronize) LOAD(cuEventElapsedTime)
    LOAD(cuGetErrorString) LOAD(cuMemAllocHost) LOAD(cuMemFreeHost)
#undef LOAD
    return true;
  }
};
static Driver cu;

static void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *msg = "?";
    cu.cuGetErrorString(r, &msg);
    std::fprintf(stderr, "gpu_check: %s failed: %s\n", what, msg);
    std::exit(1);
  }
}

// The plan pool-kernel-check --gpu-plan wrote (tools/lib/KernelPlan.h):
// the arena's size and the cases, each with its ids, fills, poisons, hashed
// spans and the hash the reference-checked host lowering produced.
using namespace pool::plan;

// Device 0's primary context with the PTX loaded, and what every case
// shares: the arena (one cuMemAlloc), staging, the id list, a pinned host
// chunk for transfers and two timing events.
struct Gpu {
  char name[256];
  CUmodule mod;
  CUdeviceptr arena, staging = 0, ids;
  int64_t arenaBytes = 0;
  uint8_t *host;
  CUevent e0, e1;
};
// The pinned host buffer; the most one transfer moves.
static const size_t hostChunk = size_t(64) << 20;

static void openGpu(Gpu &g, const poolrt::ArtifactSection &ptx) {
  check(cu.cuInit(0), "cuInit");
  CUdevice dev;
  check(cu.cuDeviceGet(&dev, 0), "cuDeviceGet");
  cu.cuDeviceGetName(g.name, sizeof g.name, dev);
  CUcontext ctx;
  check(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  std::string image = ptx.data + std::string(1, '\0');
  check(cu.cuModuleLoadData(&g.mod, image.data()), "cuModuleLoadData(PTX)");
}

static void allocateBuffers(Gpu &g, const Plan &plan) {
  int64_t maxStaging = 0, maxIds = 0;
  for (const Case &c : plan.cases) {
    maxStaging = std::max(maxStaging, c.staging);
    maxIds = std::max<int64_t>(maxIds, c.ids.size());
  }
  check(cu.cuMemAlloc(&g.arena, size_t(plan.arenaBytes)), "cuMemAlloc(arena)");
  g.arenaBytes = plan.arenaBytes;
  if (maxStaging)
    check(cu.cuMemAlloc(&g.staging, size_t(maxStaging)), "cuMemAlloc(staging)");
  check(cu.cuMemAlloc(&g.ids, size_t(maxIds) * 4 + 16), "cuMemAlloc(ids)");
  check(cu.cuMemAllocHost(reinterpret_cast<void **>(&g.host), hostChunk),
        "cuMemAllocHost");
}

// The plan's fill pattern for span `s` of `base`, through the host chunk.
static void upload(Gpu &g, CUdeviceptr base, Span s, uint64_t space) {
  for (int64_t o = 0; o < s.len; o += int64_t(hostChunk)) {
    int64_t n = std::min<int64_t>(int64_t(hostChunk), s.len - o);
    for (int64_t b = 0; b < n; b += 8) {
      uint64_t w = patternWord(uint64_t(s.off + o + b), space);
      std::memcpy(g.host + b, &w, size_t(std::min<int64_t>(8, n - b)));
    }
    check(cu.cuMemcpyHtoD(base + s.off + o, g.host, size_t(n)), "cuMemcpyHtoD");
  }
}

// One XXH64 over the spans of `base` in order, as 16 hex digits.
static std::string hashSpans(Gpu &g, CUdeviceptr base,
                             const std::vector<Span> &spans) {
  XXH64_state_t *st = XXH64_createState();
  XXH64_reset(st, 0);
  for (Span s : spans)
    for (int64_t o = 0; o < s.len; o += int64_t(hostChunk)) {
      int64_t n = std::min<int64_t>(int64_t(hostChunk), s.len - o);
      check(cu.cuMemcpyDtoH(g.host, base + s.off + o, size_t(n)),
            "cuMemcpyDtoH");
      XXH64_update(st, g.host, size_t(n));
    }
  uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  return std::string(hex);
}

// The generated kernels' signature: (arena, staging, ids, items, grid_x),
// grid (grid_x, items), 256 threads a block.
static void launch(Gpu &g, CUfunction fn, int64_t items, int64_t gx) {
  void *args[] = {&g.arena, &g.staging, &g.ids, &items, &gx};
  check(cu.cuLaunchKernel(fn, unsigned(gx), unsigned(items), 1, 256, 1, 1, 0,
                          nullptr, args, nullptr),
        "cuLaunchKernel");
}

// Mean milliseconds of 20 calls of `op`, after 3 warm-up calls.
template <typename Op> static double meanMs(Gpu &g, Op op) {
  for (int w = 0; w < 3; ++w)
    op();
  check(cu.cuEventRecord(g.e0, nullptr), "event");
  for (int r = 0; r < 20; ++r)
    op();
  check(cu.cuEventRecord(g.e1, nullptr), "event");
  check(cu.cuEventSynchronize(g.e1), "event");
  float ms;
  check(cu.cuEventElapsedTime(&ms, g.e0, g.e1), "elapsed");
  return ms / 20;
}

// Sets up case `c`'s inputs (poisons, fills, ids).
static void prepareCase(Gpu &g, const Case &c) {
  for (Span s : c.poison)
    check(cu.cuMemsetD8(g.arena + s.off, 0xA5, size_t(s.len)), "cuMemsetD8");
  if (c.staging)
    check(cu.cuMemsetD8(g.staging, 0xA5, size_t(c.staging)), "cuMemsetD8");
  for (Span s : c.fill)
    upload(g, g.arena, s, 1);
  for (Span s : c.fillStaging)
    upload(g, g.staging, s, 2);
  check(cu.cuMemcpyHtoD(g.ids, c.ids.data(), c.ids.size() * 4), "ids");
}

struct Timed {
  bool ok = false;
  double bestMs = 0, runtimeMs = 0, memMs = 0;
  int64_t bestGx = 0, runtimeGx = 0;
};

// Runs case `c` with `mod`'s kernel once on fresh inputs, compares its
// output's hash with the host lowering's, then times it: the best grid of
// a small sweep and the runtime's own grid, mean of 20 launches each.
static Timed timeKernel(Gpu &g, CUmodule mod, const Case &c,
                        const poolrt::KernelInfo *info) {
  Timed t;
  CUfunction fn;
  check(cu.cuModuleGetFunction(&fn, mod, c.kernel.c_str()), c.kernel.c_str());
  prepareCase(g, c);
  int64_t items = c.items;
  // Enough blocks to fill 132 SMs several times over, at least one vector
  // per thread.
  int64_t perItemVecs = c.moved / c.items / 16;
  int64_t gxAuto =
      std::max<int64_t>(1, std::min<int64_t>((perItemVecs + 255) / 256,
                                             (132 * 16 + items - 1) / items));
  // Byte-identical at every width the run uses below as well as one block
  // an item (a grid-stride loop or a table's chunks must cover each item
  // whatever the grid): fresh inputs for each.
  t.runtimeGx = info ? poolrt::launchGridX(*info, items) : gxAuto;
  t.ok = true;
  std::vector<int64_t> checked;
  for (int64_t gx : {gxAuto, t.runtimeGx, int64_t(1), gxAuto * 2}) {
    if (std::find(checked.begin(), checked.end(), gx) != checked.end())
      continue;
    checked.push_back(gx);
    if (checked.size() > 1)
      prepareCase(g, c);
    launch(g, fn, items, gx);
    check(cu.cuCtxSynchronize(), "kernel");
    std::string got = c.hashStaging.empty()
                          ? hashSpans(g, g.arena, c.hash)
                          : hashSpans(g, g.staging, c.hashStaging);
    if (got != c.expect) {
      t.ok = false;
      std::printf("MISMATCH %s at grid_x %" PRId64 ": device %s, host lowering %s\n",
                  c.name.c_str(), gx, got.c_str(), c.expect.c_str());
    }
  }
  t.bestMs = 1e30;
  t.bestGx = gxAuto;
  for (int64_t gx : {std::max<int64_t>(1, gxAuto / 4),
                     std::max<int64_t>(1, gxAuto / 2), gxAuto, gxAuto * 2}) {
    double ms = meanMs(g, [&] { launch(g, fn, items, gx); });
    if (ms < t.bestMs) {
      t.bestMs = ms;
      t.bestGx = gx;
    }
  }
  t.runtimeMs = meanMs(g, [&] { launch(g, fn, items, t.runtimeGx); });
  return t;
}

// One contiguous run of an item: both sides continue where the last
// segment ended.
struct Run {
  CUdeviceptr dst, src;
  size_t bytes;
};

// The case's copies as an engine without generated kernels issues them:
// each item's segments (from the manifest), merged where both sides are
// contiguous.
static std::vector<Run> runsOf(const Gpu &g, const Case &c,
                               const poolrt::KernelInfo &k) {
  std::vector<Run> runs;
  for (int64_t i = 0; i < c.items; ++i) {
    auto idOf = [&](int pos) -> int64_t {
      return pos < 0 ? i : c.ids[size_t(i * k.idsPerItem + pos)];
    };
    for (const poolrt::KernelSegment &sg : k.segments) {
      CUdeviceptr src = (k.srcIsStaging ? g.staging : g.arena) +
                        CUdeviceptr(idOf(sg.srcId) * sg.srcStride + sg.srcOff);
      CUdeviceptr dst = (k.dstIsStaging ? g.staging : g.arena) +
                        CUdeviceptr(idOf(sg.dstId) * sg.dstStride + sg.dstOff);
      if (!runs.empty() && runs.back().src + runs.back().bytes == src &&
          runs.back().dst + runs.back().bytes == dst)
        runs.back().bytes += size_t(sg.bytes);
      else
        runs.push_back({dst, src, size_t(sg.bytes)});
    }
  }
  return runs;
}

// Runs case `c` with the base module, checks it, times it against one
// memcpy of the same bytes and against the per-run memcpys, and prints its
// row. False on a mismatch.
static bool runCase(Gpu &g, const Case &c, const poolrt::KernelInfo *info,
                    std::vector<Timed> &timed) {
  Timed t = timeKernel(g, g.mod, c, info);
  timed.push_back(t);
  // Baseline: cuMemcpyDtoDAsync of the same number of bytes (the bytes
  // the kernel moves: an image store or restore moves items x image
  // bytes, not its units' whole regions), one call, between two regions
  // of the same arena.
  double memMs = meanMs(g, [&] {
    check(cu.cuMemcpyDtoDAsync(g.arena + size_t(c.moved) + 4096, g.arena,
                               size_t(c.moved), nullptr),
          "memcpy");
  });
  timed.back().memMs = memMs;
  double gbs = double(c.moved) / (t.bestMs * 1e-3) / 1e9;
  double mgbs = double(c.moved) / (memMs * 1e-3) / 1e9;
  std::printf("%-20s %-20s %6" PRId64 " %12" PRId64 " %8" PRId64
              " %10.3f %10.1f %10.3f %10.1f %6.1f%%%s\n",
              c.name.c_str(), c.kernel.c_str(), c.items, c.moved, t.bestGx,
              t.bestMs, gbs, memMs, mgbs, 100.0 * gbs / mgbs,
              t.ok ? "" : "  MISMATCH");
  return t.ok;
}

// The reference's way for every case: one cuMemcpyDtoDAsync per run.
static void printPerRun(Gpu &g, const Plan &plan, const poolrt::SolvedLayout &layout,
                        const std::vector<Timed> &timed) {
  std::printf("\n== the generated kernel against one cuMemcpyDtoDAsync per contiguous run "
              "(the reference's way), same bytes ==\n");
  std::printf("%-20s %6s %9s %12s %12s %12s %9s\n", "case", "items", "runs/item",
              "run bytes", "kernel ms", "per-run ms", "speedup");
  for (size_t i = 0; i < plan.cases.size(); ++i) {
    const Case &c = plan.cases[i];
    const poolrt::KernelInfo *k = poolrt::findKernel(layout.kernels, &poolrt::KernelInfo::name, c.kernel);
    if (!k)
      continue;
    std::vector<Run> runs = runsOf(g, c, *k);
    double ms = meanMs(g, [&] {
      for (const Run &r : runs)
        check(cu.cuMemcpyDtoDAsync(r.dst, r.src, r.bytes, nullptr), "memcpy run");
    });
    size_t bytes = 0;
    for (const Run &r : runs)
      bytes += r.bytes;
    std::printf("%-20s %6" PRId64 " %9.1f %12zu %12.3f %12.3f %8.2fx\n", c.name.c_str(),
                c.items, double(runs.size()) / double(c.items),
                runs.empty() ? size_t(0) : bytes / runs.size(), timed[i].runtimeMs, ms,
                ms / timed[i].runtimeMs);
  }
  std::printf("(kernel ms: the runtime's own grid; run bytes: the mean run)\n");
}

// The hand-written probes (bench/gpu/copy_probe.cu, PTX built by nvcc on
// the GPU machine) over each case's runs, cut into tiles of at most 16 KiB:
// ratios to the same memcpy as the base table, and each probe's output
// checked against the host lowering. POOL_COPY_PROBE names the modules,
// comma-separated NAME=FILE.ptx; the first gives the "ldg x4" and "bulk"
// columns, each further one its probe_ldg as a column of its own (the
// same kernel built with other cache hints or tile orders). A module the
// driver refuses (ptxas rejects a hint) is reported and left out.
struct ProbeTile {
  uint64_t dst, src;
  uint32_t bytes, pad0;
  uint64_t pad1;
};
struct ProbeModule {
  std::string name;
  CUfunction ldg = nullptr, bulk = nullptr;
};
static std::vector<ProbeModule> loadProbes(const char *list) {
  std::vector<ProbeModule> out;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    std::string name = eq == std::string::npos ? "ldg x4" : item.substr(0, eq);
    std::string path = eq == std::string::npos ? item : item.substr(eq + 1);
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || text.str().empty()) {
      std::printf("(copy probe %s: cannot read %s)\n", name.c_str(), path.c_str());
      continue;
    }
    std::string image = text.str() + std::string(1, '\0');
    CUmodule mod;
    if (cu.cuModuleLoadData(&mod, image.data()) != CUDA_SUCCESS) {
      std::printf("(copy probe %s: the driver refused %s)\n", name.c_str(), path.c_str());
      continue;
    }
    ProbeModule m;
    m.name = name;
    check(cu.cuModuleGetFunction(&m.ldg, mod, "probe_ldg"), "probe_ldg");
    if (out.empty())
      check(cu.cuModuleGetFunction(&m.bulk, mod, "probe_bulk"), "probe_bulk");
    out.push_back(m);
  }
  return out;
}
// A case's runs cut into the probes' tiles of at most 16 KiB.
static std::vector<ProbeTile> runTiles(const std::vector<Run> &runs) {
  std::vector<ProbeTile> tiles;
  for (const Run &r : runs)
    for (size_t o = 0; o < r.bytes; o += 16384)
      tiles.push_back({r.dst + o, r.src + o, uint32_t(std::min<size_t>(16384, r.bytes - o)),
                       0, 0});
  return tiles;
}

// A tile table on the device, and probe launches over it.
struct ProbeTable {
  explicit ProbeTable(const std::vector<ProbeTile> &tiles) : n((long long)tiles.size()) {
    check(cu.cuMemAlloc(&dev, tiles.size() * sizeof(ProbeTile) + 32), "cuMemAlloc(tiles)");
    check(cu.cuMemcpyHtoD(dev, tiles.data(), tiles.size() * sizeof(ProbeTile)), "tiles");
  }
  ~ProbeTable() { cu.cuMemFree(dev); }
  ProbeTable(const ProbeTable &) = delete;
  ProbeTable &operator=(const ProbeTable &) = delete;
  void launch(CUfunction fn, unsigned threads, unsigned grid) {
    void *args[] = {&dev, &n};
    check(cu.cuLaunchKernel(fn, grid, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr),
          "cuLaunchKernel(probe)");
  }
  /// The best mean of grids 132 x {1, 2, 4, 8}.
  double bestMs(Gpu &g, CUfunction fn, unsigned threads) {
    double best = 1e30;
    for (unsigned m : {1u, 2u, 4u, 8u})
      best = std::min(best, meanMs(g, [&] { launch(fn, threads, 132 * m); }));
    return best;
  }
  CUdeviceptr dev = 0;
  long long n;
};

// The ceiling of an SM-issued copy of case `c`'s bytes: the same byte
// count laid out as one contiguous source run and one contiguous
// destination run (the regions the memcpy baseline copies between), cut
// into the probes' 16 KiB tiles. What probe_ldg reaches here, no kernel
// walking the case's scattered runs can be expected to beat. Empty where
// the bytes are off the probes' 16-byte grain or the arena cannot hold
// both regions.
static std::vector<ProbeTile> contiguousTiles(const Gpu &g, const Case &c) {
  if (c.moved % 16 != 0 || 2 * c.moved + 4096 > g.arenaBytes)
    return {};
  return runTiles({{g.arena + size_t(c.moved) + 4096, g.arena, size_t(c.moved)}});
}
static std::string contiguousCeiling(Gpu &g, const Case &c, CUfunction fn, double memMs) {
  std::vector<ProbeTile> tiles = contiguousTiles(g, c);
  if (tiles.empty())
    return "n/a";
  ProbeTable table(tiles);
  const Span src{0, c.moved}, dst{c.moved + 4096, c.moved};
  check(cu.cuMemsetD8(g.arena + size_t(dst.off), 0xA5, size_t(dst.len)), "cuMemsetD8");
  table.launch(fn, 256, 132 * 4);
  check(cu.cuCtxSynchronize(), "contiguous probe");
  bool same = hashSpans(g, g.arena, {src}) == hashSpans(g, g.arena, {dst});
  char cell[64];
  std::snprintf(cell, sizeof cell, "%6.1f%% %s", 100.0 * memMs / table.bestMs(g, fn, 256),
                same ? "ok" : "MISMATCH");
  return std::string(cell);
}

static void printProbes(Gpu &g, const Plan &plan, const poolrt::SolvedLayout &layout,
                        const std::vector<Timed> &timed) {
  const char *list = std::getenv("POOL_COPY_PROBE");
  if (!list || !*list)
    return;
  std::vector<ProbeModule> mods = loadProbes(list);
  if (mods.empty())
    return;
  std::printf("\n== hand-written probes over the same runs, %% of one cuMemcpyDtoDAsync of the "
              "same bytes (best of grids 132 x {1,2,4,8}; ok = byte-identical to the host "
              "lowering) ==\n%-20s %9s %10s %16s %16s",
              "case", "tiles", "generated", mods[0].name.c_str(), "bulk (TMA)");
  for (size_t m = 1; m < mods.size(); ++m)
    std::printf(" %16s", mods[m].name.c_str());
  std::printf(" %16s\n", "contiguous");
  for (size_t i = 0; i < plan.cases.size(); ++i) {
    const Case &c = plan.cases[i];
    const poolrt::KernelInfo *k =
        poolrt::findKernel(layout.kernels, &poolrt::KernelInfo::name, c.kernel);
    if (!k)
      continue;
    std::vector<Run> runs = runsOf(g, c, *k);
    std::vector<ProbeTile> tiles = runTiles(runs);
    bool aligned = true;
    for (const Run &r : runs)
      aligned &= (r.dst % 16 == 0) && (r.src % 16 == 0) && (r.bytes % 16 == 0);
    std::vector<std::string> cells;
    {
      ProbeTable table(tiles);
      auto probe = [&](CUfunction fn, unsigned threads) {
        prepareCase(g, c);
        table.launch(fn, threads, 132 * 4);
        check(cu.cuCtxSynchronize(), "probe kernel");
        std::string got = c.hashStaging.empty() ? hashSpans(g, g.arena, c.hash)
                                                : hashSpans(g, g.staging, c.hashStaging);
        char cell[64];
        std::snprintf(cell, sizeof cell, "%6.1f%% %s",
                      100.0 * timed[i].memMs / table.bestMs(g, fn, threads),
                      got == c.expect ? "ok" : "MISMATCH");
        return std::string(cell);
      };
      // They move 16-byte units: a run off that grain is not theirs to copy.
      cells.push_back(aligned ? probe(mods[0].ldg, 256) : "unaligned");
      cells.push_back(aligned ? probe(mods[0].bulk, 32) : "unaligned");
      for (size_t m = 1; m < mods.size(); ++m)
        cells.push_back(aligned ? probe(mods[m].ldg, 256) : "unaligned");
    }
    cells.push_back(contiguousCeiling(g, c, mods[0].ldg, timed[i].memMs));
    std::printf("%-20s %9zu %9.1f%%", c.name.c_str(), tiles.size(),
                100.0 * timed[i].memMs / timed[i].runtimeMs);
    for (const std::string &cell : cells)
      std::printf(" %16s", cell.c_str());
    std::printf("\n");
  }
  std::printf("(generated: the runtime's grid, from the first table; contiguous: %s over the "
              "same bytes laid out as one source and one destination run, the memcpy's own "
              "regions, checked against its source)\n",
              mods[0].name.c_str());
}

// A further artifact's kernels, timed beside the base ones.
struct Variant {
  std::string name;
  poolrt::Artifact artifact;
  CUmodule mod;
};

static bool loadVariant(const std::string &arg, Variant &v) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    std::fprintf(stderr, "gpu_check: '%s': expected NAME=FILE.poolpack\n", arg.c_str());
    return false;
  }
  v.name = arg.substr(0, eq);
  auto a = poolrt::readArtifactFile(arg.substr(eq + 1));
  if (!a.ok()) {
    std::fprintf(stderr, "gpu_check: %s\n", a.error().message.c_str());
    return false;
  }
  v.artifact = std::move(*a);
  const poolrt::ArtifactSection *ptx = v.artifact.find("code/sm_90");
  if (!ptx) {
    std::fprintf(stderr, "gpu_check: %s has no code/sm_90\n", arg.c_str());
    return false;
  }
  std::string image = ptx->data + std::string(1, '\0');
  check(cu.cuModuleLoadData(&v.mod, image.data()), "cuModuleLoadData(variant PTX)");
  return true;
}

// Every variant's kernels on every case, checked and timed; the ratios to
// the same memcpy as the base table, side by side. Returns the mismatches.
static int compareVariants(Gpu &g, const Plan &plan, const poolrt::SolvedLayout &layout,
                           const std::vector<Timed> &base, std::vector<Variant> &variants) {
  if (variants.empty())
    return 0;
  std::printf("\n== kernel variants side by side: %% of one cuMemcpyDtoDAsync of the same "
              "bytes (best grid of the sweep / the runtime's grid) ==\n%-20s %16s",
              "case", "base");
  for (const Variant &v : variants)
    std::printf(" %16s", v.name.c_str());
  std::printf("\n");
  int failures = 0;
  for (size_t i = 0; i < plan.cases.size(); ++i) {
    const Case &c = plan.cases[i];
    const poolrt::KernelInfo *k =
        poolrt::findKernel(layout.kernels, &poolrt::KernelInfo::name, c.kernel);
    auto cell = [&](const Timed &t) {
      std::printf("   %5.1f%% / %5.1f%%", 100.0 * base[i].memMs / t.bestMs,
                  100.0 * base[i].memMs / t.runtimeMs);
    };
    std::printf("%-20s", c.name.c_str());
    cell(base[i]);
    for (Variant &v : variants) {
      Timed t = timeKernel(g, v.mod, c, k);
      if (!t.ok)
        ++failures;
      cell(t);
      if (!t.ok)
        std::printf(" MISMATCH");
    }
    std::printf("\n");
  }
  std::printf("%zu variant(s) x %zu cases: %d mismatched the host lowering\n", variants.size(),
              plan.cases.size(), failures);
  return failures;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gpu_check MODEL.poolpack PLAN.txt [NAME=VARIANT.poolpack]...\n");
    return 2;
  }
  auto artifact = poolrt::readArtifactFile(argv[1]);
  if (!artifact.ok()) {
    std::fprintf(stderr, "gpu_check: %s\n", artifact.error().message.c_str());
    return 1;
  }
  const poolrt::ArtifactSection *ptx = artifact->find("code/sm_90");
  if (!ptx) {
    std::fprintf(stderr, "gpu_check: the artifact has no code/sm_90\n");
    return 1;
  }
  auto layout = poolrt::readSolvedLayout(*artifact);
  if (!layout.ok()) {
    std::fprintf(stderr, "gpu_check: %s\n", layout.error().message.c_str());
    return 1;
  }
  Plan plan;
  std::string why;
  if (!readPlan(argv[2], plan, why)) {
    std::fprintf(stderr, "gpu_check: %s\n", why.c_str());
    return 1;
  }
  if (!cu.load())
    return 1;
  Gpu g;
  openGpu(g, *ptx);
  std::vector<Variant> variants(size_t(argc - 3));
  for (int a = 3; a < argc; ++a)
    if (!loadVariant(argv[a], variants[size_t(a - 3)]))
      return 1;
  allocateBuffers(g, plan);
  std::printf("device: %s; arena %" PRId64
              " bytes (one cuMemAlloc), PTX %zu bytes\n",
              g.name, plan.arenaBytes, ptx->data.size());

  check(cu.cuEventCreate(&g.e0, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cu.cuEventCreate(&g.e1, CU_EVENT_DEFAULT), "cuEventCreate");
  // For a profiler (ncu -k regex:KERNEL): only the named case, each
  // artifact's kernel (the base, then the variants in order) launched
  // twice at the runtime's grid on fresh inputs, nothing timed.
  if (const char *only = std::getenv("POOL_PROFILE_CASE")) {
    const Case *c = nullptr;
    for (const Case &x : plan.cases)
      if (x.name == only)
        c = &x;
    if (!c) {
      std::fprintf(stderr, "gpu_check: POOL_PROFILE_CASE=%s: no such case in the plan\n", only);
      return 2;
    }
    const poolrt::KernelInfo *k =
        poolrt::findKernel(layout->kernels, &poolrt::KernelInfo::name, c->kernel);
    // POOL_PROFILE_PROBE=runs|contiguous|memcpy: instead of the generated
    // kernels, the first copy probe's probe_ldg over the case's runs or
    // over the same bytes laid out contiguously (grid 132 x 4), or the
    // memcpy baseline, each twice (an unfiltered ncu then shows whether the
    // driver's copy runs as a kernel at all).
    if (const char *what = std::getenv("POOL_PROFILE_PROBE")) {
      std::string w = what;
      if (w == "memcpy") {
        for (int r = 0; r < 2; ++r)
          check(cu.cuMemcpyDtoDAsync(g.arena + size_t(c->moved) + 4096, g.arena,
                                     size_t(c->moved), nullptr),
                "memcpy");
        check(cu.cuCtxSynchronize(), "memcpy");
        std::printf("profiled memcpy: %" PRId64 " bytes (calls 2)\n", c->moved);
        return 0;
      }
      const char *list = std::getenv("POOL_COPY_PROBE");
      std::vector<ProbeModule> probes = loadProbes(list ? list : "");
      std::vector<ProbeTile> tiles;
      if (k && w == "contiguous")
        tiles = contiguousTiles(g, *c);
      else if (k && w == "runs")
        tiles = runTiles(runsOf(g, *c, *k));
      if (probes.empty() || tiles.empty()) {
        std::fprintf(stderr, "gpu_check: POOL_PROFILE_PROBE=%s needs runs, contiguous or "
                     "memcpy, a POOL_COPY_PROBE module, the case's kernel and bytes on the "
                     "probes' 16-byte grain\n", what);
        return 2;
      }
      ProbeTable table(tiles);
      prepareCase(g, *c);
      for (int r = 0; r < 2; ++r)
        table.launch(probes[0].ldg, 256, 132 * 4);
      check(cu.cuCtxSynchronize(), "probe");
      std::printf("profiled probe_ldg (%s) over %s: %lld tiles (launches 2)\n",
                  probes[0].name.c_str(), w.c_str(), table.n);
      return 0;
    }
    int64_t gx = k ? poolrt::launchGridX(*k, c->items) : 1;
    std::vector<std::pair<std::string, CUmodule>> mods{{"base", g.mod}};
    for (Variant &v : variants)
      mods.push_back({v.name, v.mod});
    for (auto &[name, mod] : mods) {
      CUfunction fn;
      check(cu.cuModuleGetFunction(&fn, mod, c->kernel.c_str()), c->kernel.c_str());
      prepareCase(g, *c);
      for (int r = 0; r < 2; ++r)
        launch(g, fn, c->items, gx);
      check(cu.cuCtxSynchronize(), "kernel");
      std::printf("profiled %s: %s x%" PRId64 " at grid_x %" PRId64 " (launches 2)\n",
                  name.c_str(), c->kernel.c_str(), c->items, gx);
    }
    return 0;
  }
  int failures = 0;
  std::printf("\n%-20s %-20s %6s %12s %8s %10s %10s %10s %10s %7s\n", "case", "kernel",
              "items", "bytes", "grid_x", "kernel ms", "GB/s", "memcpy ms",
              "memcpy GB/s", "ratio");
  std::vector<Timed> timed;
  for (const Case &c : plan.cases)
    if (!runCase(g, c,
                 poolrt::findKernel(layout->kernels, &poolrt::KernelInfo::name, c.kernel),
                 timed))
      ++failures;
  std::printf(
      "\n%zu cases: %zu byte-identical to the host lowering, %d mismatched\n",
      plan.cases.size(), plan.cases.size() - failures, failures);
  std::printf("(GB/s = bytes copied per second; memcpy = one cuMemcpyDtoDAsync of the same bytes in the same arena)\n");
  printPerRun(g, plan, *layout, timed);
  printProbes(g, plan, *layout, timed);
  failures += compareVariants(g, plan, *layout, timed, variants);
  return failures ? 1 : 0;
}
