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

// The same fill as pool-kernel-check --gpu-plan.
static uint64_t patternWord(uint64_t offset, uint64_t space) {
  uint64_t z = (offset >> 3) + space * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Span { int64_t off, len; };
struct Case {
  std::string name, kernel;
  int64_t items = 0, staging = 0, moved = 0;
  int64_t idsPerItem = 1; // (slot, unit_0, ..., unit_n-1): image store/restore
  std::vector<int32_t> ids;
  std::vector<Span> fill, fillStaging, poison, hash, hashStaging;
  std::string expect;
};

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
  std::ifstream in(argv[2]);
  int64_t arenaBytes = 0;
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "arena_bytes")
      ls >> arenaBytes;
    else if (key == "case") {
      Case c;
      std::string w;
      ls >> c.name >> c.kernel >> w >> c.items >> w >> c.staging >> w >> c.moved;
      if (ls >> w && w == "ids_per_item")
        ls >> c.idsPerItem;
      cases.push_back(c);
    } else if (key == "ids") {
      int32_t id;
      while (ls >> id)
        cases.back().ids.push_back(id);
    } else if (key == "fill" || key == "fill_staging" || key == "poison" ||
               key == "hash" || key == "hash_staging") {
      Span s;
      ls >> s.off >> s.len;
      Case &c = cases.back();
      (key == "fill" ? c.fill : key == "fill_staging" ? c.fillStaging
       : key == "poison" ? c.poison : key == "hash" ? c.hash : c.hashStaging)
          .push_back(s);
    } else if (key == "expect")
      ls >> cases.back().expect;
  }
  for (const Case &c : cases)
    if (c.items < 1 || c.idsPerItem < 1 ||
        int64_t(c.ids.size()) != c.items * c.idsPerItem) {
      std::fprintf(stderr,
                   "gpu_check: case %s: %zu ids for %" PRId64
                   " items of %" PRId64 " ids each\n",
                   c.name.c_str(), c.ids.size(), c.items, c.idsPerItem);
      return 1;
    }
  if (!cu.load())
    return 1;
  check(cu.cuInit(0), "cuInit");
  CUdevice dev;
  check(cu.cuDeviceGet(&dev, 0), "cuDeviceGet");
  char devName[256];
  cu.cuDeviceGetName(devName, sizeof devName, dev);
  CUcontext ctx;
  check(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  std::string image = ptx->data + std::string(1, '\0');
  CUmodule mod;
  check(cu.cuModuleLoadData(&mod, image.data()), "cuModuleLoadData(PTX)");

  int64_t maxStaging = 0, maxIds = 0;
  for (const Case &c : cases) {
    maxStaging = std::max(maxStaging, c.staging);
    maxIds = std::max<int64_t>(maxIds, c.ids.size());
  }
  CUdeviceptr arena, staging = 0, ids;
  check(cu.cuMemAlloc(&arena, size_t(arenaBytes)), "cuMemAlloc(arena)");
  if (maxStaging)
    check(cu.cuMemAlloc(&staging, size_t(maxStaging)), "cuMemAlloc(staging)");
  check(cu.cuMemAlloc(&ids, size_t(maxIds) * 4 + 16), "cuMemAlloc(ids)");
  const size_t chunk = size_t(64) << 20;
  uint8_t *host;
  check(cu.cuMemAllocHost(reinterpret_cast<void **>(&host), chunk), "cuMemAllocHost");
  std::printf("device: %s; arena %" PRId64 " bytes (one cuMemAlloc), PTX %zu bytes\n",
              devName, arenaBytes, ptx->data.size());

  auto upload = [&](CUdeviceptr base, Span s, uint64_t space) {
    for (int64_t o = 0; o < s.len; o += int64_t(chunk)) {
      int64_t n = std::min<int64_t>(int64_t(chunk), s.len - o);
      for (int64_t b = 0; b < n; b += 8) {
        uint64_t w = patternWord(uint64_t(s.off + o + b), space);
        std::memcpy(host + b, &w, size_t(std::min<int64_t>(8, n - b)));
      }
      check(cu.cuMemcpyHtoD(base + s.off + o, host, size_t(n)), "cuMemcpyHtoD");
    }
  };
  auto hashSpans = [&](CUdeviceptr base, const std::vector<Span> &spans) {
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    for (Span s : spans)
      for (int64_t o = 0; o < s.len; o += int64_t(chunk)) {
        int64_t n = std::min<int64_t>(int64_t(chunk), s.len - o);
        check(cu.cuMemcpyDtoH(host, base + s.off + o, size_t(n)), "cuMemcpyDtoH");
        XXH64_update(st, host, size_t(n));
      }
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    return std::string(hex);
  };

  CUevent e0, e1;
  check(cu.cuEventCreate(&e0, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cu.cuEventCreate(&e1, CU_EVENT_DEFAULT), "cuEventCreate");
  int failures = 0;
  std::printf("\n%-20s %-20s %6s %12s %8s %10s %10s %10s %10s %7s\n", "case", "kernel",
              "items", "bytes", "grid_x", "kernel ms", "GB/s", "memcpy ms",
              "memcpy GB/s", "ratio");
  for (Case &c : cases) {
    CUfunction fn;
    check(cu.cuModuleGetFunction(&fn, mod, c.kernel.c_str()), c.kernel.c_str());
    for (Span s : c.poison)
      check(cu.cuMemsetD8(arena + s.off, 0xA5, size_t(s.len)), "cuMemsetD8");
    if (c.staging)
      check(cu.cuMemsetD8(staging, 0xA5, size_t(c.staging)), "cuMemsetD8");
    for (Span s : c.fill)
      upload(arena, s, 1);
    for (Span s : c.fillStaging)
      upload(staging, s, 2);
    check(cu.cuMemcpyHtoD(ids, c.ids.data(), c.ids.size() * 4), "ids");
    int64_t items = c.items;
    auto launch = [&](int64_t gx) {
      void *args[] = {&arena, &staging, &ids, &items, &gx};
      check(cu.cuLaunchKernel(fn, unsigned(gx), unsigned(items), 1, 256, 1, 1, 0,
                              nullptr, args, nullptr),
            "cuLaunchKernel");
    };
    // Enough blocks to fill 132 SMs several times over, at least one vector
    // per thread.
    int64_t perItemVecs = c.moved / c.items / 16;
    int64_t gxAuto = std::max<int64_t>(1, std::min<int64_t>(
        (perItemVecs + 255) / 256, (132 * 16 + items - 1) / items));
    launch(gxAuto);
    check(cu.cuCtxSynchronize(), "kernel");
    std::string got = c.hashStaging.empty() ? hashSpans(arena, c.hash)
                                            : hashSpans(staging, c.hashStaging);
    bool ok = got == c.expect;
    if (!ok) {
      ++failures;
      std::printf("MISMATCH %s: device %s, host lowering %s\n", c.name.c_str(),
                  got.c_str(), c.expect.c_str());
    }
    // Timing: the best grid of a small sweep, mean of 20 launches each.
    double bestMs = 1e30;
    int64_t bestGx = gxAuto;
    for (int64_t gx : {std::max<int64_t>(1, gxAuto / 4), std::max<int64_t>(1, gxAuto / 2),
                       gxAuto, gxAuto * 2}) {
      for (int w = 0; w < 3; ++w)
        launch(gx);
      check(cu.cuEventRecord(e0, nullptr), "event");
      for (int r = 0; r < 20; ++r)
        launch(gx);
      check(cu.cuEventRecord(e1, nullptr), "event");
      check(cu.cuEventSynchronize(e1), "event");
      float ms;
      check(cu.cuEventElapsedTime(&ms, e0, e1), "elapsed");
      if (ms / 20 < bestMs) {
        bestMs = ms / 20;
        bestGx = gx;
      }
    }
    // Baseline: cuMemcpyDtoDAsync of the same number of bytes (the bytes
    // the kernel moves: an image store or restore moves items x image
    // bytes, not its units' whole regions), one call, between two regions
    // of the same arena.
    for (int w = 0; w < 3; ++w)
      check(cu.cuMemcpyDtoDAsync(arena + size_t(c.moved) + 4096, arena, size_t(c.moved), nullptr), "memcpy");
    check(cu.cuEventRecord(e0, nullptr), "event");
    for (int r = 0; r < 20; ++r)
      check(cu.cuMemcpyDtoDAsync(arena + size_t(c.moved) + 4096, arena, size_t(c.moved), nullptr), "memcpy");
    check(cu.cuEventRecord(e1, nullptr), "event");
    check(cu.cuEventSynchronize(e1), "event");
    float mms;
    check(cu.cuEventElapsedTime(&mms, e0, e1), "elapsed");
    double memMs = mms / 20;
    double gbs = double(c.moved) / (bestMs * 1e-3) / 1e9;
    double mgbs = double(c.moved) / (memMs * 1e-3) / 1e9;
    std::printf("%-20s %-20s %6" PRId64 " %12" PRId64 " %8" PRId64 " %10.3f %10.1f %10.3f %10.1f %6.1f%%%s\n",
                c.name.c_str(), c.kernel.c_str(), c.items, c.moved, bestGx, bestMs,
                gbs, memMs, mgbs, 100.0 * gbs / mgbs, ok ? "" : "  MISMATCH");
  }
  std::printf("\n%zu cases: %zu byte-identical to the host lowering, %d mismatched\n",
              cases.size(), cases.size() - failures, failures);
  std::printf("(GB/s = bytes copied per second; memcpy = one cuMemcpyDtoDAsync of the same bytes in the same arena)\n");
  return failures ? 1 : 0;
}
