//===- CacheModelCheckTest.cpp - Randomized model check of CacheManager ---===//
//
// 10^5 operations in all, over the three configurations (plain KV, GDN-like
// fork transfer, DeepSeek-V4-like PAGE-unit checkpoints on a row space),
// each checked against the reference model of CacheModelCheck.h after every
// step. bench/model_check.cpp runs the same check for longer.
//
//===----------------------------------------------------------------------===//

#include "test/Unit/CacheModelCheck.h"

#include <gtest/gtest.h>

using namespace poolc_model;

namespace {

void runSeeds(ModelConfig cfg, uint64_t firstSeed, int seeds, int64_t opsEach) {
  for (int i = 0; i < seeds; ++i) {
    Outcome o = runModelCheck(cfg, firstSeed + uint64_t(i), opsEach);
    ASSERT_TRUE(o.ok) << o.report;
    EXPECT_EQ(o.steps, opsEach);
    // The sequences must reach the interesting paths, or the check is idle.
    EXPECT_GT(o.counts.hits, 0) << o.counts.str();
    EXPECT_GT(o.counts.refusals, 0) << o.counts.str();
    EXPECT_GT(o.counts.decodes, 0) << o.counts.str();
    EXPECT_GT(o.counts.preemptions, 0) << o.counts.str();
    if (cfg == ModelConfig::ForkGdn)
      EXPECT_GT(o.counts.forkCheckpoints, 0) << o.counts.str();
    if (cfg == ModelConfig::PagedRowSpace) {
      EXPECT_GT(o.counts.stores, 0) << o.counts.str();
      EXPECT_GT(o.counts.restores, 0) << o.counts.str();
      EXPECT_GT(o.counts.boundaryMoves, 0) << o.counts.str();
    }
  }
}

} // namespace

// 4 seeds x 8,334 operations per configuration: 100,008 operations.
TEST(CacheModelCheck, PlainKv) { runSeeds(ModelConfig::PlainKv, 1, 4, 8334); }
TEST(CacheModelCheck, ForkTransfer) {
  runSeeds(ModelConfig::ForkGdn, 101, 4, 8334);
}
TEST(CacheModelCheck, PagedCheckpointsOnARowSpace) {
  runSeeds(ModelConfig::PagedRowSpace, 201, 4, 8334);
}
