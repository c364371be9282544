//===- Metrics.h - pool-serve's counters as Prometheus text and JSON -*- C++ -*-===//
//
// The names follow the style engines already scrape (vLLM's
// prefix_cache_queries / prefix_cache_hits in tokens, num_requests_running,
// num_preemptions), under the `poolserve:` prefix. Counters sum across
// ranks; /debug/cache_stats hands back counters, never rates, so a merge
// across ranks is a sum and the rates are derived once from it.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_SERVE_METRICS_H
#define POOL_SERVE_METRICS_H

#include "poolrt/serve/Engine.h"

#include <string>
#include <vector>

namespace pool {
namespace serve {

/// The Prometheus text exposition (format 0.0.4): every sample once per
/// rank, labelled rank="i" (a scraper sums over the label).
std::string prometheusText(const std::vector<poolrt::serve::EngineSnapshot> &ranks);
/// The cache counters as JSON: summed across ranks at the top level, and
/// each rank's under "per_rank".
std::string cacheStatsJson(const std::vector<poolrt::serve::EngineSnapshot> &ranks);

} // namespace serve
} // namespace pool

#endif
