//===- CacheManagerTestAccess.h - Tests' way into CacheManager --*- C++ -*-===//
//
// The one friend of poolrt::CacheManager: the steps of its public
// operations that tests pin on their own (the conformance vectors of the
// hit gate and the checkpoint ladder, the window classes' forward limit,
// preparation, pools and keys), kept private so that an engine calls the
// operations, not their pieces. Each call forwards as it is; the contracts
// are those in poolrt/CacheManager.h. Test code only.
//
//===----------------------------------------------------------------------===//
#ifndef POOLC_TEST_UNIT_CACHEMANAGERTESTACCESS_H
#define POOLC_TEST_UNIT_CACHEMANAGERTESTACCESS_H

#include "poolrt/CacheManager.h"

#include <optional>
#include <vector>

namespace poolrt {

class CacheManagerTestAccess {
public:
  // State classes and the checkpoint ladder.
  static void addStateClass(CacheManager &m, StateClass *c) {
    m.addStateClass(c);
  }
  static int64_t gatedHit(const CacheManager &m, const Request &r,
                          int64_t compressedHit,
                          const std::vector<BlockHash> &hashes,
                          bool assumeCheckpointed) {
    return m.gatedHit(r, compressedHit, hashes, assumeCheckpointed);
  }
  static std::vector<StateClass *>
  checkpointersAt(const CacheManager &m, const Request &r, int64_t pos,
                  std::optional<int64_t> nextForward, bool aimed) {
    return m.checkpointersAt(r, pos, nextForward, aimed);
  }
  static int64_t checkpointCut(CacheManager &m, Request &r, int64_t start,
                               int64_t end) {
    return m.checkpointCut(r, start, end);
  }

  // Window classes.
  static int64_t windowForwardLimit(const CacheManager &m, const Request &r,
                                    int64_t end) {
    return m.windowForwardLimit(r, end);
  }
  static Status prepareWindows(CacheManager &m, Request &r, int64_t end) {
    return m.prepareWindows(r, end);
  }
  static BlockPool &windowPool(CacheManager &m, int64_t i) {
    return m.windowPool(i);
  }
  static BlockHash windowKey(const CacheManager &m, BlockHash h, int64_t i) {
    return m.windowKey(h, i);
  }
};

} // namespace poolrt

#endif // POOLC_TEST_UNIT_CACHEMANAGERTESTACCESS_H
