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

using namespace poolrt;

namespace {

std::unique_ptr<CacheManager> warmManager(int64_t blockSize, int64_t tokens,
                                          bool stateful) {
  CacheManagerConfig c;
  c.blockSize = blockSize;
  c.numBlocks = 4 * tokens / blockSize + 64;
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

void admission(benchmark::State &state, bool firstAttempt, bool stateful) {
  int64_t tokens = state.range(0), blockSize = state.range(1);
  auto m = warmManager(blockSize, tokens, stateful);
  Request r;
  for (int64_t i = 0; i < tokens; ++i)
    r.tokens.push_back(i * 7 + 1);
  r.numPromptTokens = tokens;
  int64_t hits = 0;
  for (auto _ : state) {
    if (firstAttempt) {
      r.hashCache.clear();
      r.printCache.clear();
    }
    // Manual timing: PauseTiming/ResumeTiming around the untimed part would
    // add a few hundred ns of their own to every iteration.
    auto t0 = std::chrono::steady_clock::now();
    int64_t hit = m->canAllocate(r);
    Status s = m->allocate(r, hit);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(s);
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    hits += hit;
    (void)m->deallocate(r);
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

} // namespace

BENCHMARK(rawXxh64)->Name("hash/raw_xxh64")->Arg(32768);
BENCHMARK_CAPTURE(chain, xxh64, HashScheme::Xxh64)->Name("hash/chain_xxh64")->Args({32768, 16})->Args({32768, 256});
BENCHMARK_CAPTURE(chain, xxh3, HashScheme::Xxh3)->Name("hash/chain_xxh3")->Args({32768, 16})->Args({32768, 256});
BENCHMARK(prints)->Name("hash/prints")->Args({32768, 16})->Args({32768, 256});

BENCHMARK_CAPTURE(admission, stateless_first, true, false)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();
BENCHMARK_CAPTURE(admission, stateless_cached, false, false)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();
BENCHMARK_CAPTURE(admission, fork_cached, false, true)
    ->Args({1024, 16})->Args({32768, 16})->Args({1024, 256})->Args({32768, 256})
    ->UseManualTime();

BENCHMARK_MAIN();
