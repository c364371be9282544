//===- MisuseTest.cpp - API misuse is a typed refusal ---------------------===//
//
// Each case was accepted silently before (issue 11): a negative checkpoint
// interval read as 0, a second deallocate freed shared prefix blocks again,
// hashBlocks published into a table the manager never gave out, a
// computed-KV mark outside the tokens, a live list naming a request twice
// or one already freed, ref_count of an unknown block reading 0. Each now
// fails with the kind the caller can act on and leaves every pool as it was.
//
//===----------------------------------------------------------------------===//

#include "poolrt/CacheManager.h"
#include "test/Unit/ToyBoundary.h"

#include <gtest/gtest.h>

using namespace poolrt;

namespace {

/// 16 blocks of 4 tokens, 4 fork(8) groups, a rung every 16 tokens.
CacheManagerConfig forkConfig() {
  CacheManagerConfig c;
  c.blockSize = 4, c.numBlocks = 16, c.numGroups = 4;
  c.transfer = StateTransfer::fork(8).value();
  c.policy.checkpointIntervalTokens = 16;
  return c;
}

std::unique_ptr<CacheManager> forkManager() {
  auto m = CacheManager::create(forkConfig());
  EXPECT_TRUE(m.ok());
  return m.take();
}

Request prompt(int64_t n, int64_t id = 1) {
  Request r;
  r.id = id;
  for (int64_t t = 0; t < n; ++t)
    r.tokens.push_back(100 + t);
  r.numPromptTokens = n;
  return r;
}

/// What a refusal must leave alone.
struct PoolCounts {
  int32_t blocksFree, blocksUsed, blocksIndexed, numBlocks, groupsFree, numGroups;
  explicit PoolCounts(CacheManager &m)
      : blocksFree(m.blocks().numFree()), blocksUsed(m.blocks().numUsed()),
        blocksIndexed(m.blocks().numIndexed()), numBlocks(m.blocks().numBlocks()),
        groupsFree(m.groups()->numFree()), numGroups(m.groups()->numGroups()) {}
  bool operator==(const PoolCounts &o) const {
    return blocksFree == o.blocksFree && blocksUsed == o.blocksUsed &&
           blocksIndexed == o.blocksIndexed && numBlocks == o.numBlocks &&
           groupsFree == o.groupsFree && numGroups == o.numGroups;
  }
};

bool says(const Error &e, const char *phrase) {
  return e.message.find(phrase) != std::string::npos;
}

/// `got` is a refusal of kind `kind` that says `phrase`.
template <typename R>
void expectRefused(const R &got, ErrorKind kind, const char *phrase) {
  ASSERT_FALSE(got.ok()) << "accepted; wanted: " << phrase;
  EXPECT_EQ(errorKindName(got.error().kind), std::string(errorKindName(kind)));
  EXPECT_TRUE(says(got.error(), phrase)) << got.error().message;
}

} // namespace

TEST(CacheManagerMisuse, NegativeCheckpointIntervalIsRefused) {
  CacheManagerConfig c = forkConfig();
  c.policy.checkpointIntervalTokens = -1;
  auto m = CacheManager::create(c);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::InvalidArgument);
  EXPECT_TRUE(says(m.error(), "checkpoint interval must be >= 0")) << m.error().message;
  c.policy.checkpointIntervalTokens = 0; // still the way to turn it off
  auto off = CacheManager::create(c);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ((*off)->interval(), 0);
}

TEST(CacheManagerMisuse, DeallocateTwiceIsRefused) {
  auto m = forkManager();
  Request r = prompt(16);
  ASSERT_TRUE(m->allocate(r, m->canAllocate(r)).ok());
  EXPECT_TRUE(r.allocated);
  ASSERT_TRUE(m->deallocate(r).ok());
  EXPECT_FALSE(r.allocated);
  PoolCounts before(*m);
  expectRefused(m->deallocate(r), ErrorKind::State,
                "deallocate: request 1 is not allocated");
  EXPECT_TRUE(PoolCounts(*m) == before);
  EXPECT_TRUE(m->blocks().invariantsHold());
  EXPECT_TRUE(m->groups()->invariantsHold());
}

TEST(CacheManagerMisuse, DeallocateOfANeverAllocatedRequestIsRefused) {
  auto m = forkManager();
  Request mine = prompt(16, 1);
  ASSERT_TRUE(m->allocate(mine, 0).ok());
  // A stranger carrying someone else's table must not free it.
  Request stranger = prompt(16, 2);
  stranger.blockTable = mine.blockTable;
  PoolCounts before(*m);
  Status s = m->deallocate(stranger);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::State);
  EXPECT_TRUE(PoolCounts(*m) == before);
  // And allocating a request that already is allocated is refused too.
  Status again = m->allocate(mine, 0);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::State);
  EXPECT_TRUE(PoolCounts(*m) == before);
}

TEST(CacheManagerMisuse, HashBlocksOfAnUnallocatedRequestIsRefused) {
  auto m = forkManager();
  Request r = prompt(16);
  PoolCounts before(*m);
  expectRefused(m->hashBlocks(r, 16), ErrorKind::State,
                "hash_blocks: request 1 is not allocated");
  EXPECT_TRUE(PoolCounts(*m) == before);
  // After deallocate too: its old table is not its own any more.
  ASSERT_TRUE(m->allocate(r, 0).ok());
  ASSERT_TRUE(m->deallocate(r).ok());
  Status after = m->hashBlocks(r, 16);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().kind, ErrorKind::State);
  EXPECT_EQ(m->blocks().numIndexed(), 0);
}

TEST(CacheManagerMisuse, NumCachedTokensOutsideTheTokensIsRefused) {
  Request r = prompt(16);
  ASSERT_TRUE(r.setNumCachedTokens(16).ok());
  for (int64_t bad : {-5, 17}) {
    Status s = r.setNumCachedTokens(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().kind, ErrorKind::InvalidArgument);
    EXPECT_TRUE(says(s.error(), "is outside [0, 16]")) << s.error().message;
    EXPECT_EQ(r.numCachedTokens, 16);
  }
  EXPECT_TRUE(r.setNumCachedTokens(0).ok());
}

TEST(CacheManagerMisuse, MoveBoundaryWithARepeatedRequestIsRefused) {
  auto m = poolc_test::toyManager();
  Request r = prompt(40);
  ASSERT_TRUE(m->allocate(r, m->canAllocate(r)).ok());
  std::vector<BlockId> table = r.blockTable;
  PoolCounts before(*m);
  expectRefused(m->moveBoundary(5, {&r, &r}), ErrorKind::InvalidArgument,
                "in the live list twice (entries 0 and 1)");
  EXPECT_TRUE(PoolCounts(*m) == before);
  EXPECT_EQ(r.blockTable, table);
}

TEST(CacheManagerMisuse, MoveBoundaryWithAFreedRequestIsRefused) {
  auto m = poolc_test::toyManager();
  Request live = prompt(40, 1), freed = prompt(8, 2);
  ASSERT_TRUE(m->allocate(live, 0).ok());
  ASSERT_TRUE(m->allocate(freed, 0).ok());
  ASSERT_TRUE(m->deallocate(freed).ok());
  PoolCounts before(*m);
  expectRefused(m->moveBoundary(5, {&live, &freed}), ErrorKind::State,
                "move_boundary: request 2 is not allocated");
  EXPECT_TRUE(PoolCounts(*m) == before);
  EXPECT_TRUE(m->moveBoundary(5, {&live}).ok()); // the same move, well formed
}

TEST(BlockPoolMisuse, RefCountOfAnUnknownBlockIsALookupError) {
  auto p = BlockPool::create(4).take();
  EXPECT_EQ(*p.refCount(BlockId(3)), 0);
  for (int32_t bad : {-1, 4, 1 << 30}) {
    auto n = p.refCount(BlockId(bad));
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_EQ(n.error().kind, ErrorKind::Lookup);
    EXPECT_TRUE(says(n.error(), "no such block")) << n.error().message;
  }
}

TEST(CacheManagerAdmission, SaysWhyAndInBothUnits) {
  // Refused for blocks: 100 tokens need 25 blocks of the 16.
  auto m = forkManager();
  Request big = prompt(100);
  Admission a = m->admission(big);
  EXPECT_FALSE(a.admissible);
  EXPECT_EQ(a.reason, "blocks");
  EXPECT_EQ(a.neededBlocks, 25);
  EXPECT_EQ(a.hitBlocks, 0);
  EXPECT_EQ(m->canAllocate(big), -1);
  // Refused for state groups: all four held.
  std::vector<Request> held;
  for (int i = 0; i < 4; ++i)
    held.push_back(prompt(4, 10 + i));
  for (Request &r : held) {
    r.state.hasPerReqCache = true;
    ASSERT_TRUE(m->allocate(r, m->canAllocate(r)).ok());
  }
  Request more = prompt(4, 20);
  more.state.hasPerReqCache = true;
  a = m->admission(more);
  EXPECT_FALSE(a.admissible);
  EXPECT_EQ(a.reason, "state groups");
  // Admitted: the hit in blocks and in tokens agree with canAllocate.
  for (Request &r : held)
    ASSERT_TRUE(m->deallocate(r).ok());
  Request small = prompt(8, 30);
  a = m->admission(small);
  EXPECT_TRUE(a.admissible);
  EXPECT_EQ(a.reason, "");
  EXPECT_EQ(a.hitTokens, a.hitBlocks * m->blockSize());
  EXPECT_EQ(a.hitBlocks, m->canAllocate(small));
}
