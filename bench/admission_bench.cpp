// Request admission through the cache manager: can_allocate + allocate
// (+ deallocate, untimed) of one prompt whose prefix is cached, for 1k- and
// 32k-token prompts at block sizes 16 (Qwen-style) and 256 (DeepSeek-V4).
// "first" hashes the prompt inside the timed region (a request's first
// admission attempt); "cached" re-admits with the request's hashes already
// computed (every later attempt: hashes are kept on the request).
#include "poolrt/BlockHash.h"
#include "poolrt/CacheManager.h"

#include <benchmark/benchmark.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace poolrt;

namespace {

std::unique_ptr<CacheManager> warmManager(int64_t blockSize, int64_t tokens,
                                          bool stateful, int64_t poolBlocks) {
  CacheManagerConfig c;
  c.blockSize = blockSize;
  c.numBlocks = std::max(poolBlocks, 4 * tokens / blockSize + 64);
  c.numGroups = stateful ? 16 : 0;
  c.transfer = stateful ? StateTransfer::fork(1).value() : StateTransfer::none();
  // Four rungs per prompt, so a stateful prompt resumes from the last one.
  int64_t rung = tokens / 4 / blockSize * blockSize;
  c.policy.checkpointIntervalTokens = stateful ? rung : 0;
  auto m = CacheManager::create(c).take();
  // Publish the prompt once, so admission finds a cached prefix.
  Request r;
  for (int64_t i = 0; i < tokens; ++i)
    r.tokens.push_back(i * 7 + 1);
  r.numPromptTokens = tokens;
  int64_t hit = m->canAllocate(r);
  (void)m->allocate(r, hit);
  // Prefill in rung-sized chunks (each forward ends on a rung and says how
  // long the next one is, so the fork class keeps its checkpoints).
  for (int64_t start = 0; start < tokens; start += rung) {
    int64_t n = std::min(rung, tokens - start);
    int64_t next = std::min(rung, tokens - start - n);
    (void)m->hashBlocks(r, n, start, next);
    r.numCachedTokens = start + n;
  }
  (void)m->deallocate(r);
  m->completePreviousStateBatch();
  m->completePreviousStateBatch();
  return m;
}

// kind: 0 cached (hashes and the last attempt's hits kept on the request),
// 1 first (hashes computed inside the timed region), 2 probed (hashes and
// fingerprints kept, the hits not: every block found through the index,
// as for a new request whose prefix another one left cached, once hashed),
// 3 probed cold: as 2, with the caches flushed before each admission
// (untimed: 64 MiB written), so the index and the block records come from
// memory, as after a step of other work; 4 cached cold: as 0, flushed;
// 5 cached release: as 0, the deallocate that follows timed instead.
// poolBlocks: the pool's size where larger than four prompts' worth (a
// serving pool's index and block records no longer fit in the caches).
void admission(benchmark::State &state, int kind, bool stateful, int64_t poolBlocks = 0) {
  const bool firstAttempt = kind == 1;
  int64_t tokens = state.range(0), blockSize = state.range(1);
  auto m = warmManager(blockSize, tokens, stateful, poolBlocks);
  Request r;
  for (int64_t i = 0; i < tokens; ++i)
    r.tokens.push_back(i * 7 + 1);
  r.numPromptTokens = tokens;
  int64_t hits = 0;
  std::vector<uint8_t> flush(kind == 3 || kind == 4 ? size_t(64) << 20 : 0);
  for (auto _ : state) {
    if (firstAttempt) {
      r.hashCache.clear();
      r.printCache.clear();
    }
    if (kind == 2 || kind == 3)
      r.hitHint.clear();
    if (kind == 3 || kind == 4) {
      for (size_t k = 0; k < flush.size(); k += 64)
        flush[k] = uint8_t(flush[k] + 1);
      benchmark::ClobberMemory();
    }
    // Manual timing: PauseTiming/ResumeTiming around the untimed part would
    // add a few hundred ns of their own to every iteration.
    auto t0 = std::chrono::steady_clock::now();
    int64_t hit = m->canAllocate(r);
    Status s = m->allocate(r, hit);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(s);
    hits += hit;
    Status d = m->deallocate(r);
    auto t2 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(d);
    // kind 5 times the release (deallocate) of the cached admission
    // instead: where work moves from admission to free, both show it.
    state.SetIterationTime(
        std::chrono::duration<double>(kind == 5 ? t2 - t1 : t1 - t0).count());
    m->completePreviousStateBatch();
    m->completePreviousStateBatch();
  }
  state.counters["hit_blocks"] = double(hits) / double(state.iterations());
}

// The hashing a first admission pays, against raw XXH64 over the same
// bytes (the prompt's int64 token ids) in the same run:
//   raw_xxh64   one XXH64 call over all of them (the roofline);
//   chain       the chained block hashes (poolrt::hashBlocks) under the
//               reference's scheme (xxh64: each block's XXH64 starts from
//               its parent's bytes) and the default one (xxh3: the parent
//               is the seed): a serial chain of 2,048 links at block 16;
//   prints      the collision fingerprints (tokenPrint, XXH3 of each
//               block's ids as int32), independent per block. Admission
//               computes them only for the blocks the index holds, so a
//               first admission pays the chain alone.
std::vector<int64_t> promptTokens(int64_t tokens) {
  std::vector<int64_t> t(static_cast<size_t>(tokens));
  for (int64_t i = 0; i < tokens; ++i)
    t[size_t(i)] = i * 7 + 1;
  return t;
}

void rawXxh64(benchmark::State &state) {
  auto t = promptTokens(state.range(0));
  for (auto _ : state)
    benchmark::DoNotOptimize(XXH64(t.data(), t.size() * sizeof(int64_t), 0));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(t.size() * 8));
}

void chain(benchmark::State &state, HashScheme scheme) {
  auto t = promptTokens(state.range(0));
  size_t bs = size_t(state.range(1)), n = t.size() / bs;
  std::vector<BlockHash> out(n);
  for (auto _ : state) {
    hashBlocks(scheme, std::nullopt, t.data(), bs, n, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(t.size() * 8));
}

void prints(benchmark::State &state) {
  auto t = promptTokens(state.range(0));
  size_t bs = size_t(state.range(1)), n = t.size() / bs;
  std::vector<int32_t> block(bs);
  std::vector<uint64_t> out(n);
  for (auto _ : state) {
    for (size_t b = 0; b < n; ++b) {
      for (size_t k = 0; k < bs; ++k)
        block[k] = int32_t(t[b * bs + k]);
      out[b] = tokenPrint(block.data(), bs);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(t.size() * 8));
}


// The floor of a cached admission's per-block work, with nothing of the
// cache manager around it: the same 32-byte block record and 8-byte LRU
// links as BlockPool, the hit run's ids in the order the pool gave them,
// and only what any two-call admission (can_allocate, then allocate) must
// do a block: the match reads the record (hash, fingerprint, count word,
// state) and compares it with the request's; the claim reads it again,
// takes the block out of the LRU (the run sits there as one span, as a run
// freed together does) and writes its count and state; the ids go into the
// block table by one memcpy. No bounds checks, no index probes, no
// status. What this costs a block on a machine is the lower bound for the
// real admission's per-block cost there (issue 17, goal 3).
//
// unlink: the claim also takes each block out of the LRU list, as
// BlockPool did before it left run-claimed blocks linked as stale members
// (the floor_unlink cases keep that design's floor for comparison).
struct FloorMeta {
  uint64_t hash, print;
  uint64_t word; // count, indexed, has tokens, as BlockPool::matchWord
  int32_t refCount;
  uint8_t state; // 0 cached, 1 held
};
static_assert(sizeof(FloorMeta) == 32);
struct FloorLink {
  int32_t prev, next;
};

void admissionFloor(benchmark::State &state, bool doMatch, bool doClaim, bool unlink) {
  size_t n = size_t(state.range(0) / state.range(1)) - 1; // the last block is never a hit
  size_t cap = 4 * n + 64;
  std::vector<FloorMeta> meta(cap);
  std::vector<FloorLink> links(cap, FloorLink{-1, -1});
  std::vector<BlockId> ids(n), table(n);
  std::vector<BlockHash> hashes(n);
  std::vector<uint64_t> prints(n);
  const uint64_t want = 16 | (1ull << 32) | (1ull << 40);
  for (size_t i = 0; i < n; ++i) {
    int32_t b = int32_t(cap - 1 - i); // a free list hands out ids top down
    ids[i] = BlockId(b);
    hashes[i] = 0x9e3779b97f4a7c15ull * (i + 1);
    prints[i] = hashes[i] ^ 0x5bd1e995u;
    meta[size_t(b)] = FloorMeta{hashes[i], prints[i], want, 0, 0};
  }
  auto relink = [&] { // the run back in the LRU as one span, freed in order
    for (size_t i = 0; i < n; ++i) {
      int32_t b = ids[i].value;
      links[size_t(b)] = {i ? ids[i - 1].value : -1, i + 1 < n ? ids[i + 1].value : -1};
      meta[size_t(b)].refCount = 0;
      meta[size_t(b)].state = 0;
    }
  };
  relink();
  int32_t head = ids[0].value, tail = ids[n - 1].value;
  size_t matched = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    // Match: eight lanes folded, one branch per eight.
    size_t i = 0, live = 0;
    if (!doMatch)
      i = n;
    for (; doMatch && i + 8 <= n; i += 8) {
      uint64_t bad = 0;
      for (size_t j = 0; j < 8; ++j) {
        const FloorMeta &m = meta[size_t(ids[i + j].value)];
        bad |= (m.hash ^ hashes[i + j]) | (m.print ^ prints[i + j]) | (m.word ^ want);
        live += m.state;
      }
      if (bad)
        break;
    }
    for (; doMatch && i < n; ++i) {
      const FloorMeta &m = meta[size_t(ids[i].value)];
      if ((m.hash ^ hashes[i]) | (m.print ^ prints[i]) | (m.word ^ want))
        break;
      live += m.state;
    }
    benchmark::DoNotOptimize(live);
    // Claim: re-check, unlink (span bookkeeping: consecutive list neighbours
    // leave as one span, its outer links written once),
    // count and state.
    size_t c = 0;
    int32_t before = -1, after = -1;
    bool open = false;
    for (; doClaim && c < i; ++c) {
      int32_t b = ids[c].value;
      FloorMeta &m = meta[size_t(b)];
      if (m.hash != hashes[c] || m.state != 0)
        break;
      if (!unlink) {
        m.refCount = 1;
        m.state = 1;
        continue;
      }
      int32_t p = links[size_t(b)].prev, nx = links[size_t(b)].next;
      if (open && b == after) {
        after = nx;
      } else if (open && b == before) {
        before = p;
      } else {
        open = true;
        before = p;
        after = nx;
      }
      links[size_t(b)] = {-1, -1};
      m.refCount = 1;
      m.state = 1;
    }
    if (open) {
      if (before >= 0) links[size_t(before)].next = after; else head = after;
      if (after >= 0) links[size_t(after)].prev = before; else tail = before;
    }
    if (!doClaim)
      c = i;
    std::memcpy(table.data(), ids.data(), c * sizeof(BlockId));
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(table.data());
    benchmark::DoNotOptimize(head);
    benchmark::DoNotOptimize(tail);
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    matched += c;
    relink();
    head = ids[0].value;
    tail = ids[n - 1].value;
  }
  state.counters["hit_blocks"] = double(matched) / double(state.iterations());
}

void popAfterRunClaim(benchmark::State &state) {
  const int32_t claimed = int32_t(state.range(0)), n = 2 * claimed + 2;
  std::vector<BlockId> ids(static_cast<size_t>(claimed));
  std::vector<BlockHash> hashes(static_cast<size_t>(n));
  for (int32_t b = 0; b < n; ++b)
    hashes[size_t(b)] = BlockHash(0x9e3779b97f4a7c15ull * uint64_t(b + 1));
  for (int32_t b = 0; b < claimed; ++b)
    ids[size_t(b)] = BlockId(b);
  for (auto _ : state) {
    BlockPool pool = BlockPool::create(n).take();
    for (int32_t b = 0; b < n; ++b) {
      (void)pool.allocate(BlockId(b));
      (void)pool.publish(BlockId(b), hashes[size_t(b)], nullptr, 0);
    }
    for (int32_t b = 0; b < n; ++b)
      (void)pool.free(BlockId(b)); // the LRU list: 0, 1, ..., n - 1
    if (pool.claimIndexedRun(ids.data(), hashes.data(), ids.size()) != ids.size())
      state.SkipWithError("the run claim did not take the whole run");
    auto t0 = std::chrono::steady_clock::now();
    BlockId v = pool.takeFree();
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(v);
    if (v != BlockId(claimed))
      state.SkipWithError("the pop did not take the first unclaimed block");
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}

} // namespace

BENCHMARK(rawXxh64)->Name("hash/raw_xxh64")->Arg(32768);
BENCHMARK_CAPTURE(chain, xxh64, HashScheme::Xxh64)->Name("hash/chain_xxh64")->Args({32768, 16})->Args({32768, 256});
BENCHMARK_CAPTURE(chain, xxh3, HashScheme::Xxh3)->Name("hash/chain_xxh3")->Args({32768, 16})->Args({32768, 256});
BENCHMARK(prints)->Name("hash/prints")->Args({32768, 16})->Args({32768, 256});

BENCHMARK_CAPTURE(admission, stateless_first, 1, false)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();
BENCHMARK_CAPTURE(admission, stateless_cached, 0, false)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();
BENCHMARK_CAPTURE(admission, stateless_cached_release, 5, false)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();
BENCHMARK_CAPTURE(admission, stateless_probed, 2, false)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();
// The same in a pool of 2^20 blocks (64 MiB of index, 32 MiB of block
// records: an H200's KV pool at block 16 holds about that many).
BENCHMARK_CAPTURE(admission, stateless_probed_1m, 2, false, int64_t(1) << 20)
    ->Args({32768, 16})->UseManualTime();
BENCHMARK_CAPTURE(admission, stateless_cached_1m, 0, false, int64_t(1) << 20)
    ->Args({32768, 16})->UseManualTime();
BENCHMARK_CAPTURE(admission, stateless_probed_cold_1m, 3, false, int64_t(1) << 20)
    ->Args({32768, 16})->Args({1024, 16})->Iterations(300)->UseManualTime();
BENCHMARK_CAPTURE(admission, stateless_cached_cold_1m, 4, false, int64_t(1) << 20)
    ->Args({32768, 16})->Args({1024, 16})->Iterations(300)->UseManualTime();
BENCHMARK_CAPTURE(admission, fork_cached, 0, true)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();

// floor: both; floor_match / floor_claim: one pass alone (+ the memcpy);
// _unlink: the claim unlinks each block from the LRU list as well.
BENCHMARK_CAPTURE(admissionFloor, floor, true, true, false)->Name("admission/floor")
    ->Args({1024, 16})->Args({32768, 16})->UseManualTime();
BENCHMARK_CAPTURE(admissionFloor, floor_match, true, false, false)->Name("admission/floor_match")
    ->Args({1024, 16})->Args({32768, 16})->UseManualTime();
BENCHMARK_CAPTURE(admissionFloor, floor_claim, false, true, false)->Name("admission/floor_claim")
    ->Args({1024, 16})->Args({32768, 16})->UseManualTime();
BENCHMARK_CAPTURE(admissionFloor, floor_unlink, true, true, true)->Name("admission/floor_unlink")
    ->Args({32768, 16})->UseManualTime();
BENCHMARK_CAPTURE(admissionFloor, floor_claim_unlink, false, true, true)
    ->Name("admission/floor_claim_unlink")->Args({32768, 16})->UseManualTime();
// What the stale members cost later: one pop after a run claim took the
// LRU list's first `range(0)` blocks (a pool of twice that, every block
// cached in id order): the pop drops them all before it finds a victim.
// Each claim pays for its stale member once, here or at its next free.
BENCHMARK(popAfterRunClaim)->Name("pool/pop_after_run_claim")
    ->Arg(1)->Arg(2047)->Iterations(2000)->UseManualTime();

BENCHMARK_MAIN();
