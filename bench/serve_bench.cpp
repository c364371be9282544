// The host side of one serving step: scheduling plus the cache manager's
// work (completePreviousStateBatch, canAppend/appendSlots for every running
// request, hashDecodeBlocks after the forward, the maintenance ops taken),
// with 256 requests decoding on DeepSeek-V4-Flash. The reference model is
// off (ServeOptions::runModel = false) and the kernels' launches are timed
// apart, so the iteration time (manual) is what the host adds to a GPU
// step of about 20 ms.
//
//   pool-serve-bench --artifact=V4.poolpack [benchmark flags]
//
// The artifact: poolc models/deepseek-v4-flash-fp8.yaml --budget 64GiB
// --max-num-seqs 256 --targets host (bench/RESULTS.md names the run).
#include "poolrt/serve/Engine.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

using namespace poolrt;
using namespace poolrt::serve;

namespace {

std::string artifactPath;

void BM_DecodeStep256(benchmark::State &state) {
  auto artifact = readArtifactFile(artifactPath);
  if (!artifact.ok()) {
    state.SkipWithError(artifact.error().message.c_str());
    return;
  }
  auto dev = openDevice("host");
  ServeOptions o;
  o.runModel = false;
  o.maxNumSeqs = 256;
  o.maxBatchedTokens = 8192;
  auto engine = Engine::create(*artifact, **dev, o);
  if (!engine.ok()) {
    state.SkipWithError(engine.error().message.c_str());
    return;
  }
  Engine &e = **engine;
  // 256 requests: a shared 1024-token system prompt and a private
  // 1024-token tail each; outputs long enough never to finish here.
  Trace t;
  for (int i = 0; i < 256; ++i) {
    TraceRequest r;
    r.name = "r" + std::to_string(i);
    for (int64_t j = 0; j < 1024; ++j)
      r.prompt.push_back(syntheticToken(7, j));
    for (int64_t j = 0; j < 1024; ++j)
      r.prompt.push_back(syntheticToken(1000 + uint64_t(i), j));
    r.maxOutput = 1 << 20;
    t.requests.push_back(r);
  }
  e.submit(t);
  // Warm up: admit and prefill everything, then a few decode steps.
  int decodes = 0;
  while (decodes < 8) {
    auto more = e.step();
    if (!more.ok()) {
      state.SkipWithError(more.error().message.c_str());
      return;
    }
    if (!e.lastStep().first && e.lastStep().second == 256)
      ++decodes;
  }
  int64_t items = 0;
  for (auto _ : state) {
    size_t before = e.stepOverheadMicros().size();
    auto more = e.step();
    if (!more.ok() || e.stepOverheadMicros().size() != before + 1) {
      state.SkipWithError("step failed");
      return;
    }
    items += e.lastStep().second;
    state.SetIterationTime(e.stepOverheadMicros().back() * 1e-6);
  }
  EngineSnapshot s = e.snapshot();
  state.counters["running"] = double(s.requestsRunning);
  state.counters["decodes_per_step"] = double(items) / double(state.iterations());
  state.counters["blocks_total"] = double(s.blocksTotal);
  state.counters["blocks_free"] = double(s.blocksFree);
  state.counters["preemptions"] = double(s.preemptions);
  state.counters["checkpoints_kept"] = double(s.funnel.fates.kept);
}
// 2,000 steps: every request grows by 2,000 tokens (8 blocks), far from
// filling the pool, so every step decodes all 256 and nothing is preempted.
BENCHMARK(BM_DecodeStep256)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(2000)->Repetitions(3);

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--artifact=", 11) == 0)
      artifactPath = argv[i] + 11;
  if (artifactPath.empty()) {
    std::fprintf(stderr, "usage: %s --artifact=V4.poolpack [benchmark flags]\n", argv[0]);
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
