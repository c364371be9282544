//===- BlockPoolTest.cpp - BlockPool and PageUnitCheckpointStore tests ----===//
//
// The BlockPool is checked against a reference model written straight from
// spec/semantics.md §5 (with quirks Q2 and Q8 applied) on std::set /
// std::map / std::list: long random operation sequences, every result and
// the whole observable state compared after every step. Then every error
// path, and the PAGE-unit checkpoint store (§9).
//
//===----------------------------------------------------------------------===//

#include "poolrt/BlockPool.h"
#include "poolrt/PageUnitStore.h"
#include "poolrt/detail/TaggedIndex.h"

#include <array>
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <map>
#include <optional>
#include <random>
#include <set>
#include "test/Unit/TestKinds.h"

using namespace poolrt;

namespace {

//===----------------------------------------------------------------------===//
// The reference model.
//===----------------------------------------------------------------------===//

struct ModelPool {
  int numBlocks, maxBlocks;
  std::vector<int> ref;
  std::vector<std::optional<BlockHash>> hash;
  std::vector<std::vector<int32_t>> tokens;
  std::set<int> freeSet, used, vacant;
  std::list<int> cached; // least recently freed first
  std::map<BlockHash, int> index;
  std::map<int, std::pair<UnitOwner, int>> rawOwner;
  std::vector<BlockHash> evicted;

  ModelPool(int n, int max)
      : numBlocks(n), maxBlocks(max), ref(max, 0), hash(max), tokens(max) {
    for (int b = 0; b < n; ++b) {
      freeSet.insert(b);
      vacant.insert(b);
    }
  }

  bool inPool(int b) const { return b >= 0 && b < numBlocks; }
  bool isRaw(int b) const { return rawOwner.count(b) != 0; }
  bool isCached(int b) const {
    return std::find(cached.begin(), cached.end(), b) != cached.end();
  }
  int lookup(BlockHash h) const {
    auto it = index.find(h);
    return it == index.end() ? -1 : it->second;
  }

  void forget(int b) {
    hash[b].reset();
    tokens[b].clear();
  }
  void unindex(int b) {
    if (hash[b] && lookup(*hash[b]) == b) {
      index.erase(*hash[b]);
      evicted.push_back(*hash[b]);
    }
    forget(b);
  }
  void takeNamed(int b) {
    freeSet.erase(b);
    vacant.erase(b);
    cached.remove(b);
  }

  int takeFree() {
    int b = -1;
    if (!vacant.empty()) {
      b = *vacant.begin();
      vacant.erase(vacant.begin());
    } else if (!cached.empty()) {
      b = cached.front();
      cached.pop_front();
    } else {
      return -1;
    }
    freeSet.erase(b);
    return b;
  }

  bool allocate(int b) {
    if (!inPool(b) || used.count(b))
      return false;
    unindex(b);
    ref[b] = 1;
    takeNamed(b);
    used.insert(b);
    return true;
  }

  bool claim(int b) {
    if (!inPool(b) || isRaw(b))
      return false;
    if (used.count(b)) {
      ++ref[b];
      return true;
    }
    ref[b] = 1;
    takeNamed(b);
    used.insert(b);
    return true;
  }

  void release(int b) { // ref 1 -> 0, or one share less
    if (--ref[b] > 0)
      return;
    used.erase(b);
    freeSet.insert(b);
    if (hash[b] && lookup(*hash[b]) == b) { // Q8
      cached.push_back(b);
    } else {
      forget(b);
      vacant.insert(b);
    }
  }

  bool free(int b) {
    if (!inPool(b) || isRaw(b) || !used.count(b)) // Q2
      return false;
    release(b);
    return true;
  }

  bool publish(int b, BlockHash h, std::vector<int32_t> toks) {
    if (!inPool(b) || !used.count(b) || isRaw(b) || h == kNoHash)
      return false;
    if (hash[b] && *hash[b] != h && lookup(*hash[b]) == b) {
      index.erase(*hash[b]);
      evicted.push_back(*hash[b]);
    }
    hash[b] = h;
    tokens[b] = std::move(toks);
    int old = lookup(h);
    index[h] = b;
    if (old >= 0 && old != b && freeSet.count(old)) { // Q8, free displaced
      cached.remove(old);
      forget(old);
      vacant.insert(old);
    }
    return true;
  }

  void clearIndex() {
    index.clear();
    for (int b = 0; b < maxBlocks; ++b)
      if (!used.count(b))
        forget(b);
    cached.clear();
    vacant = freeSet;
  }

  int extend(int n) {
    int taken = std::min(n, maxBlocks - numBlocks);
    for (int b = numBlocks; b < numBlocks + taken; ++b) {
      freeSet.insert(b);
      vacant.insert(b);
    }
    numBlocks += taken;
    return taken;
  }

  std::optional<std::pair<int, int>> retireTop() {
    int top = numBlocks - 1;
    if (top < 0 || isRaw(top))
      return std::nullopt;
    int moved = -1;
    if (freeSet.count(top)) {
      takeNamed(top);
      unindex(top);
    } else if (used.count(top)) {
      moved = takeFree();
      if (moved < 0)
        return std::nullopt;
      unindex(moved);
      ref[moved] = ref[top];
      hash[moved] = hash[top];
      tokens[moved] = tokens[top];
      if (hash[top] && lookup(*hash[top]) == top)
        index[*hash[top]] = moved;
      used.erase(top);
      used.insert(moved);
      ref[top] = 0;
      forget(top);
    } else {
      return std::nullopt; // popped, nobody to follow the move
    }
    --numBlocks;
    return std::make_pair(top, moved);
  }

  std::optional<std::vector<int>> reserve(int count, const UnitOwner &owner) {
    if (int(freeSet.size()) < count)
      return std::nullopt;
    std::vector<int> ids;
    for (int i = 0; i < count; ++i) {
      int b = takeFree();
      allocate(b);
      rawOwner[b] = {owner, i};
      ids.push_back(b);
    }
    return ids;
  }

  bool releaseUnits(const std::vector<int> &ids, const UnitOwner &owner) {
    if (std::set<int>(ids.begin(), ids.end()).size() != ids.size())
      return false;
    for (size_t i = 0; i < ids.size(); ++i) {
      auto it = rawOwner.find(ids[i]);
      if (it == rawOwner.end() || !(it->second.first == owner) ||
          it->second.second != int(i))
        return false;
    }
    for (int b : ids) {
      rawOwner.erase(b);
      release(b);
    }
    return true;
  }

  BlockState state(int b) const {
    if (b >= numBlocks)
      return BlockState::Retired;
    if (isRaw(b))
      return BlockState::RawUnit;
    if (used.count(b))
      return BlockState::Held;
    if (vacant.count(b))
      return BlockState::Vacant;
    if (freeSet.count(b))
      return BlockState::Cached;
    return BlockState::Popped;
  }
};

/// Everything observable must agree; returns a description of the first
/// difference.
std::string compare(const BlockPool &pool, const ModelPool &m) {
  if (pool.numBlocks() != m.numBlocks)
    return "num_blocks";
  if (pool.numFree() != int(m.freeSet.size()))
    return "num_free";
  if (pool.numUsed() != int(m.used.size()))
    return "num_used";
  if (pool.numIndexed() != int(m.index.size()))
    return "num_indexed";
  for (int b = 0; b < m.maxBlocks; ++b) {
    BlockId id(b);
    std::string at = " of block " + std::to_string(b);
    if (m.ref[b] < 0 || *pool.refCount(id) < 0)
      return "negative ref count" + at;
    if (m.freeSet.count(b) && m.used.count(b))
      return "model: both free and held" + at;
    if (*pool.refCount(id) != m.ref[b])
      return "ref_count" + at;
    if (pool.hash(id) != m.hash[b].value_or(kNoHash))
      return "hash" + at;
    if (pool.tokenIds(id) != m.tokens[b])
      return "tokens" + at;
    if (pool.state(id) != m.state(b))
      return std::string("state") + at + ": pool " +
             blockStateName(pool.state(id)) + ", model " +
             blockStateName(m.state(b));
  }
  for (auto &[h, b] : m.index)
    if (pool.lookup(h).value != b)
      return "lookup of " + std::to_string(h);
  Status inv = pool.checkInvariants();
  if (!inv.ok())
    return inv.error().message;
  return "";
}

/// How often the interesting paths were hit, so a run that stops reaching
/// them (a changed op mix, a pool that never fills) fails visibly.
struct Coverage {
  std::map<std::string, int64_t> ok, refused;
  int64_t retireMoves = 0, q8Vacant = 0, q8Orphans = 0, evictions = 0,
          dryPops = 0, runClaims = 0;
};

struct Reservation {
  std::vector<BlockId> ids;
  UnitOwner owner;
};

/// One random run: `steps` operations on a pool of `n` (max `max`) blocks
/// drawing hashes from `hashes` values. Full comparison every `checkEvery`.
void randomRun(uint32_t seed, int n, int max, int steps, int hashes,
               int checkEvery, Coverage &cov, int64_t *handedOut = nullptr) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { // inclusive
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  std::vector<BlockHash> evicted;
  BlockPool pool = BlockPool::create(n, max, [&](BlockHash h) {
                     evicted.push_back(h);
                   }).take();
  ModelPool m(n, max);
  std::vector<int> popped;
  std::vector<Reservation> reservations;
  const UnitOwner owners[] = {
      {"state-checkpoint", 1}, {"state-checkpoint", 2}, {"live-kv", 1}};
  int64_t pops = 0;
  auto anyBlock = [&] { return pick(-1, max); };
  auto heldBlock = [&] {
    if (m.used.empty() || pick(0, 9) == 0)
      return anyBlock();
    auto it = m.used.begin();
    std::advance(it, pick(0, int(m.used.size()) - 1));
    return *it;
  };
  auto hashOf = [&] { return BlockHash(pick(0, hashes - 1)) * 1000003u; };

  for (int step = 0; step < steps; ++step) {
    int op = pick(0, 99);
    std::string what;
    bool ok = true, want = true;
    if (op < 14) { // pop: hand-out order
      what = "pop";
      auto b = pool.pop();
      int mb = m.takeFree();
      ok = b.ok();
      want = mb >= 0;
      cov.dryPops += !want;
      if (ok && want) {
        ASSERT_EQ(b->value, mb) << "seed " << seed << " step " << step;
        ++pops;
        if (handedOut)
          *handedOut += mb;
        // Most pops are followed by allocate (the normal pair); a few by
        // claim, a few left popped for a while.
        int r = pick(0, 9);
        if (r < 7) {
          ASSERT_TRUE(pool.allocate(*b).ok());
          m.allocate(mb);
        } else if (r < 8) {
          ASSERT_TRUE(pool.claim(*b).ok());
          m.claim(mb);
        } else {
          popped.push_back(mb);
        }
      }
    } else if (op < 18) { // finish a popped block
      what = "allocate popped";
      if (popped.empty())
        continue;
      int b = popped.back();
      popped.pop_back();
      ok = pool.allocate(BlockId(b)).ok();
      want = m.allocate(b);
    } else if (op < 28) {
      what = "allocate";
      int b = anyBlock();
      ok = pool.allocate(BlockId(b)).ok();
      want = m.allocate(b);
    } else if (op < 33) {
      what = "claim";
      int b = pick(0, 2) ? m.lookup(hashOf()) : heldBlock();
      ok = pool.claim(BlockId(b)).ok();
      want = m.claim(b);
    } else if (op < 38) {
      // A prefix hit's run: claimIndexedRun takes ids in order while each
      // is indexed under its hash and held or cached. The cached ones it
      // takes stay linked in the pool's LRU list (stale members), so later
      // pops, frees, retires and Q8 filings must still order the cached
      // half exactly as the model's list does.
      what = "claim run";
      std::vector<BlockId> ids;
      std::vector<BlockHash> hs;
      for (int k = pick(1, 6); k > 0; --k) {
        BlockHash h = hashOf();
        int b = m.lookup(h);
        if (b < 0 || pick(0, 15) == 0)
          b = anyBlock();
        if (pick(0, 20) == 0)
          h = hashOf(); // usually not this block's hash
        ids.push_back(BlockId(b));
        hs.push_back(h);
      }
      size_t got = pool.claimIndexedRun(ids.data(), hs.data(), ids.size());
      size_t expect = 0;
      for (; expect < ids.size(); ++expect) {
        int b = ids[expect].value;
        if (!m.inPool(b) || m.lookup(hs[expect]) != b ||
            !(m.used.count(b) || m.isCached(b)))
          break;
        ASSERT_TRUE(m.claim(b));
      }
      ASSERT_EQ(got, expect) << "claim run: seed " << seed << " step " << step;
      cov.runClaims += int64_t(got);
    } else if (op < 58) {
      what = "free";
      int b = heldBlock();
      // Q8: the last share of a block whose hash was re-pointed elsewhere.
      bool orphan = m.inPool(b) && m.used.count(b) && !m.isRaw(b) &&
                    m.ref[size_t(b)] == 1 && m.hash[size_t(b)] &&
                    m.lookup(*m.hash[size_t(b)]) != b;
      ok = pool.free(BlockId(b)).ok();
      want = m.free(b);
      if (ok && orphan) {
        ++cov.q8Orphans;
        ASSERT_EQ(pool.state(BlockId(b)), BlockState::Vacant);
      }
    } else if (op < 72) {
      what = "publish";
      int b = heldBlock();
      BlockHash h = pick(0, 50) ? hashOf() : kNoHash;
      std::vector<int32_t> toks(size_t(pick(0, 3)), int32_t(h & 0xffff));
      int displaced = m.lookup(h);
      bool displacedFree = displaced >= 0 && displaced != b &&
                           m.freeSet.count(displaced) && m.used.count(b) &&
                           !m.isRaw(b);
      ok = pool.publish(BlockId(b), h, toks.data(), toks.size()).ok();
      want = m.publish(b, h, toks);
      cov.q8Vacant += ok && displacedFree;
    } else if (op < 82) {
      what = "lookup";
      BlockHash h = hashOf();
      ASSERT_EQ(pool.lookup(h).value, m.lookup(h));
    } else if (op < 83) {
      what = "clear_index";
      pool.clearIndex();
      m.clearIndex();
    } else if (op < 87) {
      what = "reserve_units";
      int count = pick(-1, 3);
      const UnitOwner &owner = owners[pick(0, 2)];
      auto r = pool.reserveUnits(count, owner);
      ok = r.ok();
      want = count >= 0;
      if (ok && want) {
        auto mr = m.reserve(count, owner);
        ASSERT_EQ(r->has_value(), mr.has_value());
        if (mr) {
          std::vector<int> got;
          for (BlockId b : **r)
            got.push_back(b.value);
          ASSERT_EQ(got, *mr);
          reservations.push_back({**r, owner});
        }
      }
    } else if (op < 91) {
      what = "release_units";
      if (reservations.empty())
        continue;
      size_t i = size_t(pick(0, int(reservations.size()) - 1));
      Reservation res = reservations[i];
      int mode = pick(0, 5);
      if (mode == 0 && res.ids.size() > 1) // wrong order
        std::reverse(res.ids.begin(), res.ids.end());
      else if (mode == 1) // wrong owner
        res.owner.id += 7;
      else if (mode == 2 && !res.ids.empty()) // duplicate
        res.ids.push_back(res.ids.front());
      std::vector<int> ids;
      for (BlockId b : res.ids)
        ids.push_back(b.value);
      ok = pool.releaseUnits(res.ids, res.owner).ok();
      want = m.releaseUnits(ids, res.owner);
      if (ok && want)
        reservations.erase(reservations.begin() + long(i));
    } else if (op < 95) {
      what = "extend";
      int k = pick(-1, 3);
      auto r = pool.extend(k);
      ok = r.ok();
      want = k >= 0;
      if (ok && want) {
        ASSERT_EQ(*r, m.extend(k));
      }
    } else {
      what = "retire_top";
      auto r = pool.retireTop();
      auto mr = m.retireTop();
      ASSERT_EQ(r.has_value(), mr.has_value())
          << "seed " << seed << " step " << step;
      if (r) {
        cov.retireMoves += r->movedTo.valid();
        ASSERT_EQ(r->retired.value, mr->first);
        ASSERT_EQ(r->movedTo.value, mr->second);
      }
      popped.erase(std::remove_if(popped.begin(), popped.end(),
                                  [&](int b) { return b >= m.numBlocks; }),
                   popped.end());
    }
    ASSERT_EQ(ok, want) << what << ": seed " << seed << " step " << step;
    (ok ? cov.ok : cov.refused)[what]++;
    ASSERT_EQ(evicted, m.evicted)
        << what << ": on_evict, seed " << seed << " step " << step;
    if (step % checkEvery == 0 || step + 1 == steps) {
      std::string diff = compare(pool, m);
      ASSERT_EQ(diff, "") << "after " << what << ": seed " << seed << " step "
                          << step;
    }
  }
  cov.evictions += int64_t(evicted.size());
  EXPECT_GT(pops, steps / 20) << "the run should hand out blocks";
}

TEST(BlockPoolProperty, MatchesModelSmallPools) {
  // Small pools: every path (dry pool, retire with nothing free, displaced
  // hashes, raw units at the top) is hit often; compared after every step.
  Coverage cov;
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u})
    randomRun(seed, 12, 20, 200000, 24, 1, cov);
  for (const char *op :
       {"pop", "allocate popped", "allocate", "claim", "free", "publish",
        "reserve_units", "release_units", "extend", "retire_top"}) {
    EXPECT_GT(cov.ok[op], 100) << op;
    if (std::string(op) != "retire_top" &&
        std::string(op) != "allocate popped") {
      EXPECT_GT(cov.refused[op], 100) << op;
    }
  }
  EXPECT_GT(cov.retireMoves, 100);
  EXPECT_GT(cov.q8Vacant, 100);
  EXPECT_GT(cov.q8Orphans, 100);
  EXPECT_GT(cov.evictions, 1000);
  EXPECT_GT(cov.dryPops, 100);
  EXPECT_GT(cov.runClaims, 1000);
}

TEST(BlockPoolProperty, MatchesModelLargerPool) {
  int64_t handed = 0;
  Coverage cov;
  for (uint32_t seed : {11u, 12u, 13u})
    randomRun(seed, 400, 512, 200000, 600, 97, cov, &handed);
  EXPECT_GT(handed, 0);
}

//===----------------------------------------------------------------------===//
// The compact index under collisions the random keys above never produce.
//===----------------------------------------------------------------------===//

// The key whose Fibonacci mix is `mixed` (the multiplier is odd, so the mix
// is a bijection): lets a test choose tags and home slots.
uint64_t keyWithMix(uint64_t mixed) {
  const uint64_t c = 0x9E3779B97F4A7C15ull;
  uint64_t inv = c; // Newton: each step doubles the correct low bits
  for (int i = 0; i < 6; ++i)
    inv *= 2 - c * inv;
  return mixed * inv;
}

TEST(TaggedIndex, MatchesAMapUnderCollidingTagsAndClusters) {
  std::mt19937_64 rng(99);
  // 40 keys: groups sharing one tag (hence one home), and neighbouring
  // homes, in a 64-slot table at up to 5/8 load.
  std::vector<uint64_t> keys;
  for (uint64_t g = 0; g < 10; ++g)
    for (uint64_t k = 0; k < 4; ++k)
      keys.push_back(keyWithMix(((g * 3) << 58) | (uint64_t(g % 2) << 32) | k));
  ASSERT_EQ(detail::TaggedIndex::tagOf(keys[0]),
            detail::TaggedIndex::tagOf(keys[1]));
  detail::TaggedIndex index(40, 1); // 64 slots
  std::vector<uint64_t> keyOfId(keys.size());
  auto keyOf = [&](int32_t id) { return keyOfId[size_t(id)]; };
  std::map<uint64_t, int32_t> model;
  for (int step = 0; step < 200000; ++step) {
    uint64_t key = keys[rng() % keys.size()];
    int32_t id =
        int32_t(std::find(keys.begin(), keys.end(), key) - keys.begin());
    switch (rng() % 3) {
    case 0: { // insert under the key's own id
      auto it = model.find(key);
      keyOfId[size_t(id)] = key;
      int32_t old = index.insertOrAssign(key, id, keyOf);
      ASSERT_EQ(old, it == model.end() ? -1 : it->second);
      model[key] = id;
      break;
    }
    case 1: { // erase
      bool had = model.count(key) != 0;
      ASSERT_EQ(index.erase(key, id), had);
      model.erase(key);
      break;
    }
    default:
      break;
    }
    ASSERT_EQ(index.size(), int64_t(model.size()));
    for (uint64_t k : keys) {
      auto it = model.find(k);
      ASSERT_EQ(index.find(k, keyOf), it == model.end() ? -1 : it->second)
          << "step " << step;
    }
  }
}

TEST(BlockPoolIndex, SameTagDifferentHashes) {
  BlockHash a = keyWithMix(uint64_t(7) << 40),
            b = keyWithMix((uint64_t(7) << 40) | 1);
  ASSERT_EQ(detail::TaggedIndex::tagOf(a), detail::TaggedIndex::tagOf(b));
  BlockPool pool = BlockPool::create(3).take();
  ASSERT_TRUE(pool.allocate(BlockId(0)).ok());
  ASSERT_TRUE(pool.allocate(BlockId(1)).ok());
  ASSERT_TRUE(pool.publish(BlockId(0), a).ok());
  ASSERT_TRUE(pool.publish(BlockId(1), b).ok());
  EXPECT_EQ(pool.lookup(a), BlockId(0));
  EXPECT_EQ(pool.lookup(b), BlockId(1));
  ASSERT_TRUE(pool.free(BlockId(0)).ok());
  ASSERT_TRUE(pool.allocate(BlockId(0)).ok()); // evicts a
  EXPECT_EQ(pool.lookup(a), kNoBlock);
  EXPECT_EQ(pool.lookup(b), BlockId(1));
  EXPECT_TRUE(pool.invariantsHold());
}

TEST(BlockPoolIndex, LookupRunAndClaimIndexedRunStopAtTheFirstMiss) {
  // Four published blocks, 2 tokens each; block 2 holds other tokens than
  // the prompt asks for (a same-hash collision the fingerprint catches).
  BlockPool pool = BlockPool::create(6).take();
  std::vector<BlockHash> h = {11, 22, 33, 44};
  std::vector<std::vector<int32_t>> toks = {{1, 2}, {3, 4}, {9, 9}, {7, 8}};
  for (int b = 0; b < 4; ++b) {
    ASSERT_TRUE(pool.allocate(BlockId(b)).ok());
    ASSERT_TRUE(pool.publish(BlockId(b), h[size_t(b)], toks[size_t(b)].data(), 2).ok());
  }
  ASSERT_TRUE(pool.free(BlockId(0)).ok()); // cached; 1..3 stay held
  std::vector<int32_t> want2 = {5, 6};
  std::vector<uint64_t> prints = {tokenPrint(toks[0].data(), 2), tokenPrint(toks[1].data(), 2),
                                  tokenPrint(want2.data(), 2), tokenPrint(toks[3].data(), 2)};
  std::vector<BlockId> out(4);
  size_t live = 99;
  EXPECT_EQ(pool.matchRun(h.data(), prints.data(), 2, 4, out.data(), 0, &live), 2u);
  EXPECT_EQ(out[0], BlockId(0));
  EXPECT_EQ(out[1], BlockId(1));
  EXPECT_EQ(live, 1u); // block 1 is held, block 0 cached
  // A different token count per block is a miss too.
  EXPECT_EQ(pool.matchRun(h.data(), prints.data(), 3, 4, out.data(), 0), 0u);

  // Without prints only the index is matched: all four hashes are indexed
  // (the fifth is not); matching the found ids again as hints with the
  // prints stops at block 2 (and at 0 for another count).
  std::vector<BlockId> found(5);
  std::vector<BlockHash> h5 = {11, 22, 33, 44, 55};
  EXPECT_EQ(pool.matchRun(h5.data(), nullptr, 2, 5, found.data(), 0), 4u);
  for (int b = 0; b < 4; ++b)
    EXPECT_EQ(found[size_t(b)], BlockId(b));
  EXPECT_EQ(pool.matchRun(h5.data(), prints.data(), 2, 4, found.data(), 4), 2u);
  EXPECT_EQ(pool.matchRun(h5.data(), prints.data(), 3, 4, found.data(), 4), 0u);
  EXPECT_EQ(pool.matchRun(h5.data(), prints.data(), 2, 0, found.data(), 4), 0u);
  std::vector<BlockHash> missFirst = {99, 11};
  EXPECT_EQ(pool.matchRun(missFirst.data(), nullptr, 2, 2, found.data(), 0), 0u);

  // Claims in order while each id is indexed under its hash: the cached
  // block 0 becomes held, block 1 gains a reference; block 5 (never
  // published) stops the run and is left as it was.
  std::vector<BlockId> ids = {BlockId(0), BlockId(1), BlockId(5)};
  std::vector<BlockHash> hs = {11, 22, 33};
  int32_t freeBefore = pool.numFree();
  EXPECT_EQ(pool.claimIndexedRun(ids.data(), hs.data(), 3), 2u);
  EXPECT_EQ(pool.state(BlockId(0)), BlockState::Held);
  EXPECT_EQ(*pool.refCount(BlockId(0)), 1);
  EXPECT_EQ(*pool.refCount(BlockId(1)), 2);
  EXPECT_EQ(pool.state(BlockId(5)), BlockState::Vacant);
  EXPECT_EQ(pool.numFree(), freeBefore - 1);
  // A hash that does not match the block's stops it before any claim.
  std::vector<BlockHash> wrong = {22};
  EXPECT_EQ(pool.claimIndexedRun(ids.data(), wrong.data(), 1), 0u);
  EXPECT_EQ(*pool.refCount(BlockId(0)), 1);
  EXPECT_TRUE(pool.invariantsHold());
}

TEST(BlockPoolIndex, UsedStatesCountsEightPackedStatesAsUsedStateDoes) {
  // The match's eight lanes pack their states a byte each; the count must
  // equal usedState summed over the bytes for every state in every lane
  // (a byte's carry into its neighbour, or a bound off by one state, would
  // miscount some mix).
  const BlockState all[] = {BlockState::Vacant, BlockState::Cached, BlockState::Popped,
                            BlockState::Held,   BlockState::RawUnit, BlockState::Retired};
  std::mt19937 rng(77);
  for (int round = 0; round < 20000; ++round) {
    uint64_t packed = 0;
    size_t want = 0;
    for (int lane = 0; lane < 8; ++lane) {
      // The first 48 rounds put each state in each lane over a Retired
      // background (the largest byte); the rest are random mixes.
      BlockState s = round < 48 ? (lane == round / 6 ? all[round % 6] : BlockState::Retired)
                                : all[rng() % 6];
      packed |= uint64_t(uint8_t(s)) << (8 * lane);
      want += BlockPool::usedState(s) ? 1 : 0;
    }
    ASSERT_EQ(BlockPool::usedStates(packed), want) << "round " << round;
  }
}

TEST(BlockPoolIndex, MatchRunWithHintsAnswersAsTheIndexDoes) {
  // A chain of 40 published blocks (whole lanes of eight and a tail), then
  // churn that evicts some, re-publishes some hashes on other blocks and
  // holds others. Hints that are right, stale, out of the pool or garbage
  // must give exactly the answer of probing the index block by block.
  std::mt19937 rng(1234);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + int(rng() % 40), pool_blocks = 64;
    BlockPool pool = BlockPool::create(pool_blocks).take();
    const size_t len = static_cast<size_t>(n);
    std::vector<BlockHash> h(len);
    std::vector<uint64_t> prints(len);
    std::vector<BlockId> orig(len);
    for (int i = 0; i < n; ++i) {
      h[size_t(i)] = 1000 + uint64_t(i) * 7919 + uint64_t(round);
      std::vector<int32_t> tok = {i, round};
      prints[size_t(i)] = tokenPrint(tok.data(), 2);
      BlockId b = pool.pop().take();
      ASSERT_TRUE(pool.allocate(b).ok());
      ASSERT_TRUE(pool.publish(b, h[size_t(i)], tok.data(), 2).ok());
      orig[size_t(i)] = b;
    }
    for (int i = n - 1; i >= 0; --i)
      if (rng() % 3 != 0) { // a third stay held
        ASSERT_TRUE(pool.free(orig[size_t(i)]).ok());
      }
    // Churn: fresh allocations evict the coldest cached blocks; some
    // hashes move to another block with other tokens (a collision the
    // prints must catch) or the same tokens (a hit on a new id).
    int churn = int(rng() % 12);
    for (int c = 0; c < churn && pool.numFree() > 0; ++c) {
      BlockId b = pool.pop().take();
      ASSERT_TRUE(pool.allocate(b).ok());
      int i = int(rng() % uint32_t(n));
      std::vector<int32_t> tok = {i, (rng() % 2) ? round : -1, 0};
      // Also: the same hash with no tokens stored, or with three (each
      // fails the collision check on its own field of the match word).
      size_t count = std::array<size_t, 4>{2, 2, 0, 3}[rng() % 4];
      ASSERT_TRUE(pool.publish(b, h[size_t(i)], count ? tok.data() : nullptr, count)
                      .ok());
    }
    // The answer by probing, block by block.
    size_t want = 0, wantLive = 0;
    std::vector<BlockId> wantIds;
    for (; want < size_t(n); ++want) {
      BlockId b = pool.lookup(h[want]);
      if (!b.valid() || !pool.tokensMatch(b, 2, prints[want]))
        break;
      wantIds.push_back(b);
      wantLive += pool.isUsed(b);
    }
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<BlockId> ids(len);
      size_t hints = rng() % size_t(n + 1);
      for (size_t i = 0; i < size_t(n); ++i) {
        switch (kind) {
        case 0: ids[i] = orig[i]; break;                          // as published
        case 1: ids[i] = i < wantIds.size() ? wantIds[i] : orig[i]; break; // right
        case 2: ids[i] = BlockId(int32_t(rng() % 200) - 50); break; // garbage
        default: ids[i] = BlockId(int32_t(rng() % uint32_t(pool_blocks))); break;
        }
      }
      size_t live = 12345;
      size_t got = pool.matchRun(h.data(), prints.data(), 2, size_t(n), ids.data(),
                                 hints, &live);
      ASSERT_EQ(got, want) << "round " << round << " kind " << kind;
      EXPECT_EQ(live, wantLive) << "round " << round << " kind " << kind;
      for (size_t i = 0; i < got; ++i)
        ASSERT_EQ(ids[i], wantIds[i]) << "round " << round << " block " << i;
      // The index alone, then the prints over what it found.
      std::vector<BlockId> two(len);
      size_t found = pool.matchRun(h.data(), nullptr, 2, size_t(n), two.data(), 0);
      EXPECT_GE(found, want);
      EXPECT_EQ(pool.matchRun(h.data(), prints.data(), 2, found, two.data(), found),
                want);
    }
    ASSERT_TRUE(pool.invariantsHold());
  }
}

//===----------------------------------------------------------------------===//
// Error paths: each leaves the pool exactly as it was.
//===----------------------------------------------------------------------===//

struct Snapshot {
  int32_t blocks, free, used, indexed;
  std::vector<std::pair<int32_t, BlockHash>> perBlock;
  std::vector<BlockState> states;
  explicit Snapshot(const BlockPool &p)
      : blocks(p.numBlocks()), free(p.numFree()), used(p.numUsed()),
        indexed(p.numIndexed()) {
    for (int32_t b = 0; b < p.maxBlocks(); ++b) {
      perBlock.push_back({*p.refCount(BlockId(b)), p.hash(BlockId(b))});
      states.push_back(p.state(BlockId(b)));
    }
  }
  bool operator==(const Snapshot &o) const {
    return blocks == o.blocks && free == o.free && used == o.used &&
           indexed == o.indexed && perBlock == o.perBlock && states == o.states;
  }
};

void expectRefused(BlockPool &pool, Status st, ErrorKind kind,
                   const std::string &mentions, const Snapshot &before) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, kind) << st.error().message;
  EXPECT_NE(st.error().message.find(mentions), std::string::npos)
      << st.error().message;
  EXPECT_TRUE(Snapshot(pool) == before) << "the pool changed";
  EXPECT_TRUE(pool.invariantsHold());
}

TEST(BlockPoolAllocateFresh, EqualsPopThenAllocateBlockByBlock) {
  // Two pools driven through the same churn (publish, free, claim, so both
  // halves of the free list and the index are populated); then n fresh
  // blocks, one pool by pop()+allocate() per block, the other by one
  // allocateFresh(). Same ids in the same order, the same evictions in the
  // same order, the same pool after; a request past what is free stops at
  // the last free block.
  std::mt19937 rng(77);
  for (int round = 0; round < 300; ++round) {
    const int blocks = 1 + int(rng() % 48);
    std::vector<BlockHash> evA, evB;
    BlockPool a = BlockPool::create(blocks, std::nullopt, [&](BlockHash h) { evA.push_back(h); }).take();
    BlockPool b = BlockPool::create(blocks, std::nullopt, [&](BlockHash h) { evB.push_back(h); }).take();
    std::vector<int32_t> held;
    for (int step = 0; step < 3 * blocks; ++step) {
      uint32_t op = rng() % 3;
      if (op == 0 && a.numFree() > 0) {
        BlockId x = *a.pop(), y = *b.pop();
        ASSERT_EQ(x, y);
        ASSERT_TRUE(a.allocate(x).ok());
        ASSERT_TRUE(b.allocate(y).ok());
        BlockHash h = 1 + rng() % 64; // repeats: some publishes displace
        int32_t tok[2] = {int32_t(h), int32_t(rng() % 3)};
        int32_t ntok = int32_t(rng() % 3);
        ASSERT_EQ(a.publish(x, h, tok, ntok).ok(), b.publish(y, h, tok, ntok).ok());
        held.push_back(x.value);
      } else if (op == 1 && !held.empty()) {
        size_t k = rng() % held.size();
        ASSERT_TRUE(a.free(BlockId(held[k])).ok());
        ASSERT_TRUE(b.free(BlockId(held[k])).ok());
        held.erase(held.begin() + std::ptrdiff_t(k));
      } else if (op == 2 && a.numFree() > 0) {
        // Take a named free block (the cached or vacant half) as a hit.
        int32_t id = int32_t(rng() % uint32_t(blocks));
        BlockState st = a.state(BlockId(id));
        if (st == BlockState::Cached || st == BlockState::Vacant) {
          ASSERT_TRUE(a.claim(BlockId(id)).ok());
          ASSERT_TRUE(b.claim(BlockId(id)).ok());
          held.push_back(id);
        }
      }
    }
    size_t n = rng() % size_t(blocks + 4);
    std::vector<BlockId> want;
    for (size_t i = 0; i < n; ++i) {
      auto x = a.pop();
      if (!x.ok())
        break;
      ASSERT_TRUE(a.allocate(*x).ok());
      want.push_back(*x);
    }
    std::vector<BlockId> got(n + 1, BlockId(-7));
    size_t k = b.allocateFresh(n, got.data());
    ASSERT_EQ(k, want.size()) << "round " << round;
    for (size_t i = 0; i < k; ++i)
      EXPECT_EQ(got[i], want[i]) << "round " << round << " block " << i;
    EXPECT_EQ(got[k], BlockId(-7)); // nothing written past what was taken
    EXPECT_EQ(evA, evB);
    EXPECT_EQ(a.numFree(), b.numFree());
    EXPECT_EQ(a.numUsed(), b.numUsed());
    for (int32_t id = 0; id < blocks; ++id) {
      EXPECT_EQ(a.state(BlockId(id)), b.state(BlockId(id)));
      if (a.state(BlockId(id)) == BlockState::Held) {
        EXPECT_EQ(*a.refCount(BlockId(id)), *b.refCount(BlockId(id)));
      }
    }
    EXPECT_TRUE(b.invariantsHold());
    if (n > want.size()) {
      EXPECT_EQ(b.numFree(), 0);
    }
  }
}

TEST(BlockPoolErrors, DoubleFreeIsRefusedAndHarmless) {
  BlockPool pool = BlockPool::create(4).take();
  ASSERT_TRUE(pool.allocate(BlockId(1)).ok());
  ASSERT_TRUE(pool.publish(BlockId(1), 77).ok());
  ASSERT_TRUE(pool.free(BlockId(1)).ok());
  Snapshot before(pool);
  expectRefused(pool, pool.free(BlockId(1)), ErrorKind::Internal,
                "free of block 1: not held", before);
  // Q2's consequence in the reference: the block handed out twice. Here
  // the free list holds it once.
  std::set<int32_t> seen;
  while (pool.hasFree(1))
    EXPECT_TRUE(seen.insert(pool.takeFree().value).second);
  EXPECT_EQ(seen.size(), 4u);
}

TEST(BlockPoolErrors, FreeOfAPoppedOrNeverAllocatedBlock) {
  BlockPool pool = BlockPool::create(3).take();
  Snapshot fresh(pool);
  expectRefused(pool, pool.free(BlockId(0)), ErrorKind::Internal, "not held",
                fresh);
  BlockId b = pool.pop().take();
  Snapshot popped(pool);
  expectRefused(pool, pool.free(b), ErrorKind::Internal, "not held", popped);
}

TEST(BlockPoolErrors, UnknownAndOutOfRangeIds) {
  BlockPool pool = BlockPool::create(2, 4).take();
  Snapshot before(pool);
  for (int32_t id : {-1, 2, 3, 4, 1000}) {
    std::string mention = "of block " + std::to_string(id) + ": outside";
    expectRefused(pool, pool.allocate(BlockId(id)), ErrorKind::Internal,
                  "allocate " + mention, before);
    expectRefused(pool, pool.claim(BlockId(id)), ErrorKind::Internal,
                  "claim " + mention, before);
    expectRefused(pool, pool.free(BlockId(id)), ErrorKind::Internal,
                  "free " + mention, before);
    expectRefused(pool, pool.publish(BlockId(id), 5), ErrorKind::Internal,
                  "publish " + mention, before);
  }
  // A retired id is outside the pool too.
  ASSERT_TRUE(pool.retireTop().has_value());
  Snapshot retired(pool);
  expectRefused(pool, pool.allocate(BlockId(1)), ErrorKind::Internal,
                "outside the pool of 1 blocks", retired);
}

TEST(BlockPoolErrors, AllocateOfAHeldBlock) {
  BlockPool pool = BlockPool::create(2).take();
  ASSERT_TRUE(pool.allocate(BlockId(0)).ok());
  Snapshot before(pool);
  expectRefused(pool, pool.allocate(BlockId(0)), ErrorKind::Internal,
                "allocate of block 0: already held (held, ref_count 1)",
                before);
}

TEST(BlockPoolErrors, PublishNeedsAHeldBlockAndARealHash) {
  BlockPool pool = BlockPool::create(2).take();
  Snapshot before(pool);
  expectRefused(pool, pool.publish(BlockId(0), 9), ErrorKind::Internal,
                "not held", before);
  ASSERT_TRUE(pool.allocate(BlockId(0)).ok());
  Snapshot held(pool);
  expectRefused(pool, pool.publish(BlockId(0), kNoHash),
                ErrorKind::InvalidArgument, "no-hash", held);
}

TEST(BlockPoolErrors, RawUnitThroughTheBlockApi) {
  BlockPool pool = BlockPool::create(3).take();
  UnitOwner owner{"state-checkpoint", 4};
  auto units = pool.reserveUnits(2, owner);
  ASSERT_TRUE(units.ok() && units->has_value());
  BlockId u = (**units)[0];
  Snapshot before(pool);
  expectRefused(pool, pool.free(u), ErrorKind::Internal,
                "block 0 is a reserved raw unit; use release_units", before);
  expectRefused(pool, pool.claim(u), ErrorKind::Internal, "raw unit", before);
  expectRefused(pool, pool.allocate(u), ErrorKind::Internal, "raw unit",
                before);
  expectRefused(pool, pool.publish(u, 3), ErrorKind::Internal, "raw unit",
                before);
}

TEST(BlockPoolErrors, ReleaseUnitsChecksEverythingFirst) {
  BlockPool pool = BlockPool::create(4).take();
  UnitOwner owner{"state-checkpoint", 4};
  auto units = pool.reserveUnits(3, owner);
  ASSERT_TRUE(units.ok() && units->has_value());
  std::vector<BlockId> ids = **units;
  Snapshot before(pool);
  // Wrong owner.
  expectRefused(pool, pool.releaseUnits(ids, UnitOwner{"state-checkpoint", 5}),
                ErrorKind::Internal,
                "raw unit 0 belongs to (('state-checkpoint', 4), 0), not "
                "(('state-checkpoint', 5), 0)",
                before);
  expectRefused(pool, pool.releaseUnits(ids, UnitOwner{"live-kv", 4}),
                ErrorKind::Internal, "not (('live-kv', 4), 0)", before);
  // Right owner, wrong order: the last unit is checked after the first two
  // passed, and still nothing is released.
  std::vector<BlockId> swapped = {ids[0], ids[2], ids[1]};
  expectRefused(pool, pool.releaseUnits(swapped, owner), ErrorKind::Internal,
                "raw unit 2 belongs to (('state-checkpoint', 4), 2)", before);
  // A unit that is no raw unit at all.
  expectRefused(pool, pool.releaseUnits({BlockId(3)}, owner),
                ErrorKind::Internal, "raw unit 3 belongs to None", before);
  // Duplicates.
  expectRefused(pool, pool.releaseUnits({ids[0], ids[0]}, owner),
                ErrorKind::InvalidArgument, "duplicate", before);
  // A partial release (pieces 0 and 1 only) is fine, in order.
  ASSERT_TRUE(pool.releaseUnits({ids[0], ids[1]}, owner).ok());
  EXPECT_EQ(pool.numFree(), 3);
  EXPECT_TRUE(pool.invariantsHold());
}

TEST(BlockPoolErrors, ReserveUnitsArguments) {
  BlockPool pool = BlockPool::create(2).take();
  auto negative = pool.reserveUnits(-1, UnitOwner{"x", 0});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().kind, ErrorKind::InvalidArgument);
  auto noOwner = pool.reserveUnits(1, UnitOwner{"", 0});
  ASSERT_FALSE(noOwner.ok());
  EXPECT_EQ(noOwner.error().kind, ErrorKind::InvalidArgument);
  auto tooMany = pool.reserveUnits(3, UnitOwner{"x", 0});
  ASSERT_TRUE(tooMany.ok());
  EXPECT_FALSE(tooMany->has_value());
  EXPECT_EQ(pool.numFree(), 2);
  auto none = pool.reserveUnits(0, UnitOwner{"x", 0});
  ASSERT_TRUE(none.ok() && none->has_value());
  EXPECT_TRUE((*none)->empty());
}

TEST(BlockPoolErrors, ConstructionAndExtend) {
  auto bad = BlockPool::create(5, 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(bad.error().message, "5 blocks outside 0..4");
  EXPECT_ERROR_KIND(BlockPool::create(-1), InvalidArgument);
  BlockPool pool = BlockPool::create(1, 3).take();
  auto neg = pool.extend(-2);
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(pool.numBlocks(), 1);
}

TEST(BlockPoolErrors, PopOfADryPool) {
  BlockPool pool = BlockPool::create(1).take();
  ASSERT_TRUE(pool.pop().ok());
  auto r = pool.pop();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::Internal);
  EXPECT_EQ(r.error().message, "No free blocks available");
  EXPECT_EQ(pool.takeFree(), kNoBlock);
}

//===----------------------------------------------------------------------===//
// Q8 and retirement details.
//===----------------------------------------------------------------------===//

TEST(BlockPoolQ8, DisplacedHeldBlockIsFiledVacant) {
  BlockPool pool = BlockPool::create(3).take();
  ASSERT_TRUE(pool.allocate(BlockId(0)).ok());
  ASSERT_TRUE(pool.publish(BlockId(0), 100).ok());
  ASSERT_TRUE(pool.allocate(BlockId(1)).ok());
  ASSERT_TRUE(pool.publish(BlockId(1), 100).ok()); // re-points 100 to 1
  EXPECT_EQ(pool.hash(BlockId(0)), 100u);  // held: keeps it (hash chains)
  ASSERT_TRUE(pool.free(BlockId(1)).ok()); // reachable: cached
  ASSERT_TRUE(pool.free(BlockId(0)).ok()); // unreachable: vacant (Q8)
  EXPECT_EQ(pool.state(BlockId(0)), BlockState::Vacant);
  EXPECT_EQ(pool.hash(BlockId(0)), kNoHash);
  EXPECT_EQ(pool.state(BlockId(1)), BlockState::Cached);
  // Vacant first: 0, 2, then the cached 1.
  EXPECT_EQ(pool.takeFree(), BlockId(0));
  EXPECT_EQ(pool.takeFree(), BlockId(2));
  EXPECT_EQ(pool.takeFree(), BlockId(1));
}

TEST(BlockPoolQ8, DisplacedCachedBlockLeavesTheLru) {
  std::vector<BlockHash> evicted;
  BlockPool pool = BlockPool::create(3, std::nullopt, [&](BlockHash h) {
                     evicted.push_back(h);
                   }).take();
  for (int32_t b : {0, 1, 2}) {
    ASSERT_TRUE(pool.allocate(BlockId(b)).ok());
    ASSERT_TRUE(pool.publish(BlockId(b), BlockHash(100 + b)).ok());
  }
  ASSERT_TRUE(pool.free(BlockId(0)).ok());
  ASSERT_TRUE(pool.free(BlockId(1)).ok());
  // Block 2 re-publishes under 100: block 0, free and cached, is now
  // unreachable and must not compete with block 1 in LRU order.
  ASSERT_TRUE(pool.publish(BlockId(2), 100).ok());
  EXPECT_EQ(evicted, std::vector<BlockHash>{102}); // 2's own old name
  EXPECT_EQ(pool.state(BlockId(0)), BlockState::Vacant);
  EXPECT_EQ(pool.lookup(100), BlockId(2));
  EXPECT_EQ(pool.takeFree(), BlockId(0));
  EXPECT_EQ(pool.takeFree(), BlockId(1));
  EXPECT_TRUE(pool.invariantsHold());
}

TEST(BlockPoolQ8, ClearIndexLeavesHeldBlocksUnreachable) {
  BlockPool pool = BlockPool::create(2).take();
  ASSERT_TRUE(pool.allocate(BlockId(0)).ok());
  ASSERT_TRUE(pool.publish(BlockId(0), 5).ok());
  pool.clearIndex();
  EXPECT_EQ(pool.hash(BlockId(0)), 5u);
  ASSERT_TRUE(pool.free(BlockId(0)).ok());
  EXPECT_EQ(pool.state(BlockId(0)), BlockState::Vacant);
  EXPECT_EQ(pool.numIndexed(), 0);
}

TEST(BlockPoolRetire, PoppedTopIsNotRetired) {
  BlockPool pool = BlockPool::create(1).take();
  BlockId b = pool.pop().take();
  EXPECT_FALSE(pool.retireTop().has_value());
  ASSERT_TRUE(pool.allocate(b).ok());
  EXPECT_FALSE(pool.retireTop().has_value()); // held, nothing free
}

//===----------------------------------------------------------------------===//
// PageUnitCheckpointStore.
//===----------------------------------------------------------------------===//

struct StoreFixture {
  BlockPool pool;
  PageUnitCheckpointStore store;
  explicit StoreFixture(int n = 20, int64_t unit = 10, int64_t slot = 25,
                        int64_t image = 25)
      : pool(BlockPool::create(n).take()),
        store(pool,
              PagedStateCheckpointSpec::create(unit, slot, "layout-v1", image)
                  .take()) {}
  CheckpointId ready(BlockHash h, int32_t slot = 0) {
    auto op = store.beginStore(h, SlotIndex(slot));
    EXPECT_TRUE(op.has_value());
    store.completeInflight();
    CheckpointId id = store.lookup(h);
    EXPECT_TRUE(id.valid());
    return id;
  }
};

TEST(PageUnitStore, SpecPricesUnitsOffTheImage) {
  auto whole = PagedStateCheckpointSpec::create(10, 25, "l", 25);
  auto part = PagedStateCheckpointSpec::create(10, 25, "l", 11);
  EXPECT_EQ(whole->unitsPerCheckpoint(), 3);
  EXPECT_EQ(part->unitsPerCheckpoint(), 2);
  EXPECT_EQ(PagedStateCheckpointSpec::create(10, -1, "l", 25).error().message,
            "slot_bytes must be a positive integer");
  EXPECT_EQ(PagedStateCheckpointSpec::create(10, 25, "l", 0).error().message,
            "image_bytes must be a positive integer");
}

// An artifact's units_per_checkpoint is read, not derived again: the count
// the image spans is taken, any other is refused (a crafted manifest).
TEST(PageUnitStore, SpecTakesTheManifestsUnitsOnlyWhenTheImageSpansThem) {
  auto read = PagedStateCheckpointSpec::create(10, 25, "l", 21, 3);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->unitsPerCheckpoint(), 3);
  auto fewer = PagedStateCheckpointSpec::create(10, 25, "l", 21, 2);
  ASSERT_FALSE(fewer.ok());
  EXPECT_EQ(fewer.error().message,
            "units_per_checkpoint 2 is not the 3 PAGE units of 10 B that an "
            "image of 21 B spans");
  EXPECT_FALSE(PagedStateCheckpointSpec::create(10, 25, "l", 21, 4).ok());
}

TEST(PageUnitStore, CopyingIsInvisibleUntilTheBatchRan) {
  StoreFixture f;
  auto op = f.store.beginStore(101, SlotIndex(3));
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->unitIds.size(), 3u);
  EXPECT_EQ(op->imageBytes, 25);
  EXPECT_FALSE(f.store.lookup(101).valid());
  EXPECT_TRUE(f.store.containsOrPending(101));
  EXPECT_EQ(f.pool.numFree(), 17);
  for (BlockId u : op->unitIds)
    EXPECT_EQ(f.pool.state(u), BlockState::RawUnit);
  f.store.completeInflight();
  EXPECT_TRUE(f.store.lookup(101).valid());
  EXPECT_TRUE(f.store.checkInvariants().ok());
}

TEST(PageUnitStore, AnUntakenRestoreKeepsItsPin) {
  StoreFixture f;
  CheckpointId id = f.ready(101);
  ASSERT_TRUE(f.store.beginRestore(101, SlotIndex(4)).has_value());
  f.store.completeInflight(); // an empty batch: the restore was not issued
  EXPECT_EQ(f.store.record(id)->pinCount, 1);
  auto ops = f.store.takeCheckpointOps();
  EXPECT_EQ(ops.restores.size(), 1u);
  f.store.completeInflight();
  EXPECT_EQ(f.store.record(id)->pinCount, 0);
}

TEST(PageUnitStore, CancelQueuedRestoreDropsOpAndPin) {
  StoreFixture f;
  CheckpointId id = f.ready(101);
  ASSERT_TRUE(f.store.beginRestore(101, SlotIndex(4)).has_value());
  f.store.unindex(101);
  EXPECT_TRUE(f.store.record(id).has_value()); // pinned
  f.store.cancelQueuedRestore(SlotIndex(4));
  EXPECT_TRUE(f.store.takeRestoreOps().empty());
  EXPECT_FALSE(f.store.record(id).has_value());
  EXPECT_EQ(f.pool.numFree(), 20);
}

TEST(PageUnitStore, UnindexDuringCopyWaitsForTheWriter) {
  StoreFixture f;
  ASSERT_TRUE(f.store.beginStore(101, SlotIndex(3)).has_value());
  CheckpointId id(0);
  EXPECT_TRUE(f.store.unindex(101));
  EXPECT_EQ(f.store.record(id)->state, CheckpointState::Evicting);
  EXPECT_EQ(f.pool.numFree(), 17);
  EXPECT_FALSE(f.store.unindex(101));
  // Stored again while the first writer is in flight: the new one wins.
  ASSERT_TRUE(f.store.beginStore(101, SlotIndex(5)).has_value());
  f.store.completeInflight();
  EXPECT_FALSE(f.store.record(id).has_value());
  EXPECT_EQ(f.store.lookup(101), CheckpointId(1));
  EXPECT_EQ(f.pool.numFree(), 17);
  EXPECT_TRUE(f.store.checkInvariants().ok());
}

TEST(PageUnitStore, ProtectedHitIsExcludedFromReclaim) {
  StoreFixture f(6);
  f.ready(101);
  EXPECT_EQ(f.pool.numFree(), 3);
  EXPECT_TRUE(f.store.hasAvailableUnits(6));
  EXPECT_FALSE(f.store.hasAvailableUnits(6, BlockHash(101)));
  EXPECT_EQ(f.store.reclaimableUnits(), 3);
}

TEST(PageUnitStore, ClearReleasesReadyButDefersAPinnedReader) {
  StoreFixture f;
  CheckpointId first = f.ready(101), second = f.ready(202);
  ASSERT_TRUE(f.store.beginRestore(202, SlotIndex(4)).has_value());
  f.store.clear();
  EXPECT_FALSE(f.store.lookup(101).valid());
  EXPECT_FALSE(f.store.lookup(202).valid());
  EXPECT_FALSE(f.store.record(first).has_value());
  EXPECT_TRUE(f.store.record(second).has_value());
  EXPECT_EQ(f.store.takeRestoreOps().size(), 1u);
  f.store.completeInflight();
  EXPECT_EQ(f.store.numRecords(), 0);
  EXPECT_EQ(f.pool.numFree(), 20);
}

TEST(PageUnitStore, RefusalEvictsNothing) {
  // 50 one-unit images, live KV holds the rest: asking for more than the
  // cache could ever free must not spend the cache on the way to "no".
  StoreFixture f(100, 10, 10, 10);
  for (BlockHash h = 0; h < 50; ++h)
    ASSERT_TRUE(f.store.beginStore(h, SlotIndex(0)).has_value());
  f.store.completeInflight();
  ASSERT_TRUE(
      f.pool.reserveUnits(f.pool.numFree(), UnitOwner{"live-kv", 0}).ok());
  EXPECT_FALSE(f.store.ensureFreeUnits(51));
  EXPECT_EQ(f.store.evictions(), 0);
  EXPECT_EQ(f.store.numRecords(), 50);
  // A reachable count recycles the oldest only.
  EXPECT_TRUE(f.store.beginStore(999, SlotIndex(0)).has_value());
  EXPECT_EQ(f.store.evictions(), 1);
  EXPECT_FALSE(f.store.lookup(0).valid());
  EXPECT_TRUE(f.store.lookup(1).valid());
}

TEST(PageUnitStore, RestoreRefreshesLru) {
  StoreFixture f(9); // three images fill it
  f.ready(1);
  f.ready(2);
  f.ready(3);
  ASSERT_TRUE(f.store.beginRestore(1, SlotIndex(0)).has_value());
  f.store.takeRestoreOps();
  f.store.completeInflight(); // pin gone, 1 is most recent now
  ASSERT_TRUE(f.store.beginStore(4, SlotIndex(0)).has_value());
  EXPECT_TRUE(f.store.lookup(1).valid());
  EXPECT_FALSE(f.store.lookup(2).valid());
}

TEST(PageUnitStore, PinnedAndCopyingAreNotEvictable) {
  StoreFixture f(6);
  f.ready(1);
  ASSERT_TRUE(f.store.beginStore(2, SlotIndex(0)).has_value());   // COPYING
  ASSERT_TRUE(f.store.beginRestore(1, SlotIndex(1)).has_value()); // pinned
  EXPECT_EQ(f.pool.numFree(), 0);
  EXPECT_FALSE(f.store.ensureFreeUnits(1));
  EXPECT_FALSE(f.store.beginStore(3, SlotIndex(0)).has_value());
}

TEST(PageUnitStore, IntentsKeepTheLatestPerRequesterAndCount) {
  StoreFixture f(7); // room for two images
  f.store.requestCheckpoint(/*requester=*/1, 10, SlotIndex(0));
  f.store.requestCheckpoint(1, 11, SlotIndex(0)); // replaces 10
  f.store.requestCheckpoint(2, 20, SlotIndex(1));
  f.store.requestCheckpoint(3, 30, SlotIndex(2)); // no room: dropped
  auto ops = f.store.takeCheckpointOps();
  ASSERT_EQ(ops.stores.size(), 2u);
  EXPECT_EQ(ops.stores[0].srcSlot, SlotIndex(0));
  EXPECT_EQ(ops.stores[1].srcSlot, SlotIndex(1));
  EXPECT_EQ(f.store.checkpointsKept(), 2);
  EXPECT_EQ(f.store.checkpointsDropped(), 1);
  f.store.completeInflight();
  EXPECT_TRUE(f.store.contains(11));
  EXPECT_FALSE(f.store.contains(10));
  // A READY hash is skipped, not counted.
  f.store.requestCheckpoint(4, 11, SlotIndex(3));
  EXPECT_TRUE(f.store.takeCheckpointOps().stores.empty());
  EXPECT_EQ(f.store.checkpointsKept() + f.store.checkpointsDropped(), 3);
}

TEST(PageUnitStore, RandomLifecycleKeepsInvariants) {
  for (uint32_t seed : {7u, 8u, 9u}) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    StoreFixture f(40, 10, 25, 25);
    // Live KV competes for the same pool.
    std::vector<BlockId> live;
    for (int step = 0; step < 30000; ++step) {
      BlockHash h = BlockHash(pick(0, 30));
      switch (pick(0, 9)) {
      case 0:
      case 1:
        (void)f.store.beginStore(h, SlotIndex(pick(0, 7)));
        break;
      case 2:
        (void)f.store.beginRestore(h, SlotIndex(pick(0, 7)));
        break;
      case 3:
        f.store.takeRestoreOps();
        break;
      case 4:
        f.store.completeInflight();
        break;
      case 5:
        f.store.unindex(h);
        break;
      case 6:
        if (pick(0, 20) == 0)
          f.store.clear();
        else
          f.store.cancelQueuedRestore(SlotIndex(pick(0, 7)));
        break;
      case 7:
        if (f.store.ensureFreeUnits(1)) {
          BlockId b = f.pool.pop().take();
          ASSERT_TRUE(f.pool.allocate(b).ok());
          live.push_back(b);
        }
        break;
      case 8:
        if (!live.empty()) {
          ASSERT_TRUE(f.pool.free(live.back()).ok());
          live.pop_back();
        }
        break;
      case 9: {
        int64_t n = pick(0, 12);
        bool avail = f.store.hasAvailableUnits(n);
        int64_t evBefore = f.store.evictions();
        bool got = f.store.ensureFreeUnits(n);
        ASSERT_EQ(avail, got);
        if (!got)
          ASSERT_EQ(f.store.evictions(), evBefore);
        else
          ASSERT_GE(f.pool.numFree(), n);
        break;
      }
      }
      Status inv = f.store.checkInvariants();
      ASSERT_TRUE(inv.ok())
          << "seed " << seed << " step " << step << ": " << inv.error().message;
      ASSERT_TRUE(f.store.health().ok());
    }
  }
}

} // namespace
