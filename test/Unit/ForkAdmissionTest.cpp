//===- ForkAdmissionTest.cpp - Resuming from the last free group ----------===//
//
// Found by the cache model check (CacheModelCheckTest): under a fork
// transfer, a hit whose checkpoint group is the only free group passed
// can_allocate and then failed allocate ("no free group"), because
// claiming the source took the group the fork was to write into. Such an
// admission must spend the checkpoint and adopt its group (spec 8.5).
//
//===----------------------------------------------------------------------===//

#include "poolrt/CacheManager.h"

#include <gtest/gtest.h>

using namespace poolrt;

TEST(ForkAdmission, TheLastFreeGroupAsForkSourceIsAdopted) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 16;
  c.numGroups = 2;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = 4;
  auto m = CacheManager::create(c).take();
  StateGroupPool &groups = *m->groups();

  // A prefills 8 of its 12 tokens and checkpoints there: it moves to group
  // 1, group 0 keeps the state as of 8 tokens.
  Request a;
  a.id = 1;
  for (int64_t t = 0; t < 12; ++t)
    a.tokens.push_back(t);
  a.numPromptTokens = 12;
  ASSERT_EQ(m->canAllocate(a), 0);
  ASSERT_TRUE(m->allocate(a, 0).ok());
  ASSERT_EQ(m->finalizePrefillChunk(a, 0, 12), 8);
  ASSERT_TRUE(m->hashBlocks(a, 8).ok());
  a.numCachedTokens = 8;
  ASSERT_EQ(a.state.group, GroupId(1));
  ASSERT_EQ(a.state.forkSource, GroupId(0));
  a.state.forkSource = GroupId(); // its next forward read the source
  m->completePreviousStateBatch();
  m->completePreviousStateBatch();
  ASSERT_TRUE(groups.holdsCheckpoint(GroupId(0)));
  ASSERT_EQ(groups.numFree(), 1);

  // B shares the 8-token prefix: its hit's source is the only free group.
  Request b;
  b.id = 2;
  for (int64_t t = 0; t < 8; ++t)
    b.tokens.push_back(t);
  for (int64_t t = 100; t < 104; ++t)
    b.tokens.push_back(t);
  b.numPromptTokens = 12;
  int64_t hit = m->canAllocate(b);
  ASSERT_EQ(hit, 2);
  Status s = m->allocate(b, hit);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(b.state.group, GroupId(0)); // adopted, checkpoint spent
  EXPECT_FALSE(b.state.forkSource.valid());
  EXPECT_EQ(groups.numFree(), 0);
  EXPECT_FALSE(groups.lookupGroup(m->prefixHashes(b, 2)[1]).valid());
  EXPECT_TRUE(groups.invariantsHold());
  EXPECT_TRUE(m->blocks().invariantsHold());
}
