//===- PlacementTest.cpp - Where checkpoints are kept (placement) ---------===//
//
// specs/checkpoint-placement.md: prompt ends, branch points and response
// ends, against the reference's ladder-only placement, on a fork(1) model
// with state groups (block 16, ladder off unless a test turns it on).
//
//===----------------------------------------------------------------------===//

#include "poolrt/CacheManager.h"

#include <gtest/gtest.h>

using namespace poolrt;

namespace {

constexpr int64_t kBs = 16;

std::unique_ptr<CacheManager> manager(bool sparse, int64_t interval = 0) {
  CacheManagerConfig c;
  c.blockSize = kBs;
  c.numBlocks = 256;
  c.numGroups = 6;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = interval;
  if (!sparse)
    c.policy.placeAsReference();
  auto m = CacheManager::create(c);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.take();
}

Request request(int64_t id, const std::vector<int64_t> &tokens, int64_t output) {
  Request r;
  r.id = id;
  r.tokens = tokens;
  r.numPromptTokens = int64_t(tokens.size());
  r.responseEnd = r.numPromptTokens + output;
  return r;
}

std::vector<int64_t> seq(int64_t from, int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(from + i);
  return out;
}

/// Admit `r` and prefill it the way the engine does, one chunk per pass;
/// returns where the chunks ended.
std::vector<int64_t> prefill(CacheManager &m, Request &r, int64_t budget = 1 << 20) {
  int64_t hit = m.canAllocate(r);
  EXPECT_GE(hit, 0);
  EXPECT_TRUE(m.allocate(r, hit).ok());
  r.allocated = true;
  std::vector<int64_t> ends;
  while (r.numCachedTokens < r.numTokens()) {
    m.completePreviousStateBatch();
    int64_t start = r.numCachedTokens;
    int64_t chunk = m.finalizePrefillChunk(
        r, start, std::min(budget, r.numTokens() - start));
    EXPECT_GT(chunk, 0);
    EXPECT_TRUE(m.hashBlocks(r, chunk).ok());
    EXPECT_TRUE(r.setNumCachedTokens(start + chunk).ok());
    r.state.forkSource = GroupId(); // the engine's fork copy ran
    ends.push_back(start + chunk);
  }
  return ends;
}

/// Decode `n` tokens one at a time (no drafts), publishing as the engine does.
void decode(CacheManager &m, Request &r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m.completePreviousStateBatch();
    r.tokens.push_back(900000 + r.numTokens());
    ASSERT_TRUE(m.appendSlots(r, r.numTokens()).ok());
    int64_t committed = r.numTokens() - 1;
    bool done = i + 1 == n;
    ASSERT_TRUE(m.hashDecodeBlocks(r, committed, done ? 0 : 1).ok());
    ASSERT_TRUE(r.setNumCachedTokens(committed).ok());
    r.state.forkSource = GroupId();
  }
}

void finish(CacheManager &m, Request &r) {
  ASSERT_TRUE(m.deallocate(r).ok());
  m.completePreviousStateBatch();
  m.completePreviousStateBatch();
}

} // namespace

TEST(Placement, PromptEndCutsTheChunkAndTheNextTurnHitsIt) {
  auto m = manager(true);
  std::vector<int64_t> prompt = seq(1, 100); // prompt end 96
  Request a = request(1, prompt, 8);
  EXPECT_EQ(prefill(*m, a), (std::vector<int64_t>{96, 100}));
  CacheFunnel f = m->funnel();
  EXPECT_EQ(f.taken[int(CheckpointKind::PromptEnd)], 1);
  finish(*m, a);
  // The next turn extends the prompt: it resumes at the prompt end.
  std::vector<int64_t> next = prompt;
  for (int64_t t : seq(5000, 40))
    next.push_back(t);
  Request b = request(2, next, 8);
  Admission ad = m->admission(b);
  EXPECT_TRUE(ad.admissible);
  EXPECT_EQ(ad.hitTokens, 96);
  EXPECT_EQ(ad.reason, "");
  ASSERT_TRUE(m->allocate(b, ad.hitBlocks).ok());
  EXPECT_EQ(m->funnel().readBack[int(CheckpointKind::PromptEnd)], 1);
  finish(*m, b);
}

TEST(Placement, TheReferenceKeepsNothingInsideAShortPrompt) {
  auto m = manager(false, /*interval=*/8192);
  std::vector<int64_t> prompt = seq(1, 100);
  Request a = request(1, prompt, 8);
  EXPECT_EQ(prefill(*m, a), (std::vector<int64_t>{100}));
  finish(*m, a);
  std::vector<int64_t> next = prompt;
  next.push_back(7);
  Request b = request(2, next, 8);
  Admission ad = m->admission(b);
  EXPECT_EQ(ad.hitTokens, 0);
  EXPECT_EQ(ad.indexedBlocks, 6);
  EXPECT_EQ(ad.reason, "checkpoint missing");
  CacheFunnel f = m->funnel();
  for (int k = 0; k < kNumCheckpointKinds; ++k)
    EXPECT_EQ(f.taken[k], 0) << checkpointKindName(CheckpointKind(k));
}

TEST(Placement, ResponseEndIsTheLastBoundaryTheCommittedTokensReach) {
  auto m = manager(true);
  std::vector<int64_t> prompt = seq(1, 64); // a whole number of blocks
  Request a = request(1, prompt, 40);       // commits 64 + 39 = 103 -> 96
  prefill(*m, a);
  decode(*m, a, 40);
  CacheFunnel f = m->funnel();
  EXPECT_EQ(f.taken[int(CheckpointKind::PromptEnd)], 1);
  EXPECT_EQ(f.taken[int(CheckpointKind::ResponseEnd)], 1);
  std::vector<int64_t> all = a.tokens;
  finish(*m, a);
  // The next turn extends prompt + response: it resumes at 96.
  all.push_back(31337);
  Request b = request(2, all, 4);
  Admission ad = m->admission(b);
  EXPECT_EQ(ad.hitTokens, 96);
  ASSERT_TRUE(m->allocate(b, ad.hitBlocks).ok());
  EXPECT_EQ(m->funnel().readBack[int(CheckpointKind::ResponseEnd)], 1);
  finish(*m, b);
}

TEST(Placement, BranchPointOfASharedPrefix) {
  // Prompt ends and response ends off: the branch alone.
  CacheManagerConfig c;
  c.blockSize = kBs;
  c.numBlocks = 256;
  c.numGroups = 6;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = 0;
  c.policy.placeAsReference();
  c.policy.branchCheckpoints = true;
  auto m = CacheManager::create(c).take();
  std::vector<int64_t> system = seq(1, 48); // three blocks shared
  auto with = [&](int64_t from) {
    std::vector<int64_t> t = system;
    for (int64_t x : seq(from, 30))
      t.push_back(x);
    return t;
  };
  Request a = request(1, with(1000), 4);
  EXPECT_EQ(prefill(*m, a), (std::vector<int64_t>{78}));
  finish(*m, a);
  // b shares the system prompt with a, and nothing of it is checkpointed:
  // it misses, demands the branch point and its chunk is cut there.
  Request b = request(2, with(2000), 4);
  EXPECT_EQ(prefill(*m, b), (std::vector<int64_t>{48, 78}));
  EXPECT_EQ(m->funnel().taken[int(CheckpointKind::Branch)], 1);
  finish(*m, b);
  Request c3 = request(3, with(3000), 4);
  Admission ad = m->admission(c3);
  EXPECT_EQ(ad.hitTokens, 48);
  ASSERT_TRUE(m->allocate(c3, ad.hitBlocks).ok());
  EXPECT_EQ(m->funnel().readBack[int(CheckpointKind::Branch)], 1);
  finish(*m, c3);
}

TEST(Placement, KindsAreCountedAndNamed) {
  EXPECT_STREQ(checkpointKindName(CheckpointKind::PromptEnd), "prompt_end");
  EXPECT_STREQ(checkpointKindName(CheckpointKind::Branch), "branch");
  EXPECT_STREQ(checkpointKindName(CheckpointKind::ResponseEnd), "response_end");
  EXPECT_STREQ(checkpointKindName(CheckpointKind::Ladder), "ladder");
  // Every kind's counters are described (summation, metrics, the C API).
  int n = 0;
  CacheFunnel::describe([&](const CounterKey &k, auto) {
    n += std::string(k.key).find("taken_") == 0 ||
         std::string(k.key).find("dropped_") == 0 ||
         std::string(k.key).find("read_back_") == 0;
  });
  EXPECT_EQ(n, 3 * kNumCheckpointKinds);
  CacheFunnel a, b;
  a.readBack[2] = 3;
  b.readBack[2] = 4;
  a += b;
  EXPECT_EQ(a.readBack[2], 7);
}

TEST(Placement, BlocksPastTheLastCheckpointAreTheFirstVictims) {
  // Two requests fill a pool of 12 blocks. a: a 48-token prompt, its
  // prompt end (48) covers all 3 of its blocks. b, later: a 100-token
  // prompt (prompt end 96) and 40 decoded tokens (the response end is left
  // off): its blocks past 96 unlock nothing. Once both ended, b's three go
  // before a's, which were freed earlier, deepest first.
  CacheManagerConfig c;
  c.blockSize = kBs;
  c.numBlocks = 12;
  c.numGroups = 2;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = 0;
  c.policy.responseEndCheckpoints = false;
  auto m = CacheManager::create(c).take();
  Request a = request(1, seq(1, 48), 1);
  prefill(*m, a);
  std::vector<BlockId> ta = a.blockTable;
  ASSERT_EQ(ta.size(), 3u);
  finish(*m, a);
  Request b = request(2, seq(5000, 100), 40);
  prefill(*m, b);
  decode(*m, b, 40);
  std::vector<BlockId> tb = b.blockTable;
  ASSERT_EQ(tb.size(), 9u);
  finish(*m, b);
  ASSERT_EQ(m->blocks().numFree(), 12);
  for (BlockId want : {tb[8], tb[7], tb[6], ta[2]}) {
    auto v = m->blocks().pop();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->value, want.value);
    ASSERT_TRUE(m->blocks().allocate(*v).ok());
  }
}

TEST(Placement, DemoteLeavesHeldAndVacantBlocksAlone) {
  auto pool = BlockPool::create(4).take();
  std::vector<BlockId> held;
  for (int i = 0; i < 3; ++i) {
    auto b = pool.pop();
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(pool.allocate(*b).ok());
    int32_t toks[2] = {i, i + 1};
    ASSERT_TRUE(pool.publish(*b, BlockHash(100 + i), toks, 2).ok());
    held.push_back(*b);
  }
  pool.demote(held[1]);         // held: nothing happens
  pool.demote(BlockId(3));      // vacant: nothing happens
  pool.demote(BlockId(1 << 20)); // out of range: nothing happens
  for (BlockId b : held)
    ASSERT_TRUE(pool.free(b).ok());
  pool.demote(held[2]); // cached: the next victim once the vacant one is gone
  auto v = pool.pop();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->value, 3); // vacant first
  auto w = pool.pop();
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->value, held[2].value);
}
