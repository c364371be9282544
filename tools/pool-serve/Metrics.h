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

namespace pool {
namespace serve {

/// The Prometheus text exposition (format 0.0.4) of one snapshot.
std::string prometheusText(const poolrt::serve::EngineSnapshot &s);
/// The cache counters as JSON (ranks: 1).
std::string cacheStatsJson(const poolrt::serve::EngineSnapshot &s);

} // namespace serve
} // namespace pool

#endif
