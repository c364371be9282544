//===- fuzz_manifest.cpp - libFuzzer target: the manifest reader ----------===//
//
// Any JSON text is a manifest: readSolvedLayout's parser accepts it or
// refuses it with a message. What it accepts must configure a cache manager
// or be refused again, and every kernel segment it accepts must stay inside
// the arena for every id the kernel's tuple allows.
//
//===----------------------------------------------------------------------===//

#include "poolrt/CacheManager.h"
#include "poolrt/Setup.h"
#include "poolrt/SolvedLayout.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace poolrt;

static void checkSegments(const SolvedLayout &L) {
  for (const KernelInfo &k : L.kernels)
    for (const KernelSegment &s : k.segments) {
      auto side = [&](int id, bool staging, int64_t off, int64_t stride,
                      int64_t limit) {
        if (staging) {
          if (off < 0 || off + s.bytes > k.stagingStride)
            std::abort();
          return;
        }
        if (id < 0 || id >= int(k.idTuple.size()))
          std::abort();
        int64_t idMax = k.idTuple[size_t(id)].idMax;
        __int128 end = __int128(idMax - 1) * stride + off + s.bytes;
        if (off < 0 || stride < 0 || end > limit)
          std::abort();
      };
      side(s.srcId, k.srcIsStaging, s.srcOff, s.srcStride, L.allocationBytes);
      side(s.dstId, k.dstIsStaging, s.dstOff, s.dstStride, L.allocationBytes);
    }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  auto layout = parseManifest(text);
  if (!layout.ok()) {
    if (layout.error().message.empty())
      std::abort();
    return 0;
  }
  checkSegments(*layout);
  auto cfg = cacheManagerConfig(*layout);
  if (!cfg.ok())
    return 0;
  // Build the manager only at sizes a fuzzing process can hold.
  if (cfg->numBlocks <= (1 << 16) && cfg->numGroups <= (1 << 12)) {
    auto m = CacheManager::create(*cfg);
    (void)m;
  }
  return 0;
}
