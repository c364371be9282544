//===- block_pool_bench.cpp - BlockPool on a prefix-sharing trace ---------===//
//
// Replays the trace written by shared/bench/make_prefix_trace.py against
// poolrt::BlockPool with the driver logic that script fixes (the same as
// bench/reference_block_pool.py, so the two numbers are comparable):
//
//   admit:  for each hash h: b = lookup(h); if b >= 0: claim(b)
//           else: b = pop(); allocate(b); publish(b, h)
//           (pop finding no free block refuses the request; the blocks it
//           took are freed, in order)
//   finish: free each block of the request, in order.
//
// Pool operations counted: lookup, claim, pop (a failed one too), allocate,
// publish, free. The trace is parsed before timing; each iteration replays
// it on a fresh pool. Reported: ns_per_op (the counter is seconds per op).
//
// usage: pool-bench --trace=FILE [--num-blocks=N] [benchmark flags]
// Before the benchmarks it prints ops/hits/refused and a checksum of every
// id taken, in order, from an untimed replay; equal to the Python driver's
// line, it shows both pools handed out the same blocks.
//
//===----------------------------------------------------------------------===//

#include "poolrt/BlockPool.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace poolrt;

namespace {

struct Event {
  bool admit;
  int32_t req;
  uint32_t first; // admit: hashes[first, first + count)
  uint32_t count;
};

struct Trace {
  std::vector<Event> events;
  std::vector<BlockHash> hashes;
  std::vector<uint32_t> requestFirst; // req -> first slot in `hashes`
};

Trace gTrace;
int64_t gNumBlocks = 8192;

bool loadTrace(const char *path, Trace &t) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    int64_t req;
    ss >> word >> req;
    Event e{word == "admit", int32_t(req), uint32_t(t.hashes.size()), 0};
    if (e.admit) {
      unsigned long long h;
      while (ss >> h) {
        t.hashes.push_back(BlockHash(h));
        ++e.count;
      }
      if (size_t(req) >= t.requestFirst.size()) {
        t.requestFirst.resize(size_t(req) + 1);
      }
      t.requestFirst[size_t(req)] = e.first;
    }
    t.events.push_back(e);
  }
  return true;
}

struct Tally {
  int64_t ops = 0, hits = 0, refused = 0;
  uint64_t checksum = 0;
};

/// One replay. `taken` is scratch parallel to the trace's hashes: request r
/// keeps its blocks at taken[requestFirst[r] ...].
template <bool Checked>
void replay(BlockPool &pool, const Trace &t, std::vector<BlockId> &taken,
            std::vector<uint32_t> &held, Tally &tally) {
  int64_t ops = 0;
  for (const Event &e : t.events) {
    if (e.admit) {
      BlockId *out = taken.data() + e.first;
      uint32_t n = 0;
      bool ok = true;
      for (uint32_t i = 0; i < e.count; ++i) {
        BlockHash h = t.hashes[e.first + i];
        BlockId b = pool.lookup(h);
        if (b.valid()) {
          (void)pool.claim(b);
          ops += 2;
          if (Checked)
            ++tally.hits;
        } else {
          Result<BlockId> p = pool.pop();
          if (!p.ok()) {
            ops += 2;
            ok = false;
            break;
          }
          b = *p;
          (void)pool.allocate(b);
          (void)pool.publish(b, h);
          ops += 4;
        }
        out[n++] = b;
        if (Checked)
          tally.checksum =
              tally.checksum * 1099511628211ull + uint64_t(b.value) + 1;
      }
      if (ok) {
        held[size_t(e.req)] = n;
      } else {
        if (Checked)
          ++tally.refused;
        for (uint32_t i = 0; i < n; ++i)
          (void)pool.free(out[i]);
        ops += n;
      }
    } else {
      const BlockId *blocks = taken.data() + t.requestFirst[size_t(e.req)];
      uint32_t n = held[size_t(e.req)];
      for (uint32_t i = 0; i < n; ++i)
        (void)pool.free(blocks[i]);
      ops += n;
      held[size_t(e.req)] = 0;
    }
  }
  tally.ops = ops;
}

void BM_PrefixTraceReplay(benchmark::State &state) {
  std::vector<BlockId> taken(gTrace.hashes.size());
  std::vector<uint32_t> held(gTrace.requestFirst.size(), 0);
  Tally tally;
  for (auto _ : state) {
    state.PauseTiming();
    BlockPool pool = BlockPool::create(gNumBlocks).take();
    state.ResumeTiming();
    replay<false>(pool, gTrace, taken, held, tally);
    benchmark::DoNotOptimize(pool.numFree());
    benchmark::ClobberMemory();
  }
  state.counters["ops"] = double(tally.ops);
  state.counters["ns_per_op"] = benchmark::Counter(
      double(tally.ops), benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_PrefixTraceReplay)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

int main(int argc, char **argv) {
  const char *tracePath = nullptr;
  std::vector<char *> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--trace=", 8) == 0)
      tracePath = argv[i] + 8;
    else if (std::strncmp(argv[i], "--num-blocks=", 13) == 0)
      gNumBlocks = std::atoll(argv[i] + 13);
    else
      rest.push_back(argv[i]);
  }
  if (!tracePath) {
    std::fprintf(stderr, "usage: pool-bench --trace=FILE [--num-blocks=N] "
                         "[benchmark flags]\n");
    return 2;
  }
  if (!loadTrace(tracePath, gTrace)) {
    std::fprintf(stderr, "%s: error: cannot read the trace\n", tracePath);
    return 1;
  }
  auto pool = BlockPool::create(gNumBlocks);
  if (!pool.ok()) {
    std::fprintf(stderr, "error: %s\n", pool.error().message.c_str());
    return 1;
  }
  {
    BlockPool p = pool.take();
    std::vector<BlockId> taken(gTrace.hashes.size());
    std::vector<uint32_t> held(gTrace.requestFirst.size(), 0);
    Tally t;
    replay<true>(p, gTrace, taken, held, t);
    if (!p.invariantsHold()) {
      std::fprintf(stderr, "error: %s\n",
                   p.checkInvariants().error().message.c_str());
      return 1;
    }
    std::printf("c++: ops=%lld hits=%lld refused=%lld checksum=%llu\n",
                (long long)t.ops, (long long)t.hits, (long long)t.refused,
                (unsigned long long)t.checksum);
    std::fflush(stdout);
  }
  int n = int(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
