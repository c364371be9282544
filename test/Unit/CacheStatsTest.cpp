//===- CacheStatsTest.cpp - Prefix-cache statistics (spec 10.4) -----------===//

#include "poolrt/CacheManager.h"

#include <gtest/gtest.h>

using namespace poolrt;

namespace {

/// Vector bm_demand_short_prompt's three requests: a miss, a demand, a hit.
std::unique_ptr<CacheManager> demandRun(std::vector<int64_t> &hits) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 64;
  c.numGroups = 8;
  c.transfer = StateTransfer::fork(8).value();
  c.policy.checkpointIntervalTokens = 16;
  auto m = CacheManager::create(c).take();
  for (int i = 0; i < 3; ++i) {
    Request r;
    for (int64_t t = 0; t < 16; ++t)
      r.tokens.push_back(t);
    r.numPromptTokens = 16;
    int64_t hit = m->canAllocate(r);
    hits.push_back(hit);
    EXPECT_TRUE(m->allocate(r, hit).ok());
    int64_t cut = r.checkpointDemandPos;
    std::vector<int64_t> ends;
    if (r.numCachedTokens < cut && cut < 16)
      ends.push_back(cut);
    ends.push_back(16);
    for (int64_t end : ends) {
      EXPECT_TRUE(m->hashBlocks(r, end - r.numCachedTokens).ok());
      r.numCachedTokens = end;
      m->completePreviousStateBatch();
    }
    EXPECT_TRUE(m->deallocate(r).ok());
    m->completePreviousStateBatch();
    m->completePreviousStateBatch();
  }
  return m;
}

} // namespace

TEST(CacheStats, MissDemandHit) {
  std::vector<int64_t> hits;
  auto m = demandRun(hits);
  ASSERT_EQ(hits, (std::vector<int64_t>{0, 0, 2}));
  const CacheStats &s = m->stats();
  EXPECT_EQ(s.requests, 3);
  EXPECT_EQ(s.fullTokens, 48);
  EXPECT_EQ(s.cachedTokens, 8);       // the third request's 2 blocks
  EXPECT_EQ(s.wantedTokens, 16);      // 2 blocks wanted by requests 2 and 3
  EXPECT_EQ(s.compressedTokens, 24);  // 3 indexed blocks for requests 2 and 3
  EXPECT_DOUBLE_EQ(s.hit(), 8.0 / 48);
  EXPECT_DOUBLE_EQ(s.compressedHit(), 24.0 / 48);
  EXPECT_DOUBLE_EQ(s.lostToCheckpoint(), 8.0 / 48);
  EXPECT_DOUBLE_EQ(s.lostUnrecoverable(), 8.0 / 48);
}

TEST(CacheStats, RanksMergeBySummation) {
  std::vector<int64_t> h1, h2;
  auto a = demandRun(h1), b = demandRun(h2);
  CacheStats merged = a->stats();
  merged += b->stats();
  EXPECT_EQ(merged.requests, 6);
  EXPECT_EQ(merged.fullTokens, 96);
  EXPECT_DOUBLE_EQ(merged.hit(), a->stats().hit()); // same ratios, twice the counts
  CacheFunnel f = a->funnel();
  f += b->funnel();
  EXPECT_EQ(f.demandsRecorded, 2 * a->funnel().demandsRecorded);
  EXPECT_EQ(f.fates.kept, 2 * a->funnel().fates.kept);
  EXPECT_GT(f.fates.kept, 0);
}

TEST(CacheStats, EmptyIsZeroNotNaN) {
  CacheStats s;
  EXPECT_EQ(s.hit(), 0.0);
  EXPECT_EQ(s.lostUnrecoverable(), 0.0);
}
