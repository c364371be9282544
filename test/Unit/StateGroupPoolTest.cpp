//===- StateGroupPoolTest.cpp - State groups, fork checkpoints, transfers -===//
//
// The property tests run long random operation sequences against a plain
// model written straight from spec semantics.md §7 (sets, a min-heap with
// stale entries, a deque with linear removal, as the reference keeps them),
// with this project's deviations (Q1, Q2, a live top's hash following its
// bytes) as explicit preconditions, and compare every return value and the
// whole observable state after every step.
//
//===----------------------------------------------------------------------===//

#include "poolrt/StateGroupPool.h"
#include "poolrt/StateTransfer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <type_traits>
#include "test/Unit/TestKinds.h"

using namespace poolrt;

namespace {

GroupId G(int32_t g) { return GroupId(g); }

StateTransfer forkOf(int64_t n) { return StateTransfer::fork(n).value(); }

StateGroupPool makePool(int64_t n, StateTransfer t = StateTransfer::none(),
                        int64_t hbs = 1, bool enabled = true) {
  auto p = StateGroupPool::create(n, std::move(t), hbs, enabled);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.take();
}

void drain(StateGroupPool &pool) {
  while (pool.hasFree())
    ASSERT_TRUE(pool.pop().ok());
}

//===----------------------------------------------------------------------===//
// The reference model.
//===----------------------------------------------------------------------===//

enum class Outcome { Ok, Invalid, Internal };

Outcome outcomeOf(const Status &s) {
  if (s.ok())
    return Outcome::Ok;
  return s.error().kind == ErrorKind::InvalidArgument ? Outcome::Invalid
         : s.error().kind == ErrorKind::Internal      ? Outcome::Internal
                                                      : Outcome(-1);
}

struct Retirement {
  int retired, relocatedTo;
  bool held;
};

struct Model {
  int numGroups = 0;
  bool enabled = true;
  bool forks = false, isNone = true;
  int64_t minFork = 0, hbs = 1;

  std::set<int> free;
  std::priority_queue<int, std::vector<int>, std::greater<int>> vacant;
  std::deque<int> checkpointed;
  std::map<uint64_t, int> hashToGroup;
  std::vector<int64_t> groupHash; // -1 = none (test hashes are small)
  std::map<int, int> pinned;
  std::set<int> deferred;
  int64_t kept = 0, dropped = 0, evicted = 0, orphaned = 0;

  Model(int n, const StateTransfer &t, int64_t hbs_, bool en) {
    numGroups = n;
    enabled = en && n > 0;
    forks = t.forks();
    isNone = t.kind() == TransferKind::None;
    minFork = t.forkTokens();
    hbs = hbs_;
    groupHash.assign(size_t(n), -1);
    for (int g = 0; g < n; ++g) {
      free.insert(g);
      vacant.push(g);
    }
  }

  bool inPool(int g) const { return g >= 0 && g < numGroups; }
  bool isFree(int g) const { return free.count(g) > 0; }
  bool isPinned(int g) const { return pinned.count(g) > 0; }

  int popVacant() {
    while (!vacant.empty()) {
      int g = vacant.top();
      vacant.pop();
      if (free.count(g) && groupHash[size_t(g)] == -1) {
        free.erase(g);
        return g;
      }
    }
    return -1;
  }
  void rawClaim(int g) {
    free.erase(g);
    if (groupHash[size_t(g)] != -1)
      checkpointed.erase(
          std::find(checkpointed.begin(), checkpointed.end(), g));
  }
  void rawRelease(int g) {
    free.insert(g);
    if (groupHash[size_t(g)] != -1) {
      checkpointed.push_back(g);
      return;
    }
    vacant.push(g);
    if (vacant.size() > size_t(2 * numGroups + 2)) {
      std::vector<int> v;
      for (int f : free)
        if (groupHash[size_t(f)] == -1)
          v.push_back(f);
      vacant = decltype(vacant)(std::greater<int>(), std::move(v));
    }
  }
  void setHash(int g, int64_t h) {
    if (!isFree(g)) {
      groupHash[size_t(g)] = h;
      return;
    }
    rawClaim(g);
    groupHash[size_t(g)] = h;
    rawRelease(g);
  }
  void rawInvalidate(int g) {
    if (!enabled)
      return;
    int64_t h = groupHash[size_t(g)];
    if (h == -1)
      return;
    setHash(g, -1);
    auto it = hashToGroup.find(uint64_t(h));
    if (it != hashToGroup.end() && it->second == g)
      hashToGroup.erase(it);
  }

  std::pair<Outcome, int> pop() {
    if (free.empty())
      return {Outcome::Internal, -1};
    int g = popVacant();
    if (g < 0) {
      g = checkpointed.front();
      checkpointed.pop_front();
      free.erase(g);
      ++evicted;
    }
    rawInvalidate(g);
    return {Outcome::Ok, g};
  }
  Outcome claim(int g) {
    if (!inPool(g))
      return Outcome::Invalid;
    if (!isFree(g))
      return Outcome::Internal;
    rawClaim(g);
    return Outcome::Ok;
  }
  Outcome release(int g) {
    if (!inPool(g))
      return Outcome::Invalid;
    if (isFree(g) || isPinned(g))
      return Outcome::Internal;
    rawRelease(g);
    return Outcome::Ok;
  }
  Outcome index(uint64_t h, int g) {
    if (!inPool(g))
      return Outcome::Invalid;
    if (!enabled)
      return Outcome::Ok;
    rawInvalidate(g);
    auto it = hashToGroup.find(h);
    int prev = it == hashToGroup.end() ? -1 : it->second;
    hashToGroup[h] = g;
    setHash(g, int64_t(h));
    if (prev != -1 && prev != g)
      setHash(prev, -1);
    return Outcome::Ok;
  }
  Outcome invalidate(int g) {
    if (!inPool(g))
      return Outcome::Invalid;
    rawInvalidate(g);
    return Outcome::Ok;
  }
  int unindex(uint64_t h) {
    auto it = hashToGroup.find(h);
    if (it == hashToGroup.end())
      return -1;
    int g = it->second;
    rawInvalidate(g);
    ++orphaned;
    return g;
  }
  void clearIndex() {
    std::vector<int> gs;
    for (auto &kv : hashToGroup)
      gs.push_back(kv.second);
    for (int g : gs)
      rawInvalidate(g);
  }
  int lookup(uint64_t h) const {
    if (!enabled)
      return -1;
    auto it = hashToGroup.find(h);
    return it == hashToGroup.end() ? -1 : it->second;
  }
  Outcome pin(int g, bool next) {
    if (!inPool(g))
      return Outcome::Invalid;
    if (isFree(g))
      return Outcome::Internal;
    ++pinned[g];
    if (next)
      deferred.insert(g);
    return Outcome::Ok;
  }
  void rawUnpin(int g) {
    int c = pinned.count(g) ? pinned[g] : 0;
    if (c <= 1) {
      pinned.erase(g);
      deferred.erase(g);
    } else {
      pinned[g] = c - 1;
    }
  }
  Outcome unpin(int g) {
    if (!inPool(g))
      return Outcome::Invalid;
    if (!isPinned(g))
      return Outcome::Internal;
    rawUnpin(g);
    return Outcome::Ok;
  }
  Outcome dropReader(int g) {
    if (g == -1)
      return Outcome::Ok;
    if (g < 0 || g >= int(groupHash.size()))
      return Outcome::Invalid;
    if (!isPinned(g))
      return Outcome::Ok;
    rawUnpin(g);
    if (!isPinned(g))
      rawRelease(g);
    return Outcome::Ok;
  }
  void releasePins() {
    if (pinned.empty())
      return;
    std::set<int> held;
    held.swap(deferred);
    for (auto it = pinned.begin(); it != pinned.end();) {
      if (held.count(it->first)) {
        ++it;
        continue;
      }
      rawRelease(it->first);
      it = pinned.erase(it);
    }
  }
  Outcome extend(int64_t n) {
    if (n < 0)
      return Outcome::Invalid;
    for (int g = numGroups; g < numGroups + int(n); ++g) {
      if (g < int(groupHash.size()))
        groupHash[size_t(g)] = -1;
      else
        groupHash.push_back(-1);
      rawRelease(g);
    }
    numGroups += int(n);
    return Outcome::Ok;
  }
  int relocationTarget(int exclude) {
    int g = popVacant();
    if (g >= 0)
      return g;
    for (int c : checkpointed)
      if (c != exclude) {
        rawClaim(c);
        rawInvalidate(c);
        return c;
      }
    return -1;
  }
  std::optional<Retirement> retireTop() {
    int top = numGroups - 1;
    if (top < 0 || isPinned(top))
      return std::nullopt;
    bool held = isFree(top) && groupHash[size_t(top)] != -1;
    if (isFree(top) && !held) {
      rawClaim(top);
      --numGroups;
      return Retirement{top, -1, false};
    }
    int dst = relocationTarget(top);
    if (dst < 0 && !held)
      return std::nullopt;
    if (dst < 0) {
      rawClaim(top);
      rawInvalidate(top);
    } else if (held) {
      int64_t h = groupHash[size_t(top)];
      *std::find(checkpointed.begin(), checkpointed.end(), top) = dst;
      free.erase(top);
      free.insert(dst);
      groupHash[size_t(top)] = -1;
      groupHash[size_t(dst)] = h;
      hashToGroup[uint64_t(h)] = dst;
    } else if (groupHash[size_t(top)] != -1) {
      // Deviation: a live top's hash follows its bytes to dst.
      int64_t h = groupHash[size_t(top)];
      groupHash[size_t(top)] = -1;
      groupHash[size_t(dst)] = h;
      hashToGroup[uint64_t(h)] = dst;
    }
    --numGroups;
    return Retirement{top, dst, held};
  }
  int64_t resumableHit(bool hasState, int64_t numTokens, int64_t hit,
                       const std::vector<BlockHash> &hashes, bool assume) {
    if (!(enabled && hasState))
      return hit;
    if (isNone)
      assume = false; // Q1
    for (int64_t i = hit - 1; i >= 0; --i) {
      bool ck = hashToGroup.count(hashes[size_t(i)]) > 0;
      if (!assume && !ck)
        continue;
      if (numTokens - (i + 1) * hbs >= minFork)
        return i + 1;
    }
    return 0;
  }
  Outcome checkpoint(StateHolder &seq, uint64_t h) {
    if (!(enabled && seq.hasPerReqCache) || !forks)
      return Outcome::Ok;
    int old = seq.group.value;
    if (old < 0)
      return Outcome::Ok;
    if (!inPool(old))
      return Outcome::Invalid;
    if (isFree(old))
      return Outcome::Internal;
    if (free.empty()) {
      ++dropped;
      return Outcome::Ok;
    }
    seq.group = GroupId(pop().second);
    seq.forkSource = GroupId(old);
    index(h, old);
    pin(old, true);
    ++kept;
    return Outcome::Ok;
  }
};

// Everything observable, compared between pool and model.
void expectSameState(const StateGroupPool &pool, const Model &m,
                     const std::string &where) {
  ASSERT_EQ(pool.numGroups(), m.numGroups) << where;
  ASSERT_EQ(pool.numFree(), int(m.free.size())) << where;
  ASSERT_EQ(pool.slotCount(), int(m.groupHash.size())) << where;
  for (int g = -2; g < pool.slotCount() + 2; ++g) {
    ASSERT_EQ(pool.isFree(G(g)), m.free.count(g) > 0) << where << " g=" << g;
    bool holds = m.free.count(g) && m.groupHash[size_t(g)] != -1;
    ASSERT_EQ(pool.holdsCheckpoint(G(g)), holds) << where << " g=" << g;
    int pins = m.pinned.count(g) ? m.pinned.at(g) : 0;
    ASSERT_EQ(pool.pinCount(G(g)), pins) << where << " g=" << g;
    if (g >= 0 && g < pool.slotCount()) {
      int64_t h = m.groupHash[size_t(g)];
      auto got = pool.groupHash(G(g));
      ASSERT_EQ(got.has_value(), h != -1) << where << " g=" << g;
      if (got) {
        ASSERT_EQ(*got, uint64_t(h)) << where << " g=" << g;
      }
    }
  }
  auto entries = pool.indexEntries();
  ASSERT_EQ(entries.size(), m.hashToGroup.size()) << where;
  size_t i = 0;
  for (const auto &[h, g] : m.hashToGroup) {
    ASSERT_EQ(entries[i].first, h) << where;
    ASSERT_EQ(entries[i].second.value, g) << where;
    ++i;
  }
  auto lru = pool.checkpointLru();
  ASSERT_EQ(lru.size(), m.checkpointed.size()) << where;
  for (size_t k = 0; k < lru.size(); ++k)
    ASSERT_EQ(lru[k].value, m.checkpointed[k]) << where << " lru[" << k << "]";
  CheckpointFates f = pool.fates();
  ASSERT_EQ(f.kept, m.kept) << where;
  ASSERT_EQ(f.dropped, m.dropped) << where;
  ASSERT_EQ(f.evicted, m.evicted) << where;
  ASSERT_EQ(f.orphaned, m.orphaned) << where;
  std::string why;
  ASSERT_TRUE(pool.invariantsHold(&why)) << where << ": " << why;
}

struct Config {
  uint32_t seed;
  int initialGroups;
  StateTransfer transfer;
  int64_t hbs;
  bool enabled;
};

void runRandom(const Config &c, int steps) {
  std::mt19937_64 rng(c.seed);
  auto below = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
  auto chance = [&](int pct) { return below(100) < pct; };

  StateGroupPool pool = makePool(c.initialGroups, c.transfer, c.hbs, c.enabled);
  Model m(c.initialGroups, c.transfer, c.hbs, c.enabled);
  ASSERT_NO_FATAL_FAILURE(expectSameState(pool, m, "start"));

  // Pins drain within two passes: the pass of each group's latest pin.
  int64_t pass = 0;
  std::map<int, int64_t> lastPinPass;
  std::map<Outcome, int64_t> outcomes;
  // retireTop: refused, vacant top, live moved, checkpoint re-homed, spent.
  int64_t retired[5] = {0, 0, 0, 0, 0};

  auto randomHash = [&] { return uint64_t(below(24)); };
  // Mostly sensible ids, sometimes any id at all (error paths).
  auto pickFrom = [&](const std::vector<int> &pool_) -> int {
    if (!pool_.empty() && chance(85))
      return pool_[size_t(below(int64_t(pool_.size())))];
    int64_t top = int64_t(m.groupHash.size()) + 3;
    return int(below(top + 3)) - 2; // [-2, slots+3)
  };
  auto heldGroups = [&] {
    std::vector<int> v;
    for (int g = 0; g < m.numGroups; ++g)
      if (!m.free.count(g))
        v.push_back(g);
    return v;
  };
  auto freeGroups = [&] {
    return std::vector<int>(m.free.begin(), m.free.end());
  };
  auto unpinnedHeld = [&] {
    std::vector<int> v;
    for (int g : heldGroups())
      if (!m.pinned.count(g))
        v.push_back(g);
    return v;
  };
  auto pinnedGroups = [&] {
    std::vector<int> v;
    for (auto &kv : m.pinned)
      v.push_back(kv.first);
    return v;
  };
  auto expectOutcome = [&](const Status &s, Outcome want, const char *op) {
    ++outcomes[want];
    EXPECT_EQ(outcomeOf(s), want)
        << op << ": " << (s.ok() ? std::string("ok") : s.error().message);
  };

  for (int step = 0; step < steps; ++step) {
    std::string where =
        "seed " + std::to_string(c.seed) + " step " + std::to_string(step);
    int op = int(below(100));
    if (op < 14) { // pop
      auto got = pool.pop();
      auto want = m.pop();
      ASSERT_EQ(outcomeOf(got.ok() ? Status() : Status(got.error())),
                want.first)
          << where;
      if (got.ok()) {
        ASSERT_EQ(got->value, want.second) << where << " pop";
      }
    } else if (op < 22) { // claim
      int g = pickFrom(freeGroups());
      expectOutcome(pool.claim(G(g)), m.claim(g), "claim");
    } else if (op < 36) { // release
      int g = pickFrom(chance(80) ? unpinnedHeld() : freeGroups());
      expectOutcome(pool.release(G(g)), m.release(g), "release");
    } else if (op < 48) { // index
      int g = pickFrom(chance(50) ? freeGroups() : heldGroups());
      uint64_t h = randomHash();
      expectOutcome(pool.index(h, G(g)), m.index(h, g), "index");
    } else if (op < 52) { // invalidate
      int g = pickFrom(freeGroups());
      expectOutcome(pool.invalidate(G(g)), m.invalidate(g), "invalidate");
    } else if (op < 56) { // unindex
      uint64_t h = randomHash();
      ASSERT_EQ(pool.unindex(h).value, m.unindex(h)) << where;
    } else if (op < 57) { // clear_index
      pool.clearIndex();
      m.clearIndex();
    } else if (op < 64) { // pin
      int g = pickFrom(heldGroups());
      bool next = chance(50);
      Outcome want = m.pin(g, next);
      expectOutcome(pool.pin(G(g), next), want, "pin");
      if (want == Outcome::Ok)
        lastPinPass[g] = pass;
    } else if (op < 66) { // unpin
      int g = pickFrom(pinnedGroups());
      expectOutcome(pool.unpin(G(g)), m.unpin(g), "unpin");
    } else if (op < 70) { // drop_reader
      int g = chance(10) ? -1 : pickFrom(pinnedGroups());
      expectOutcome(pool.dropReader(G(g)), m.dropReader(g), "dropReader");
    } else if (op < 77) { // release_pins
      pool.releasePins();
      m.releasePins();
      ++pass;
    } else if (op < 80) { // extend (keep the pool small and busy)
      int64_t n = chance(5) ? -1 - below(3) : below(m.numGroups < 48 ? 4 : 1);
      expectOutcome(pool.extend(n), m.extend(n), "extend");
    } else if (op < 85) { // retire_top
      auto got = pool.retireTop();
      auto want = m.retireTop();
      ASSERT_EQ(got.has_value(), want.has_value()) << where << " retire";
      ++retired[!got                                                ? 0
                : !got->relocatedTo.valid() && !got->heldCheckpoint ? 1
                : !got->heldCheckpoint                              ? 2
                : got->relocatedTo.valid()                          ? 3
                                                                    : 4];
      if (got) {
        ASSERT_EQ(got->retired.value, want->retired) << where;
        ASSERT_EQ(got->relocatedTo.value, want->relocatedTo) << where;
        ASSERT_EQ(got->heldCheckpoint, want->held) << where;
      }
    } else if (op < 92) { // resumable_hit
      std::vector<BlockHash> hashes;
      int64_t n = below(8);
      for (int64_t k = 0; k < n; ++k)
        hashes.push_back(randomHash());
      StateHolder seq;
      seq.hasPerReqCache = chance(90);
      seq.numTokens = below(12);
      int64_t hit = below(n + 1);
      bool assume = chance(30);
      auto got = pool.resumableHit(seq, hit, hashes, assume);
      ASSERT_TRUE(got.ok()) << got.error().message;
      ASSERT_EQ(*got, m.resumableHit(seq.hasPerReqCache, seq.numTokens, hit,
                                     hashes, assume))
          << where << " resumable_hit";
    } else if (op < 97) { // checkpoint
      StateHolder a, b;
      a.hasPerReqCache = b.hasPerReqCache = chance(90);
      a.group = b.group = G(chance(10) ? -1 : pickFrom(unpinnedHeld()));
      uint64_t h = randomHash();
      Outcome want = m.checkpoint(b, h);
      expectOutcome(pool.checkpoint(a, 0, h), want, "checkpoint");
      ASSERT_EQ(a.group, b.group) << where;
      ASSERT_EQ(a.forkSource, b.forkSource) << where;
      if (want == Outcome::Ok && a.forkSource.valid())
        lastPinPass[a.forkSource.value] = pass;
    } else { // lookup
      uint64_t h = randomHash();
      ASSERT_EQ(pool.lookupGroup(h).value, m.lookup(h)) << where;
    }
    ASSERT_FALSE(testing::Test::HasFailure()) << where;
    ASSERT_NO_FATAL_FAILURE(expectSameState(pool, m, where));
    for (const auto &[g, p] : lastPinPass) {
      if (pass - p >= 2) {
        ASSERT_FALSE(pool.isPinned(G(g)))
            << where << ": group " << g << " pinned at pass " << p
            << " still pinned at pass " << pass;
      }
    }
  }
  std::printf("seed %u: %d steps, %lld ok / %lld misuse / %lld bad id; "
              "retire refused %lld, vacant %lld, live moved %lld, "
              "checkpoint re-homed %lld, spent %lld; fates kept %lld "
              "dropped %lld evicted %lld orphaned %lld\n",
              c.seed, steps, (long long)outcomes[Outcome::Ok],
              (long long)outcomes[Outcome::Internal],
              (long long)outcomes[Outcome::Invalid], (long long)retired[0],
              (long long)retired[1], (long long)retired[2],
              (long long)retired[3], (long long)retired[4], (long long)m.kept,
              (long long)m.dropped, (long long)m.evicted,
              (long long)m.orphaned);
  // The sequences reach every outcome, so the error paths ran too.
  EXPECT_GT(outcomes[Outcome::Ok], steps / 4);
  EXPECT_GT(outcomes[Outcome::Internal], 0);
  EXPECT_GT(outcomes[Outcome::Invalid], 0);
}

constexpr int kSteps = 200000;

TEST(StateGroupPoolProperty, ForkPoolsAgainstTheModel) {
  runRandom({1, 8, forkOf(1), 1, true}, kSteps);
  runRandom({2, 16, forkOf(4), 2, true}, kSteps);
  runRandom({3, 1, forkOf(2), 1, true}, kSteps);
  runRandom({4, 70, forkOf(3), 3, true}, kSteps); // more than one bitmap word
}

TEST(StateGroupPoolProperty, NoneAndDisabledPoolsAgainstTheModel) {
  runRandom({5, 12, StateTransfer::none(), 1, true}, kSteps);
  runRandom({6, 12, forkOf(1), 1, /*enabled=*/false}, kSteps);
  runRandom({7, 0, forkOf(1), 2, true}, kSteps); // starts disabled (empty)
}

//===----------------------------------------------------------------------===//
// Scenarios.
//===----------------------------------------------------------------------===//

TEST(StateGroupPool, HandOutOrder) {
  StateGroupPool pool = makePool(4);
  drain(pool);
  ASSERT_TRUE(pool.release(G(3)).ok());
  ASSERT_TRUE(pool.release(G(0)).ok());
  ASSERT_TRUE(pool.index(7, G(0)).ok()); // checkpoint: spent last
  ASSERT_TRUE(pool.release(G(1)).ok());
  EXPECT_EQ(pool.pop().value(), G(1));
  EXPECT_EQ(pool.pop().value(), G(3));
  EXPECT_EQ(pool.fates().evicted, 0);
  EXPECT_EQ(pool.pop().value(), G(0));
  EXPECT_EQ(pool.fates().evicted, 1);
  EXPECT_EQ(pool.lookupGroup(7), kNoGroup);
}

TEST(StateGroupPool, ClaimOfACheckpointKeepsItsHashAndReleaseRefreshesIt) {
  StateGroupPool pool = makePool(3);
  ASSERT_TRUE(pool.index(10, G(0)).ok());
  ASSERT_TRUE(pool.index(11, G(1)).ok());
  ASSERT_TRUE(pool.index(12, G(2)).ok());
  ASSERT_TRUE(pool.claim(G(1)).ok()); // the middle of the list, in O(1)
  EXPECT_EQ(pool.lookupGroup(11), G(1));
  EXPECT_FALSE(pool.holdsCheckpoint(G(1)));
  ASSERT_TRUE(pool.release(G(1)).ok());
  std::vector<GroupId> lru = pool.checkpointLru();
  EXPECT_EQ(lru, (std::vector<GroupId>{G(0), G(2), G(1)}));
}

TEST(StateGroupPool, CheckpointForksAndPinsDeferred) {
  StateGroupPool pool = makePool(4, forkOf(2), /*hbs=*/2);
  StateHolder seq;
  seq.numTokens = 10;
  seq.group = pool.pop().value(); // 0
  ASSERT_TRUE(pool.checkpoint(seq, 3, 99).ok());
  EXPECT_EQ(seq.group, G(1));
  EXPECT_EQ(seq.forkSource, G(0));
  EXPECT_EQ(pool.lookupGroup(99), G(0));
  EXPECT_TRUE(pool.isPinned(G(0)));
  EXPECT_EQ(pool.fates().kept, 1);
  pool.releasePins(); // the reader is the next batch: still held
  EXPECT_TRUE(pool.isPinned(G(0)));
  EXPECT_FALSE(pool.isFree(G(0)));
  pool.releasePins();
  EXPECT_FALSE(pool.isPinned(G(0)));
  EXPECT_TRUE(pool.holdsCheckpoint(G(0)));
  // The hit it makes resumable: 4 blocks of 2 tokens, room 2.
  std::vector<BlockHash> hashes{1, 2, 99, 4};
  EXPECT_EQ(pool.resumableHit(seq, 4, hashes).value(), 3);
  seq.numTokens = 7; // 7 - 6 < 2: walks back past it
  EXPECT_EQ(pool.resumableHit(seq, 4, hashes).value(), 0);
  // The counterfactual ignores the index but keeps the room test.
  EXPECT_EQ(pool.resumableHit(seq, 4, hashes, true).value(), 2);
}

TEST(StateGroupPool, CheckpointWithoutAFreeGroupIsDropped) {
  StateGroupPool pool = makePool(1, forkOf(1));
  StateHolder seq;
  seq.group = pool.pop().value();
  ASSERT_TRUE(pool.checkpoint(seq, 1, 5).ok());
  EXPECT_EQ(seq.group, G(0));
  EXPECT_EQ(seq.forkSource, kNoGroup);
  EXPECT_EQ(pool.fates().dropped, 1);
  EXPECT_EQ(pool.lookupGroup(5), kNoGroup);
}

TEST(StateGroupPool, NoneTransferNeverCheckpointsAndQ1) {
  StateGroupPool pool = makePool(4);
  StateHolder seq;
  seq.numTokens = 100;
  seq.group = pool.pop().value();
  ASSERT_TRUE(pool.checkpoint(seq, 1, 5).ok());
  EXPECT_EQ(seq.group, G(0));
  EXPECT_EQ(pool.fates().kept, 0);
  // Q1: under none() the counterfactual is the real gate (nothing filed,
  // nothing could be), not "every boundary qualifies".
  std::vector<BlockHash> hashes{1, 2, 3};
  EXPECT_EQ(pool.resumableHit(seq, 3, hashes, true).value(), 0);
  EXPECT_TRUE(std::isinf(pool.successorRoom()));
  // A fork pool answers the counterfactual densely.
  StateGroupPool fork = makePool(4, forkOf(1));
  EXPECT_EQ(fork.resumableHit(seq, 3, hashes, true).value(), 3);
}

TEST(StateGroupPool, DropReaderFreesOnTheLastReader) {
  StateGroupPool pool = makePool(3);
  GroupId src = pool.pop().value();
  ASSERT_TRUE(pool.pin(src).ok());
  ASSERT_TRUE(pool.pin(src).ok());
  EXPECT_EQ(pool.pinCount(src), 2);
  ASSERT_TRUE(pool.dropReader(src).ok());
  EXPECT_FALSE(pool.isFree(src));
  ASSERT_TRUE(pool.dropReader(src).ok());
  EXPECT_TRUE(pool.isFree(src));
  ASSERT_TRUE(pool.dropReader(src).ok()); // stale reader: no-op
  ASSERT_TRUE(pool.dropReader(kNoGroup).ok());
  // A reader of a group retired since is a no-op too.
  StateGroupPool small = makePool(2);
  ASSERT_TRUE(small.retireTop().has_value());
  EXPECT_TRUE(small.dropReader(G(1)).ok());
  EXPECT_EQ(small.dropReader(G(2)).error().kind, ErrorKind::InvalidArgument);
}

TEST(StateGroupPool, UnpinKeepsTheGroupHeld) {
  StateGroupPool pool = makePool(2);
  GroupId g = pool.pop().value();
  ASSERT_TRUE(pool.pin(g, true).ok());
  ASSERT_TRUE(pool.unpin(g).ok());
  EXPECT_FALSE(pool.isPinned(g));
  pool.releasePins();
  pool.releasePins();
  EXPECT_FALSE(pool.isFree(g)); // the caller took it over
  ASSERT_TRUE(pool.release(g).ok());
}

TEST(StateGroupPool, RetireALiveTopCarryingAHashMovesTheEntry) {
  StateGroupPool pool = makePool(3);
  drain(pool);
  ASSERT_TRUE(pool.index(42, G(2)).ok()); // held, filed, not pinned
  ASSERT_TRUE(pool.release(G(0)).ok());
  auto r = pool.retireTop();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->retired, G(2));
  EXPECT_EQ(r->relocatedTo, G(0));
  EXPECT_FALSE(r->heldCheckpoint);
  EXPECT_EQ(pool.lookupGroup(42), G(0));
  EXPECT_FALSE(pool.groupHash(G(2)).has_value());
  std::string why;
  EXPECT_TRUE(pool.invariantsHold(&why)) << why;
}

TEST(StateGroupPool, ExtendPastTheFirstCapacityKeepsEverything) {
  StateGroupPool pool = makePool(2);
  ASSERT_TRUE(pool.index(5, G(1)).ok());
  ASSERT_TRUE(pool.extend(200).ok());
  EXPECT_EQ(pool.numGroups(), 202);
  EXPECT_EQ(pool.lookupGroup(5), G(1));
  EXPECT_EQ(pool.pop().value(), G(0));
  EXPECT_EQ(pool.pop().value(), G(2));
  for (int i = 0; i < 150; ++i)
    ASSERT_TRUE(pool.index(1000 + i, G(10 + i)).ok());
  EXPECT_EQ(pool.numIndexed(), 151u);
  std::string why;
  EXPECT_TRUE(pool.invariantsHold(&why)) << why;
}

TEST(StateGroupPool, Relocations) {
  StateGroupPool pool = makePool(4);
  drain(pool);
  ASSERT_TRUE(pool.release(G(1)).ok());
  auto r = pool.retireTop();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(pool.recordRelocation(r->retired, r->relocatedTo).ok());
  auto ops = pool.takeRelocations();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].src, G(3));
  EXPECT_EQ(ops[0].dst, G(1));
  EXPECT_TRUE(pool.takeRelocations().empty());
  EXPECT_EQ(pool.recordRelocation(G(1), G(1)).error().kind,
            ErrorKind::Internal);
  EXPECT_EQ(pool.recordRelocation(G(4), G(1)).error().kind,
            ErrorKind::InvalidArgument);
  EXPECT_EQ(pool.recordRelocation(G(0), G(-1)).error().kind,
            ErrorKind::InvalidArgument);
}

//===----------------------------------------------------------------------===//
// Error paths: each names the operation and the id, and changes nothing.
//===----------------------------------------------------------------------===//

struct Snapshot {
  int32_t groups, free, slots;
  std::vector<std::pair<BlockHash, GroupId>> index;
  std::vector<GroupId> lru;
  std::vector<int32_t> pins;
  std::vector<int> isFree;
  std::vector<int64_t> hashes;
  int64_t kept, dropped, evicted, orphaned;
  bool operator==(const Snapshot &o) const {
    return groups == o.groups && free == o.free && slots == o.slots &&
           index == o.index && lru == o.lru && pins == o.pins &&
           isFree == o.isFree && hashes == o.hashes && kept == o.kept &&
           dropped == o.dropped && evicted == o.evicted &&
           orphaned == o.orphaned;
  }
};

Snapshot snap(const StateGroupPool &p) {
  Snapshot s{p.numGroups(),
             p.numFree(),
             p.slotCount(),
             p.indexEntries(),
             p.checkpointLru(),
             {},
             {},
             {},
             0,
             0,
             0,
             0};
  for (int g = 0; g < p.slotCount(); ++g) {
    s.pins.push_back(p.pinCount(G(g)));
    s.isFree.push_back(p.isFree(G(g)));
    auto h = p.groupHash(G(g));
    s.hashes.push_back(h ? int64_t(*h) : -1);
  }
  CheckpointFates f = p.fates();
  s.kept = f.kept;
  s.dropped = f.dropped;
  s.evicted = f.evicted;
  s.orphaned = f.orphaned;
  return s;
}

void expectRefused(StateGroupPool &pool, const std::function<Status()> &op,
                   ErrorKind kind, const std::string &mentions) {
  Snapshot before = snap(pool);
  Status s = op();
  ASSERT_FALSE(s.ok()) << mentions;
  EXPECT_EQ(s.error().kind, kind) << s.error().message;
  EXPECT_NE(s.error().message.find(mentions), std::string::npos)
      << s.error().message;
  EXPECT_TRUE(snap(pool) == before) << "pool changed by " << mentions;
  std::string why;
  EXPECT_TRUE(pool.invariantsHold(&why)) << why;
}

TEST(StateGroupPoolErrors, Q2DoubleReleaseOfACheckpointCannotHandItOutTwice) {
  // The reference scenario: release a checkpoint-holding group twice and
  // pop() hands it out twice.
  StateGroupPool pool = makePool(2);
  drain(pool);
  ASSERT_TRUE(pool.index(10, G(0)).ok());
  ASSERT_TRUE(pool.release(G(0)).ok());
  expectRefused(
      pool, [&] { return pool.release(G(0)); }, ErrorKind::Internal,
      "release(group 0): group is already free");
  ASSERT_TRUE(pool.release(G(1)).ok());
  std::set<int32_t> seen;
  while (pool.hasFree())
    EXPECT_TRUE(seen.insert(pool.pop().value().value).second);
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_ERROR_KIND(pool.pop(), Internal);
}

TEST(StateGroupPoolErrors, EveryMisuseIsRefused) {
  StateGroupPool pool = makePool(4, forkOf(1));
  GroupId held = pool.pop().value();   // 0
  GroupId pinned = pool.pop().value(); // 1
  ASSERT_TRUE(pool.pin(pinned).ok());
  ASSERT_TRUE(pool.index(8, G(3)).ok()); // 3: free checkpoint
  const ErrorKind I = ErrorKind::Internal, A = ErrorKind::InvalidArgument;

  expectRefused(
      pool, [&] { return pool.release(G(2)); }, I, "release(group 2)");
  expectRefused(
      pool, [&] { return pool.release(G(3)); }, I, "already free");
  expectRefused(
      pool, [&] { return pool.release(pinned); }, I, "pinned");
  expectRefused(
      pool, [&] { return pool.claim(held); }, I, "claim(group 0)");
  expectRefused(
      pool, [&] { return pool.pin(G(2)); }, I, "pin(group 2)");
  expectRefused(
      pool, [&] { return pool.unpin(held); }, I, "unpin(group 0)");
  for (int32_t bad : {-2, -1, 4, 1000}) {
    std::string id = "(group " + std::to_string(bad) + ")";
    expectRefused(
        pool, [&] { return pool.claim(G(bad)); }, A, "claim" + id);
    expectRefused(
        pool, [&] { return pool.release(G(bad)); }, A, "release" + id);
    expectRefused(
        pool, [&] { return pool.index(1, G(bad)); }, A, "index" + id);
    expectRefused(
        pool, [&] { return pool.invalidate(G(bad)); }, A, "invalidate" + id);
    expectRefused(
        pool, [&] { return pool.pin(G(bad)); }, A, "pin" + id);
    expectRefused(
        pool, [&] { return pool.unpin(G(bad)); }, A, "unpin" + id);
    if (bad != -1)
      expectRefused(
          pool, [&] { return pool.dropReader(G(bad)); }, A, "dropReader" + id);
  }
  expectRefused(
      pool, [&] { return pool.extend(-1); }, A, "extend(-1)");
  expectRefused(
      pool, [&] { return pool.extend(int64_t(1) << 40); }, A, "extend");

  // checkpoint() with a group the request does not hold.
  StateHolder seq;
  seq.group = G(2);
  expectRefused(
      pool, [&] { return pool.checkpoint(seq, 1, 5); }, I,
      "checkpoint(group 2)");
  seq.group = G(9);
  expectRefused(
      pool, [&] { return pool.checkpoint(seq, 1, 5); }, A,
      "checkpoint(group 9)");
  EXPECT_EQ(seq.group, G(9));
  EXPECT_EQ(seq.forkSource, kNoGroup);

  // resumableHit with a hit outside the hashes.
  std::vector<BlockHash> two{1, 2};
  EXPECT_EQ(pool.resumableHit(seq, 3, two).error().kind, A);
  EXPECT_EQ(pool.resumableHit(seq, -1, two).error().kind, A);

  // pop() with nothing free.
  StateGroupPool empty = makePool(0);
  auto none = empty.pop();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, I);
  EXPECT_FALSE(empty.retireTop().has_value());
  EXPECT_FALSE(empty.enabled());
}

TEST(StateGroupPoolErrors, Construction) {
  auto copy = StateGroupPool::create(4, StateTransfer::copy("v4").value());
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(copy.error().message,
            "PAGE-copy checkpoints do not belong to StateGroupPool");
  EXPECT_ERROR_KIND(StateGroupPool::create(-1), InvalidArgument);
  EXPECT_ERROR_KIND(StateGroupPool::create(int64_t(1) << 32), InvalidArgument);
  EXPECT_ERROR_KIND(StateGroupPool::create(4, StateTransfer::none(), 0), InvalidArgument);
  EXPECT_TRUE(StateGroupPool::create(4, forkOf(1), 16, false).ok());
  EXPECT_FALSE(makePool(4, forkOf(1), 1, false).enabled());
}

TEST(StateGroupPoolErrors, DisabledPoolKeepsTheFreeListLive) {
  StateGroupPool pool = makePool(3, forkOf(1), 1, /*enabled=*/false);
  ASSERT_TRUE(pool.index(5, G(0)).ok()); // no-op
  EXPECT_EQ(pool.lookupGroup(5), kNoGroup);
  EXPECT_EQ(pool.numIndexed(), 0u);
  EXPECT_EQ(pool.pop().value(), G(0));
  StateHolder seq;
  seq.group = G(0);
  ASSERT_TRUE(pool.checkpoint(seq, 1, 5).ok()); // does not apply
  EXPECT_EQ(seq.group, G(0));
  std::vector<BlockHash> h{1, 2, 3};
  EXPECT_EQ(pool.resumableHit(seq, 2, h).value(), 2);
}

//===----------------------------------------------------------------------===//
// StateTransfer.
//===----------------------------------------------------------------------===//

template <typename T, typename = void> struct CanFork : std::false_type {};
template <typename T>
struct CanFork<T, std::void_t<decltype(StateTransfer::fork(std::declval<T>()))>>
    : std::true_type {};
static_assert(CanFork<int>::value && CanFork<int64_t>::value, "");
static_assert(!CanFork<bool>::value, "fork(bool) must not compile");

TEST(StateTransfer, RoomsAndKinds) {
  StateTransfer none = StateTransfer::none();
  EXPECT_EQ(none.kind(), TransferKind::None);
  EXPECT_TRUE(std::isinf(none.successorRoom()));
  EXPECT_FALSE(none.forks());
  EXPECT_FALSE(none.copies());
  StateTransfer fork = forkOf(3);
  EXPECT_TRUE(fork.forks());
  EXPECT_EQ(fork.successorRoom(), 3.0);
  EXPECT_EQ(fork.forkTokens(), 3);
  StateTransfer copy = StateTransfer::copy("v4-flash").value();
  EXPECT_TRUE(copy.copies());
  EXPECT_EQ(copy.successorRoom(), 0.0);
  EXPECT_EQ(copy.forkTokens(), 0); // the 0 that used to mean "none"
  EXPECT_EQ(copy.pagedLayoutId().value(), "v4-flash");
  EXPECT_NE(copy, none);
  EXPECT_STREQ(fork.kindName(), "fork");
}

TEST(StateTransfer, Validation) {
  auto msg = [](const Result<StateTransfer> &r) {
    EXPECT_FALSE(r.ok());
    if (r.ok())
      return std::string();
    EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
    return r.error().message;
  };
  EXPECT_EQ(msg(StateTransfer::fork(0)),
            "fork transfer requires positive fork_tokens");
  EXPECT_EQ(msg(StateTransfer::fork(int64_t(-3))),
            "fork transfer requires positive fork_tokens");
  EXPECT_EQ(msg(StateTransfer::copy("")),
            "copy transfer requires a non-empty PAGE layout id");
  EXPECT_EQ(msg(StateTransfer::make("copy", 2, std::string("x"))),
            "copy transfer cannot bind successor tokens");
  EXPECT_EQ(msg(StateTransfer::make("copy", 0, std::nullopt)),
            "copy transfer requires a non-empty PAGE layout id");
  EXPECT_EQ(msg(StateTransfer::make("fork", 1, std::string("x"))),
            "fork transfer cannot declare a PAGE layout");
  EXPECT_EQ(msg(StateTransfer::make("none", 1, std::nullopt)),
            "none transfer cannot carry tokens or a PAGE layout");
  EXPECT_EQ(msg(StateTransfer::make("none", 0, std::string("x"))),
            "none transfer cannot carry tokens or a PAGE layout");
  EXPECT_EQ(msg(StateTransfer::make("bogus", 0, std::nullopt)),
            "unknown state transfer kind 'bogus'");
  EXPECT_EQ(msg(StateTransfer::make("Fork", 1, std::nullopt)),
            "unknown state transfer kind 'Fork'");
  EXPECT_TRUE(StateTransfer::make("none", 0, std::nullopt).ok());
}

TEST(StateTransfer, WireRoundTrip) {
  std::vector<StateTransfer> all = {
      StateTransfer::none(), forkOf(1), forkOf(int64_t(1) << 40),
      StateTransfer::copy("v4").value(),
      StateTransfer::copy("q\"uo\\te\n\x01 caf\xc3\xa9").value()};
  for (const StateTransfer &t : all) {
    auto back = StateTransfer::fromWire(t.toWire());
    ASSERT_TRUE(back.ok()) << t.toWire() << ": " << back.error().message;
    EXPECT_EQ(back.value(), t) << t.toWire();
  }
  EXPECT_EQ(forkOf(2).toWire(),
            R"({"kind":"fork","fork_tokens":2,"paged_layout_id":null})");
  EXPECT_EQ(StateTransfer::copy("x").value().toWire(),
            R"({"kind":"copy","fork_tokens":0,"paged_layout_id":"x"})");
  // Whitespace, key order, escapes and surrogate pairs are accepted.
  auto spaced = StateTransfer::fromWire(
      " {\n \"paged_layout_id\" : \"a\\u00e9\\ud83d\\ude00\\/\" ,"
      " \"fork_tokens\":0, \"kind\":\"copy\" } ");
  ASSERT_TRUE(spaced.ok()) << spaced.error().message;
  EXPECT_EQ(spaced->pagedLayoutId().value(), "a\xc3\xa9\xf0\x9f\x98\x80/");
}

TEST(StateTransfer, WireErrors) {
  auto err = [](const std::string &wire) {
    auto r = StateTransfer::fromWire(wire);
    EXPECT_FALSE(r.ok()) << wire;
    if (r.ok())
      return std::string();
    EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument) << wire;
    return r.error().message;
  };
  const std::string expected =
      "expected=['fork_tokens', 'kind', 'paged_layout_id']";
  EXPECT_EQ(err(R"({"kind":"none","fork_tokens":0})"),
            "invalid state transfer capability fields: " + expected +
                ", got=['fork_tokens', 'kind']");
  EXPECT_EQ(
      err(R"({"kind":"none","fork_tokens":0,"paged_layout_id":null,"x":1})"),
      "invalid state transfer capability fields: " + expected +
          ", got=['fork_tokens', 'kind', 'paged_layout_id', 'x']");
  EXPECT_EQ(err("{}"), "invalid state transfer capability fields: " + expected +
                           ", got=[]");
  EXPECT_EQ(err("[1]"), "state transfer capability must be a mapping");
  EXPECT_EQ(err("\"fork\""), "state transfer capability must be a mapping");
  // fork_tokens must be an integer (bool, float, string, null): checked
  // before the kind, as in the reference.
  for (const char *tok :
       {"true", "false", "1.0", "1e3", "\"1\"", "null", "[1]"})
    EXPECT_EQ(err(std::string(R"({"kind":"bogus","fork_tokens":)") + tok +
                  R"(,"paged_layout_id":null})"),
              "fork_tokens must be an integer")
        << tok;
  EXPECT_NE(
      err(R"({"kind":"fork","fork_tokens":99999999999999999999,"paged_layout_id":null})")
          .find("does not fit"),
      std::string::npos);
  EXPECT_EQ(err(R"({"kind":3,"fork_tokens":1,"paged_layout_id":null})"),
            "unknown state transfer kind 3");
  EXPECT_EQ(err(R"({"kind":null,"fork_tokens":1,"paged_layout_id":null})"),
            "unknown state transfer kind None");
  EXPECT_EQ(err(R"({"kind":"copy","fork_tokens":0,"paged_layout_id":7})"),
            "copy transfer requires a non-empty PAGE layout id");
  EXPECT_EQ(err(R"({"kind":"fork","fork_tokens":1,"paged_layout_id":""})"),
            "fork transfer cannot declare a PAGE layout");
  EXPECT_EQ(err(R"({"kind":"fork","fork_tokens":0,"paged_layout_id":null})"),
            "fork transfer requires positive fork_tokens");
  EXPECT_NE(
      err(R"({"kind":"none","kind":"none","fork_tokens":0,"paged_layout_id":null})")
          .find("duplicate field 'kind'"),
      std::string::npos);
  // Malformed JSON.
  for (const char *bad :
       {"", "{", "{\"kind\"}", "{\"kind\":\"none\",}", "{\"kind\":01}",
        "{\"kind\":\"a\\q\"}", "{\"kind\":\"\\ud800\"}", "{\"kind\":tru}",
        "{\"kind\":\"none\"} x", "{\"kind\":\"a\nb\"}", "{\"k\":-}",
        "{\"k\":[1,}"})
    EXPECT_NE(err(bad).find("not valid JSON"), std::string::npos) << bad;
  // Deep nesting is refused, not recursed into without bound.
  std::string deep =
      "{\"k\":" + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_NE(err(deep).find("not valid JSON"), std::string::npos);
}

} // namespace
