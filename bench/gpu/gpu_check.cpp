// gpu_check: run a .poolpack's sm_90 kernels on an NVIDIA GPU through the
// CUDA driver API (dlopen'ed libcuda.so.1, PTX loaded with cuModuleLoadData),
// check each case's output byte for byte against the host lowering (the
// XXH64 that pool-kernel-check --gpu-plan recorded for the same inputs), and
// time each kernel against cuMemcpyDtoDAsync moving the same bytes.
//
// Built on the GPU machine by bench/gpu/run.sh (it has CUDA and g++, none of
// our Debian packages): the artifact reader is the project's own, xxhash is
// header-only there.
#include "poolrt/Artifact.h"
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

// Runs case `c` once, compares its output's hash with the host lowering's,
// times it against cuMemcpyDtoDAsync and prints its row. False on a mismatch.
static bool runCase(Gpu &g, const Case &c) {
  CUfunction fn;
  check(cu.cuModuleGetFunction(&fn, g.mod, c.kernel.c_str()), c.kernel.c_str());
  for (Span s : c.poison)
    check(cu.cuMemsetD8(g.arena + s.off, 0xA5, size_t(s.len)), "cuMemsetD8");
  if (c.staging)
    check(cu.cuMemsetD8(g.staging, 0xA5, size_t(c.staging)), "cuMemsetD8");
  for (Span s : c.fill)
    upload(g, g.arena, s, 1);
  for (Span s : c.fillStaging)
    upload(g, g.staging, s, 2);
  check(cu.cuMemcpyHtoD(g.ids, c.ids.data(), c.ids.size() * 4), "ids");
  int64_t items = c.items;
  // Enough blocks to fill 132 SMs several times over, at least one vector
  // per thread.
  int64_t perItemVecs = c.moved / c.items / 16;
  int64_t gxAuto =
      std::max<int64_t>(1, std::min<int64_t>((perItemVecs + 255) / 256,
                                             (132 * 16 + items - 1) / items));
  launch(g, fn, items, gxAuto);
  check(cu.cuCtxSynchronize(), "kernel");
  std::string got = c.hashStaging.empty()
                        ? hashSpans(g, g.arena, c.hash)
                        : hashSpans(g, g.staging, c.hashStaging);
  bool ok = got == c.expect;
  if (!ok)
    std::printf("MISMATCH %s: device %s, host lowering %s\n", c.name.c_str(),
                got.c_str(), c.expect.c_str());
  // Timing: the best grid of a small sweep, mean of 20 launches each.
  double bestMs = 1e30;
  int64_t bestGx = gxAuto;
  for (int64_t gx : {std::max<int64_t>(1, gxAuto / 4),
                     std::max<int64_t>(1, gxAuto / 2), gxAuto, gxAuto * 2}) {
    double ms = meanMs(g, [&] { launch(g, fn, items, gx); });
    if (ms < bestMs) {
      bestMs = ms;
      bestGx = gx;
    }
  }
  // Baseline: cuMemcpyDtoDAsync of the same number of bytes (the bytes
  // the kernel moves: an image store or restore moves items x image
  // bytes, not its units' whole regions), one call, between two regions
  // of the same arena.
  double memMs = meanMs(g, [&] {
    check(cu.cuMemcpyDtoDAsync(g.arena + size_t(c.moved) + 4096, g.arena,
                               size_t(c.moved), nullptr),
          "memcpy");
  });
  double gbs = double(c.moved) / (bestMs * 1e-3) / 1e9;
  double mgbs = double(c.moved) / (memMs * 1e-3) / 1e9;
  std::printf("%-20s %-20s %6" PRId64 " %12" PRId64 " %8" PRId64
              " %10.3f %10.1f %10.3f %10.1f %6.1f%%%s\n",
              c.name.c_str(), c.kernel.c_str(), c.items, c.moved, bestGx,
              bestMs, gbs, memMs, mgbs, 100.0 * gbs / mgbs,
              ok ? "" : "  MISMATCH");
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gpu_check MODEL.poolpack PLAN.txt\n");
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
  allocateBuffers(g, plan);
  std::printf("device: %s; arena %" PRId64
              " bytes (one cuMemAlloc), PTX %zu bytes\n",
              g.name, plan.arenaBytes, ptx->data.size());

  check(cu.cuEventCreate(&g.e0, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cu.cuEventCreate(&g.e1, CU_EVENT_DEFAULT), "cuEventCreate");
  int failures = 0;
  std::printf("\n%-20s %-20s %6s %12s %8s %10s %10s %10s %10s %7s\n", "case", "kernel",
              "items", "bytes", "grid_x", "kernel ms", "GB/s", "memcpy ms",
              "memcpy GB/s", "ratio");
  for (const Case &c : plan.cases)
    if (!runCase(g, c))
      ++failures;
  std::printf(
      "\n%zu cases: %zu byte-identical to the host lowering, %d mismatched\n",
      plan.cases.size(), plan.cases.size() - failures, failures);
  std::printf("(GB/s = bytes copied per second; memcpy = one cuMemcpyDtoDAsync of the same bytes in the same arena)\n");
  return failures ? 1 : 0;
}
