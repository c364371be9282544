//===- model_check.cpp - The CacheManager model check, long runs ----------===//
//
//   pool-model-check [--ops N] [--seed S] [--config NAME]
// runs N operations (default 10^6), split evenly over the three
// configurations of test/Unit/CacheModelCheck.h (or only NAME: plain-kv,
// fork-gdn, paged-row-space) in runs of 10^4 operations from seeds S, S+1,
// ...; prints the op counts and exits 1 on the first failure (with its
// configuration, seed, step and the last operations: `--config C --seed X
// --ops 10000` replays it).
//
//===----------------------------------------------------------------------===//

#include "test/Unit/CacheModelCheck.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace poolc_model;

int main(int argc, char **argv) {
  int64_t ops = 1000000;
  uint64_t seed = 1;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ops") && i + 1 < argc)
      ops = std::strtoll(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--config") && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--ops N] [--seed S] [--config NAME]\n",
                   argv[0]);
      return 2;
    }
  }
  const int64_t runOps = 10000;
  auto t0 = std::chrono::steady_clock::now();
  int64_t done = 0;
  std::vector<ModelConfig> cfgs;
  for (ModelConfig cfg :
       {ModelConfig::PlainKv, ModelConfig::ForkGdn, ModelConfig::PagedRowSpace})
    if (only.empty() || only == configName(cfg))
      cfgs.push_back(cfg);
  if (cfgs.empty()) {
    std::fprintf(stderr, "unknown configuration '%s'\n", only.c_str());
    return 2;
  }
  for (ModelConfig cfg : cfgs) {
    int64_t n = int64_t(cfgs.size());
    int64_t share = ops / n + (cfg == cfgs.front() ? ops % n : 0);
    OpCounts total;
    int64_t runs = 0;
    for (int64_t left = share; left > 0; left -= runOps, ++seed, ++runs) {
      Outcome o = runModelCheck(cfg, seed, std::min(left, runOps));
      done += o.steps;
      if (!o.ok) {
        std::fprintf(stderr, "%s", o.report.c_str());
        return 1;
      }
      const OpCounts &c = o.counts;
      total.admits += c.admits;
      total.refusals += c.refusals;
      total.hits += c.hits;
      total.hitBlocks += c.hitBlocks;
      total.forwards += c.forwards;
      total.chunks += c.chunks;
      total.decodes += c.decodes;
      total.specCommits += c.specCommits;
      total.preemptions += c.preemptions;
      total.frees += c.frees;
      total.boundaryMoves += c.boundaryMoves;
      total.boundaryRefused += c.boundaryRefused;
      total.stores += c.stores;
      total.restores += c.restores;
      total.forkCheckpoints += c.forkCheckpoints;
      total.decodeAppendPreempts += c.decodeAppendPreempts;
    }
    std::printf("%s: %lld ops in %lld runs: %s\n", configName(cfg),
                (long long)share, (long long)runs, total.str().c_str());
  }
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf("OK: %lld operations checked in %.1f s (last seed %llu)\n",
              (long long)done, s, (unsigned long long)(seed - 1));
  return 0;
}
