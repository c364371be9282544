//===- LadderTest.cpp - The checkpoint ladder as the scheduler runs it ----===//
//
// The expectations are worked out by hand from spec 8.6 (rungs every
// interval up to the last that leaves the successor its room, the demand
// counterfactual, the chunk cut, the decode spacing rule), not read back
// from the code under test.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Ladder.h"

#include <gtest/gtest.h>

using namespace poolrt;

namespace {

CacheManagerConfig forkConfig(int64_t groups) {
  CacheManagerConfig c;
  c.blockSize = 16;
  c.numBlocks = 256;
  c.numGroups = groups;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = 64;
  c.policy.placeAsReference();
  return c;
}

void expectCovers(const LadderRequest &r, int64_t from, int64_t to, int64_t budget) {
  ASSERT_FALSE(r.prefill.empty());
  EXPECT_EQ(r.prefill.front().start, from);
  EXPECT_EQ(r.prefill.back().end, to);
  for (size_t i = 0; i < r.prefill.size(); ++i) {
    EXPECT_GT(r.prefill[i].end, r.prefill[i].start);
    EXPECT_LE(r.prefill[i].end - r.prefill[i].start, budget);
    if (i > 0)
      EXPECT_EQ(r.prefill[i].start, r.prefill[i - 1].end);
  }
}

} // namespace

TEST(Ladder, ForkRungsDemandAndDecodeSpacing) {
  LadderQuery q;
  q.promptTokens = 300;
  q.outputTokens = 100;
  q.tailTokens = 40;
  q.maxBatchedTokens = 48;
  auto L = checkpointLadder(forkConfig(16), q);
  ASSERT_TRUE(L.ok()) << L.error().message;
  EXPECT_EQ(L->interval, 64);
  EXPECT_EQ(L->transfer, "fork");
  ASSERT_EQ(L->requests.size(), 3u);

  // First: cold; the last rung leaving the fork its 1 token of room is
  // floor((300 - 1) / 64) * 64 = 256. The prompt's end keeps nothing (the
  // successor of the last chunk forwards no prompt token).
  const LadderRequest &a = L->requests[0];
  EXPECT_EQ(a.hitTokens, 0);
  EXPECT_EQ(a.limitTokens, 256);
  EXPECT_EQ(a.demandPos, 0);
  expectCovers(a, 0, 300, 48);
  EXPECT_EQ(a.checkpoints(), (std::vector<int64_t>{64, 128, 192, 256}));
  // Decode: block boundaries at least one interval after the last kept
  // checkpoint: 256 + 64 = 320, then 384; the last step (399) has no room.
  EXPECT_EQ(a.decodeCheckpoints, (std::vector<int64_t>{320, 384}));
  EXPECT_EQ(a.outputTokens, 100);

  // Follow-up (300 + 40 tokens): the index holds the prompt's 18 full
  // blocks (288 tokens); the gate stops the hit at the checkpoint at 256 and
  // the demand asks for 288, where its first chunk is cut. Its own rungs go
  // up to floor((340 - 1) / 64) * 64 = 320.
  const LadderRequest &b = L->requests[1];
  EXPECT_EQ(b.promptTokens, 340);
  EXPECT_EQ(b.indexedTokens, 288);
  EXPECT_EQ(b.hitTokens, 256);
  EXPECT_EQ(b.demandPos, 288);
  EXPECT_EQ(b.reason, "checkpoint missing");
  EXPECT_EQ(b.limitTokens, 320);
  expectCovers(b, 256, 340, 48);
  ASSERT_GE(b.prefill.size(), 1u);
  EXPECT_EQ(b.prefill[0].end, 288);
  EXPECT_TRUE(b.prefill[0].cutForDemand);
  EXPECT_EQ(b.checkpoints(), (std::vector<int64_t>{288, 320}));
  for (size_t i = 1; i < b.prefill.size(); ++i)
    EXPECT_FALSE(b.prefill[i].cutForDemand);

  // Repeat (300 + another 40): the demand rung is held, the hit takes all
  // 18 shared blocks and records no demand.
  const LadderRequest &c = L->requests[2];
  EXPECT_EQ(c.indexedTokens, 288);
  EXPECT_EQ(c.hitTokens, 288);
  EXPECT_EQ(c.demandPos, 0);
  EXPECT_EQ(c.reason, "");
  expectCovers(c, 288, 340, 48);
}

TEST(Ladder, StatelessHitsWhateverIsIndexed) {
  CacheManagerConfig c;
  c.blockSize = 16;
  c.numBlocks = 64;
  LadderQuery q;
  q.promptTokens = 100;
  q.outputTokens = 3;
  q.tailTokens = 10;
  auto L = checkpointLadder(c, q);
  ASSERT_TRUE(L.ok()) << L.error().message;
  EXPECT_EQ(L->transfer, "stateless");
  EXPECT_FALSE(L->note.empty());
  // 100 shared tokens: 6 full blocks.
  EXPECT_EQ(L->requests[1].hitTokens, 96);
  EXPECT_EQ(L->requests[2].hitTokens, 96);
  for (const LadderRequest &r : L->requests) {
    EXPECT_TRUE(r.checkpoints().empty());
    EXPECT_TRUE(r.decodeCheckpoints.empty());
    EXPECT_EQ(r.demandPos, 0);
  }
}

TEST(Ladder, SnapsTheIntervalAndSaysSo) {
  CacheManagerConfig c = forkConfig(16);
  c.policy.checkpointIntervalTokens = 70; // snapped to 64
  c.policy.placeAsReference();
  LadderQuery q;
  q.promptTokens = 200;
  q.maxBatchedTokens = 64;
  auto L = checkpointLadder(c, q);
  ASSERT_TRUE(L.ok()) << L.error().message;
  EXPECT_EQ(L->interval, 64);
  EXPECT_NE(L->note.find("snapped to 64"), std::string::npos) << L->note;
  EXPECT_EQ(L->requests[0].checkpoints(), (std::vector<int64_t>{64, 128, 192}));
}

TEST(Ladder, OneRungPerChunk) {
  // A chunk is cut at most once, at the last rung it reaches (spec 8.6
  // checkpoint_cut): one 2048-token pass over 200 tokens keeps only 192.
  LadderQuery q;
  q.promptTokens = 200;
  auto L = checkpointLadder(forkConfig(16), q);
  ASSERT_TRUE(L.ok()) << L.error().message;
  const LadderRequest &a = L->requests[0];
  ASSERT_EQ(a.prefill.size(), 2u);
  EXPECT_EQ(a.prefill[0].end, 192);
  EXPECT_FALSE(a.prefill[0].cutForDemand);
  EXPECT_EQ(a.checkpoints(), (std::vector<int64_t>{192}));
}

TEST(Ladder, RefusesBadQueriesAndTooSmallPools) {
  LadderQuery q;
  q.promptTokens = 0;
  auto zero = checkpointLadder(forkConfig(16), q);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(zero.error().message.find("prompt"), std::string::npos);

  q.promptTokens = 100;
  q.maxBatchedTokens = 8; // under one block of 16
  auto budget = checkpointLadder(forkConfig(16), q);
  ASSERT_FALSE(budget.ok());
  EXPECT_NE(budget.error().message.find("budget"), std::string::npos);

  // 256 blocks of 16 tokens hold 4096 tokens: a 5000-token prompt cannot
  // be admitted alone.
  q.maxBatchedTokens = 2048;
  q.promptTokens = 5000;
  auto big = checkpointLadder(forkConfig(16), q);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().kind, ErrorKind::State);
  EXPECT_NE(big.error().message.find("first request (5000 tokens)"), std::string::npos)
      << big.error().message;
}
