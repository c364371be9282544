//===- WindowClassTest.cpp - Sliding / chunked PAGE classes: hit and release -===//
//
// The window rules of specs/window-classes.md as hand-computed vectors, then
// the cache manager carrying them: which blocks a window class releases as
// a request advances, which blocks a prefix hit needs (only the window's),
// what eviction of an out-of-window block does to a later hit, the
// per-request reserve that keeps a window pool from running dry, and one
// shared block id space with distinct keys. A randomized walk checks the
// invariants over many requests.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Attention.h"
#include "poolrt/CacheManager.h"
#include "test/Unit/CacheManagerTestAccess.h"

#include <gtest/gtest.h>

#include <random>

using namespace poolrt;
using TestAccess = CacheManagerTestAccess;

namespace {

AttentionPattern sliding(int64_t w) { return {AttentionKind::Sliding, w}; }
AttentionPattern chunked(int64_t c) { return {AttentionKind::Chunked, c}; }

struct RuleCase {
  AttentionPattern p;
  int64_t bs, t, margin;
  int64_t first, keptFrom; // firstAttended(t), keptFrom(t, margin, bs)
};

// Worked by hand: sliding W reads [max(0, t - W + 1), t], chunked C reads
// [t - t mod C, t]; keptFrom = firstAttended(max(0, t - margin)) / bs.
const RuleCase kRules[] = {
    {sliding(8), 4, 0, 0, 0, 0},
    {sliding(8), 4, 7, 0, 0, 0},    // 7 - 7 = 0
    {sliding(8), 4, 8, 0, 1, 0},    // reads [1, 8]: block 0 still needed
    {sliding(8), 4, 11, 0, 4, 1},   // reads [4, 11]: block 0 is out
    {sliding(8), 4, 20, 0, 13, 3},  // reads [13, 20]: blocks 0..2 out
    {sliding(8), 4, 20, 2, 13, 2},  // margin 2: as if at 18 -> [11, 18], block 2 kept
    {sliding(1), 4, 5, 0, 5, 1},    // a window of one token: itself
    {chunked(8), 4, 7, 0, 0, 0},
    {chunked(8), 4, 8, 0, 8, 2},    // a new chunk: blocks 0, 1 out at once
    {chunked(8), 4, 13, 0, 8, 2},
    {chunked(8), 4, 17, 2, 16, 2},  // margin 2: as if at 15 -> chunk [8, 16)
    {sliding(1024), 16, 1600, 0, 577, 36},  // Gemma 3
    {sliding(128), 16, 160, 0, 33, 2},      // gpt-oss
    {chunked(8192), 16, 8192, 0, 8192, 512}, // Llama 4
};

} // namespace

TEST(WindowRules, FirstAttendedAndKeptFrom) {
  for (const RuleCase &c : kRules) {
    SCOPED_TRACE(std::string(attentionKindName(c.p.kind)) + " " +
                 std::to_string(c.p.tokens) + " t=" + std::to_string(c.t) +
                 " margin=" + std::to_string(c.margin));
    EXPECT_EQ(c.p.firstAttended(c.t), c.first);
    EXPECT_EQ(c.p.keptFrom(c.t, c.margin, c.bs), c.keptFrom);
  }
  AttentionPattern full;
  EXPECT_EQ(full.firstAttended(1000), 0);
  EXPECT_EQ(full.keptFrom(1000, 0, 16), 0);
  EXPECT_FALSE(full.isWindow());
}

TEST(WindowRules, RingAndReserve) {
  // ring = ceil((tokens - 1 + margin) / bs) + 1
  EXPECT_EQ(sliding(8).ringBlocks(0, 4), 3);   // ceil(7/4) + 1
  EXPECT_EQ(sliding(8).ringBlocks(2, 4), 4);   // ceil(9/4) + 1
  EXPECT_EQ(sliding(1).ringBlocks(0, 4), 1);
  EXPECT_EQ(chunked(8).ringBlocks(0, 4), 3);
  EXPECT_EQ(sliding(1024).ringBlocks(0, 16), 65); // ceil(1023/16) + 1
  EXPECT_EQ(sliding(128).ringBlocks(5, 16), 10);  // ceil(132/16) + 1
  EXPECT_EQ(sliding(8).reserveBlocks(0, 16, 4), 7); // ring 3 + 4 blocks of forward
  EXPECT_EQ(sliding(8).reserveBlocks(0, 1, 4), 4);
  // The ring bounds what is held between forwards, for every position.
  for (AttentionPattern p : {sliding(8), sliding(5), chunked(8), chunked(12)})
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t n = 0; n < 200; ++n) {
        int64_t held = (n + 3) / 4 - p.keptFrom(n, m, 4);
        EXPECT_LE(held, p.ringBlocks(m, 4)) << n;
      }
}

TEST(WindowRules, HitNeedsOnlyTheWindowsBlocks) {
  // A hit of k blocks resumes at k * bs and needs blocks [keptFrom(k*bs), k).
  EXPECT_TRUE(sliding(8).hitResumable(0, 0, 4));
  EXPECT_TRUE(sliding(8).hitResumable(5, 2, 4));  // needs blocks 3, 4
  EXPECT_FALSE(sliding(8).hitResumable(5, 1, 4));
  EXPECT_FALSE(sliding(8).hitResumable(1, 0, 4)); // needs block 0
  EXPECT_TRUE(chunked(8).hitResumable(4, 0, 4));  // at a chunk start: nothing
  EXPECT_FALSE(chunked(8).hitResumable(3, 0, 4)); // needs block 2
  EXPECT_TRUE(chunked(8).hitResumable(3, 1, 4));
  EXPECT_TRUE(sliding(1024).hitResumable(100, 64, 16)); // blocks 36..99
  EXPECT_FALSE(sliding(1024).hitResumable(100, 63, 16));
  EXPECT_TRUE(sliding(128).hitResumable(10, 8, 16)); // blocks 2..9
  AttentionPattern full;
  EXPECT_FALSE(full.hitResumable(3, 2, 4)); // full needs all of them
}

namespace {

std::unique_ptr<CacheManager> hybrid(AttentionPattern p, int64_t windowBlocks,
                                     int64_t reserve, int64_t fullBlocks = 64,
                                     int64_t margin = 0) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = fullBlocks;
  c.windowClasses.push_back({"local", p, windowBlocks, reserve});
  c.windowMarginTokens = margin;
  auto m = CacheManager::create(c);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.take();
}

Request prompt(int64_t id, std::vector<int64_t> toks) {
  Request r;
  r.id = id;
  r.tokens = std::move(toks);
  r.numPromptTokens = r.numTokens();
  return r;
}

std::vector<int64_t> iota(int64_t n, int64_t from = 0) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(from + i);
  return v;
}

std::vector<int64_t> cat(std::vector<int64_t> a, const std::vector<int64_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// One prefill forward as the engine runs it: the chunk the cache manager
/// allows, then publication and the computed mark.
int64_t forward(CacheManager &m, Request &r, int64_t want) {
  int64_t start = r.numCachedTokens;
  int64_t chunk = m.finalizePrefillChunk(r, start, want);
  EXPECT_TRUE(m.hashBlocks(r, chunk).ok());
  EXPECT_TRUE(r.setNumCachedTokens(start + chunk).ok());
  return chunk;
}

std::vector<int32_t> ids(const std::vector<BlockId> &t) {
  std::vector<int32_t> out;
  for (BlockId b : t)
    out.push_back(b.valid() ? b.value : -1);
  return out;
}

} // namespace

TEST(WindowClass, SlidingReleasesAndHitsOnlyNeedTheWindow) {
  // W 8, bs 4, ring 3, reserve 4 (one block of forward): a pool of 8
  // window blocks backs two requests.
  auto m = hybrid(sliding(8), 8, 4);
  Request a = prompt(1, iota(20));
  ASSERT_EQ(m->canAllocate(a), 0);
  ASSERT_TRUE(m->allocate(a, 0).ok());
  EXPECT_TRUE(a.windowTables[0].empty());
  // The reserve caps the first forward at (0 + 4 - 0) * 4 = 16 tokens.
  EXPECT_EQ(forward(*m, a, 20), 16);
  EXPECT_EQ(ids(a.windowTables[0]), (std::vector<int32_t>{0, 1, 2, 3}));
  // At 16 the next query reads [9, 16]: blocks 0 and 1 are released (they
  // stay indexed, evictable), block 4 is taken.
  EXPECT_EQ(forward(*m, a, 4), 4);
  EXPECT_EQ(ids(a.windowTables[0]), (std::vector<int32_t>{-1, -1, 2, 3, 4}));
  BlockPool &wp = TestAccess::windowPool(*m, 0);
  EXPECT_EQ(wp.numFree(), 5);    // 3 vacant + 2 cached
  EXPECT_EQ(wp.numIndexed(), 5); // blocks 0..4 of the prompt
  EXPECT_TRUE(wp.checkInvariants().ok());

  // Same 20 tokens and more: the full class has 5 blocks; the hit resumes
  // at 20, whose window [13, 20] needs blocks 3 and 4 only.
  Request b = prompt(2, iota(24));
  Admission ad = m->admission(b);
  ASSERT_TRUE(ad.admissible) << ad.reason;
  EXPECT_EQ(ad.hitBlocks, 5);
  ASSERT_TRUE(m->allocate(b, 5).ok());
  EXPECT_EQ(ids(b.windowTables[0]), (std::vector<int32_t>{-1, -1, -1, 3, 4}));

  // Two reserves (2 x 4) take the pool of 8: a third request waits.
  Request c = prompt(3, cat(iota(12), iota(8, 900)));
  ad = m->admission(c);
  EXPECT_FALSE(ad.admissible);
  EXPECT_EQ(ad.reason, "blocks");

  ASSERT_TRUE(m->deallocate(a).ok());
  // Now c resumes at 12 (window [5, 12]: blocks 1, 2; block 1 was
  // released by a, cached, still indexed).
  ad = m->admission(c);
  ASSERT_TRUE(ad.admissible) << ad.reason;
  EXPECT_EQ(ad.hitBlocks, 3);
  ASSERT_TRUE(m->allocate(c, 3).ok());
  EXPECT_EQ(ids(c.windowTables[0]), (std::vector<int32_t>{-1, 1, 2}));
  ASSERT_TRUE(m->deallocate(b).ok());
  ASSERT_TRUE(m->deallocate(c).ok());
  EXPECT_EQ(wp.numFree(), 8);
  EXPECT_EQ(m->blocks().numFree(), 64);
  EXPECT_TRUE(wp.checkInvariants().ok());
}

TEST(WindowClass, AnEvictedWindowBlockCutsTheHitToAnEarlierWindow) {
  // A window pool of 4 blocks (one reserve): a's second forward evicts its
  // own released block 1 (the least recently freed: 1 was freed before 0).
  auto m = hybrid(sliding(8), 4, 4);
  Request a = prompt(1, iota(20));
  ASSERT_TRUE(m->allocate(a, m->canAllocate(a)).ok());
  EXPECT_EQ(forward(*m, a, 20), 16);
  EXPECT_EQ(forward(*m, a, 4), 4);
  EXPECT_EQ(ids(a.windowTables[0]), (std::vector<int32_t>{-1, -1, 2, 3, 1}));
  ASSERT_TRUE(m->deallocate(a).ok());
  // The full class holds 3 blocks of c's prefix. A hit of 3 needs window
  // blocks 1, 2 (1 is gone); of 2 needs 0, 1 (1 is gone); of 1 needs block
  // 0, which is there: the hit is 1 block.
  Request c = prompt(3, cat(iota(12), iota(8, 900)));
  Admission ad = m->admission(c);
  ASSERT_TRUE(ad.admissible);
  EXPECT_EQ(ad.hitBlocks, 1);
  EXPECT_EQ(ad.indexedBlocks, 1);
  EXPECT_EQ(ad.reason, "window blocks missing");
  ASSERT_TRUE(m->allocate(c, 1).ok());
  EXPECT_EQ(ids(c.windowTables[0]), (std::vector<int32_t>{0}));
  EXPECT_EQ(c.numCachedTokens, 4);
  ASSERT_TRUE(m->deallocate(c).ok());
}

TEST(WindowClass, ChunkedHitsAtAChunkStartNeedNoWindowBlock) {
  // C 8, bs 4: at 16 a new chunk starts, so a's second forward releases
  // all four blocks and evicts the coldest (block 3) for block 4.
  auto m = hybrid(chunked(8), 4, 4);
  Request a = prompt(1, iota(20));
  ASSERT_TRUE(m->allocate(a, m->canAllocate(a)).ok());
  EXPECT_EQ(forward(*m, a, 20), 16);
  EXPECT_EQ(forward(*m, a, 4), 4);
  EXPECT_EQ(ids(a.windowTables[0]), (std::vector<int32_t>{-1, -1, -1, -1, 3}));
  ASSERT_TRUE(m->deallocate(a).ok());

  Request d = prompt(4, cat(iota(16), iota(4, 900)));
  EXPECT_EQ(m->canAllocate(d), 4); // resumes at 16: its chunk is empty
  Request e = prompt(5, cat(iota(12), iota(8, 900)));
  EXPECT_EQ(m->canAllocate(e), 3); // resumes at 12: needs block 2 (there)
  Request f = prompt(6, iota(24));
  EXPECT_EQ(m->canAllocate(f), 5); // resumes at 20: needs block 4 (there)
  ASSERT_TRUE(m->allocate(f, 5).ok());
  EXPECT_EQ(ids(f.windowTables[0]), (std::vector<int32_t>{-1, -1, -1, -1, 3}));
  ASSERT_TRUE(m->deallocate(f).ok());
}

TEST(WindowClass, OneBlockIdSpaceWithDistinctKeys) {
  // The window class draws from the full class's pool of 10 blocks.
  auto m = hybrid(sliding(8), 0, 4, 10);
  Request a = prompt(1, iota(16));
  ASSERT_EQ(m->canAllocate(a), 0);
  ASSERT_TRUE(m->allocate(a, 0).ok());
  EXPECT_EQ(ids(a.blockTable), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(forward(*m, a, 16), 16);
  EXPECT_EQ(ids(a.windowTables[0]), (std::vector<int32_t>{4, 5, 6, 7}));
  std::vector<BlockHash> h = m->prefixHashes(a, 4);
  EXPECT_EQ(m->blocks().lookup(h[0]).value, 0);
  EXPECT_EQ(m->blocks().lookup(TestAccess::windowKey(*m, h[0], 0)).value, 4);
  EXPECT_NE(TestAccess::windowKey(*m, h[0], 0), h[0]);
  // 2 blocks free: another request needs its 4 + a reserve of 4.
  Request b = prompt(2, iota(16, 500));
  Admission ad = m->admission(b);
  EXPECT_FALSE(ad.admissible);
  EXPECT_EQ(ad.reason, "blocks");
  // a's decode may take one of them: the reserve is fully held (4 of 4).
  EXPECT_TRUE(m->canAppend(a, 17));
  a.tokens.push_back(42);
  ASSERT_TRUE(m->appendSlots(a, 17).ok());
  // At 16 the window [9, 16] no longer reads block 0 or 1.
  // Fresh blocks come vacant-first: the full class took 8, the window 9;
  // 4 and 5 stay cached, indexed under the window's keys.
  EXPECT_EQ(ids(a.windowTables[0]), (std::vector<int32_t>{-1, -1, 6, 7, 9}));
  EXPECT_EQ(m->blocks().lookup(TestAccess::windowKey(*m, h[1], 0)).value, 5);
  EXPECT_EQ(a.blockTable.size(), 5u);
  ASSERT_TRUE(m->deallocate(a).ok());
  EXPECT_EQ(m->blocks().numFree(), 10);
  EXPECT_TRUE(m->blocks().checkInvariants().ok());
}

TEST(WindowClass, MarginKeepsBlocksForRolledBackDrafts) {
  // Margin 2 (two drafts): at 16 the class keeps from keptFrom(14) = 7/4 = 1.
  auto m = hybrid(sliding(8), 16, 6, 64, 2);
  Request a = prompt(1, iota(16));
  ASSERT_TRUE(m->allocate(a, 0).ok());
  EXPECT_EQ(forward(*m, a, 16), 16);
  a.tokens.push_back(7);
  ASSERT_TRUE(m->appendSlots(a, 17 + 2).ok());
  EXPECT_EQ(ids(a.windowTables[0]), (std::vector<int32_t>{-1, 1, 2, 3, 4}));
  ASSERT_TRUE(m->deallocate(a).ok());
}

TEST(WindowClass, RefusalsChangeNothing) {
  auto m = hybrid(sliding(8), 8, 4);
  Request a = prompt(1, iota(20));
  ASSERT_TRUE(m->allocate(a, 0).ok());
  // A forward past the reserve is refused, naming the cap.
  Status s = TestAccess::prepareWindows(*m, a, 20);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cap it at 16"), std::string::npos) << s.error().message;
  EXPECT_TRUE(a.windowTables[0].empty());
  EXPECT_EQ(TestAccess::windowPool(*m, 0).numFree(), 8);
  EXPECT_EQ(TestAccess::windowForwardLimit(*m, a, 20), 16);
  Request stranger = prompt(9, iota(4));
  EXPECT_FALSE(TestAccess::prepareWindows(*m, stranger, 4).ok());
  EXPECT_FALSE(TestAccess::prepareWindows(*m, a, -1).ok());
  // A hit the window index cannot back is refused by allocate, and the
  // full-class blocks it claimed go back.
  ASSERT_EQ(forward(*m, a, 16), 16);
  ASSERT_EQ(forward(*m, a, 4), 4);
  ASSERT_TRUE(m->deallocate(a).ok());
  // Another prompt fills the window pool: 3 vacant blocks, then the
  // coldest cached one, window block 1 of a's prompt, is evicted.
  Request other = prompt(2, iota(16, 700));
  ASSERT_TRUE(m->allocate(other, m->canAllocate(other)).ok());
  ASSERT_EQ(forward(*m, other, 16), 16);
  EXPECT_EQ(ids(other.windowTables[0]), (std::vector<int32_t>{5, 6, 7, 1}));
  ASSERT_TRUE(m->deallocate(other).ok());
  Request c = prompt(3, cat(iota(12), iota(8, 900)));
  int64_t freeBefore = m->blocks().numFree();
  int64_t hit = m->canAllocate(c);
  EXPECT_EQ(hit, 1); // 3 needs window blocks 1, 2; 2 needs 0, 1; 1 needs 0
  Status bad = m->allocate(c, 3); // the full class has 3, the window not
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(c.allocated);
  EXPECT_TRUE(c.blockTable.empty());
  EXPECT_TRUE(c.windowTables.empty());
  EXPECT_EQ(m->blocks().numFree(), freeBefore);
  EXPECT_TRUE(m->blocks().checkInvariants().ok());
  EXPECT_TRUE(TestAccess::windowPool(*m, 0).checkInvariants().ok());
  EXPECT_TRUE(m->allocate(c, hit).ok());
  EXPECT_TRUE(m->deallocate(c).ok());
  EXPECT_EQ(TestAccess::windowPool(*m, 0).numFree(), 8);
}

TEST(WindowClass, ConfigurationsTheRuntimeCannotRunAreRefused) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 64;
  c.windowClasses.push_back({"local", sliding(8), 8, 3}); // reserve == ring
  EXPECT_FALSE(CacheManager::create(c).ok());
  c.windowClasses[0].reserveBlocks = 4;
  EXPECT_TRUE(CacheManager::create(c).ok());
  c.windowClasses[0].numBlocks = 3; // cannot back one reserve
  EXPECT_FALSE(CacheManager::create(c).ok());
  c.windowClasses[0].numBlocks = 8;
  c.windowClasses[0].pattern = AttentionPattern{}; // full is not a window
  EXPECT_FALSE(CacheManager::create(c).ok());
  c.windowClasses[0].pattern = sliding(8);
  c.numGroups = 4; // with state: not supported, said so
  auto r = CacheManager::create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("stateless"), std::string::npos);
}

TEST(WindowClass, RandomWalkKeepsTablesWindowsAndPoolsConsistent) {
  // Random prompts over a few shared prefixes, run as the engine runs them
  // (admit, chunked prefill, decode, finish), under both patterns and both
  // pool arrangements. After every step: each running request's window
  // table holds exactly blocks [keptFrom(computed), covered), never more
  // than its reserve, every held window block stores the request's tokens
  // once published, and both pools keep their invariants.
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    AttentionPattern p = variant % 2 ? chunked(12) : sliding(10);
    bool shared = variant >= 2;
    int64_t reserve = p.reserveBlocks(1, 8, 4);
    auto m = hybrid(p, shared ? 0 : reserve * 3, reserve, shared ? 96 : 64, 1);
    std::mt19937_64 rng(1234 + uint64_t(variant));
    std::vector<std::vector<int64_t>> prefixes;
    for (int i = 0; i < 3; ++i)
      prefixes.push_back(iota(int64_t(8 + rng() % 40), 1000 * (i + 1)));
    std::vector<std::unique_ptr<Request>> running;
    int64_t nextId = 0, admitted = 0, hits = 0;
    for (int step = 0; step < 4000; ++step) {
      if (running.size() < 4 && rng() % 3 == 0) {
        auto r = std::make_unique<Request>(prompt(
            nextId++, cat(prefixes[rng() % 3], iota(int64_t(1 + rng() % 20), int64_t(rng() % 50)))));
        int64_t hit = m->canAllocate(*r);
        if (hit >= 0) {
          ASSERT_TRUE(m->allocate(*r, hit).ok());
          ++admitted;
          hits += hit > 0;
          running.push_back(std::move(r));
        }
      }
      if (running.empty())
        continue;
      size_t k = rng() % running.size();
      Request &r = *running[k];
      if (r.numCachedTokens < r.numPromptTokens) {
        forward(*m, r, std::min<int64_t>(r.numPromptTokens - r.numCachedTokens,
                                         int64_t(1 + rng() % 16)));
      } else if (r.numTokens() < r.numPromptTokens + 12 && m->canAppend(r, r.numTokens() + 2)) {
        // Decode one token with one draft (margin 1).
        ASSERT_TRUE(m->appendSlots(r, r.numTokens() + 2).ok());
        int64_t committed = r.numTokens();
        r.tokens.push_back(int64_t(rng() % 50));
        ASSERT_TRUE(m->hashDecodeBlocks(r, committed).ok());
        ASSERT_TRUE(r.setNumCachedTokens(committed).ok());
      } else {
        ASSERT_TRUE(m->deallocate(r).ok());
        running.erase(running.begin() + long(k));
      }
      for (auto &q : running) {
        const std::vector<BlockId> &t = q->windowTables[0];
        // What the next query reads (margin 0): a hit claims only that.
        int64_t from = p.keptFrom(q->numCachedTokens, 0, 4);
        int64_t held = 0;
        for (int64_t j = 0; j < int64_t(t.size()); ++j) {
          bool inWindow = j >= from;
          // Released blocks: only those below the window (a table entry
          // in the window is null only before the request's first forward
          // past its hit, which prepared it).
          if (!inWindow) {
            // may be held until the next forward releases it
          } else {
            ASSERT_TRUE(t[size_t(j)].valid()) << "block " << j << " of request " << q->id;
          }
          if (!t[size_t(j)].valid())
            continue;
          ++held;
          BlockPool &wp = TestAccess::windowPool(*m, 0);
          if (wp.hash(t[size_t(j)]) != kNoHash) {
            const std::vector<int32_t> &stored = wp.tokenIds(t[size_t(j)]);
            ASSERT_EQ(stored.size(), 4u);
            for (int64_t i = 0; i < 4; ++i)
              ASSERT_EQ(stored[size_t(i)], q->tokens[size_t(j * 4 + i)]);
          }
        }
        ASSERT_LE(held, reserve);
      }
      ASSERT_TRUE(m->blocks().checkInvariants().ok());
      ASSERT_TRUE(TestAccess::windowPool(*m, 0).checkInvariants().ok());
    }
    for (auto &q : running)
      ASSERT_TRUE(m->deallocate(*q).ok());
    EXPECT_EQ(TestAccess::windowPool(*m, 0).numUsed(), 0);
    EXPECT_EQ(m->blocks().numUsed(), 0);
    EXPECT_GT(admitted, 100);
    EXPECT_GT(hits, 20); // the shared prefixes hit
  }
}
