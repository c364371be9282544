//===- ToyBoundary.h - The toy row space the boundary tests share ---------===//
//
// A block is 1 row, a slot 4 rows, the planes 40 rows (10 slot positions),
// at most 32 blocks; the manager starts with 32 blocks and 2 groups, the
// ladder off.
//
//===----------------------------------------------------------------------===//
#ifndef POOLC_TEST_UNIT_TOYBOUNDARY_H
#define POOLC_TEST_UNIT_TOYBOUNDARY_H

#include "poolrt/CacheManager.h"

#include <gtest/gtest.h>

#include <memory>

namespace poolc_test {

inline poolrt::PoolBoundaryGeometry toyGeometry() {
  poolrt::PoolBoundaryGeometry g;
  g.envelopeRows = 1;
  g.slotRows = 4;
  g.planeRows = 40;
  g.slotPositions = 10;
  g.maxBlocks = 32;
  return g;
}

inline std::unique_ptr<poolrt::CacheManager> toyManager(bool paged = false) {
  poolrt::CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 32;
  c.numGroups = 2;
  c.policy.checkpointIntervalTokens = 0;
  c.boundary = toyGeometry();
  if (paged)
    c.pagedCheckpoints =
        poolrt::PagedStateCheckpointSpec::create(100, 400, "toy", 200).value();
  auto m = poolrt::CacheManager::create(c);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.take();
}

} // namespace poolc_test

#endif
