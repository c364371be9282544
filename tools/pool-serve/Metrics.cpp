//===- Metrics.cpp - pool-serve's counters as Prometheus text and JSON ----===//

#include "Metrics.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <sstream>

namespace pool {
namespace serve {

using poolrt::serve::EngineSnapshot;

namespace {

using Getter = std::function<int64_t(const EngineSnapshot &)>;

struct Sample {
  const char *labels; // without the rank; nullptr: none
  Getter get;
};

struct Family {
  const char *name, *type, *help;
  std::vector<Sample> samples;
};

#define V(member) [](const EngineSnapshot &s) { return int64_t(s.member); }

const std::vector<Family> &families() {
  static const std::vector<Family> list = {
      {"prefix_cache_queries_total", "counter",
       "Prompt tokens looked up in the prefix cache at admission.",
       {{nullptr, V(prefixQueryTokens)}}},
      {"prefix_cache_hits_total", "counter",
       "Prompt tokens served from the prefix cache at admission.",
       {{nullptr, V(prefixHitTokens)}}},
      {"tier_lookups_total", "counter", "Admissions that looked the offload tier up.",
       {{nullptr, V(tierLookups)}}},
      {"tier_hit_tokens_total", "counter", "Prompt tokens loaded from the offload tier.",
       {{nullptr, V(tierHitTokens)}}},
      {"tier_loads_total", "counter", "Tier loads that did not land, by why.",
       {{"outcome=\"failed\"", V(tierLoadsFailed)},
        {"outcome=\"late\"", V(tierLoadsLate)},
        {"outcome=\"refused\"", V(tierObjectsRefused)}}},
      {"tier_stores_total", "counter", "Tier stores, by outcome.",
       {{"outcome=\"queued\"", V(tierStoresQueued)},
        {"outcome=\"written\"", V(tierStoresDone)},
        {"outcome=\"failed\"", V(tierStoresFailed)},
        {"outcome=\"refused\"", V(tierStoresRefused)}}},
      {"tier_bytes_total", "counter", "Bytes moved to and from the offload tier.",
       {{"direction=\"stored\"", V(tierBytesStored)},
        {"direction=\"loaded\"", V(tierBytesLoaded)}}},
      {"requests_total", "counter", "Requests of the trace, by outcome so far.",
       {{"outcome=\"finished\"", V(requestsFinished)},
        {"outcome=\"refused\"", V(requestsRefused)}}},
      {"num_requests_running", "gauge", "Requests admitted and not finished.",
       {{nullptr, V(requestsRunning)}}},
      {"num_requests_waiting", "gauge", "Requests queued for admission.",
       {{nullptr, V(requestsWaiting)}}},
      {"num_preemptions_total", "counter", "Requests preempted by recompute.",
       {{nullptr, V(preemptions)}}},
      {"prompt_tokens_total", "counter", "Prompt tokens of admitted requests.",
       {{nullptr, V(promptTokens)}}},
      {"generation_tokens_total", "counter", "Tokens generated.",
       {{nullptr, V(generatedTokens)}}},
      {"forward_tokens_total", "counter", "Tokens the model forwarded.",
       {{nullptr, V(forwardTokens)}}},
      {"steps_total", "counter", "Scheduling steps that ran a batch.",
       {{"kind=\"prefill\"", V(prefillSteps)}, {"kind=\"decode\"", V(decodeSteps)}}},
      {"spec_decode_draft_tokens_total", "counter", "Draft tokens offered.",
       {{nullptr, V(draftsOffered)}}},
      {"spec_decode_accepted_tokens_total", "counter", "Draft tokens accepted.",
       {{nullptr, V(draftsAccepted)}}},
      {"blocks", "gauge", "PAGE blocks by state.",
       {{"state=\"total\"", V(blocksTotal)},
        {"state=\"free\"", V(blocksFree)},
        {"state=\"held\"", V(blocksUsed)},
        {"state=\"cached\"", V(blocksIndexed)}}},
      {"state_groups", "gauge", "Per-request state groups.",
       {{"state=\"total\"", V(groupsTotal)}, {"state=\"free\"", V(groupsFree)}}},
      {"state_maintenance_ops_total", "counter",
       "Generated-kernel launches that move state.",
       {{"op=\"image_store\"", V(imageStores)},
        {"op=\"image_restore\"", V(imageRestores)},
        {"op=\"group_copy\"", V(forkCopies)},
        {"op=\"block_copy\"", V(blockCopies)},
        {"op=\"slot_copy\"", V(slotCopies)}}},
      {"boundary_moves_total", "counter",
       "Moves of the block/slot boundary of a row-space model.",
       {{nullptr, V(boundaryMoves)}}},
  };
  return list;
}

#undef V

/// The cache manager's counters as families, from their one description
/// (CacheFunnel::describe, CacheStats::describe): members that share a
/// family become its samples, in order.
template <class Counters, class Member>
void addDescribed(std::vector<Family> &out, Member member) {
  Counters::describe([&](const poolrt::CounterKey &k, auto get) {
    if (out.empty() || std::string(out.back().name) != k.family)
      out.push_back({k.family, "counter", k.help, {}});
    out.back().samples.push_back(
        {k.label, [member, get](const EngineSnapshot &s) {
           return int64_t(get(s.*member));
         }});
  });
}

/// Every family pool-serve exports: the engine's own, then the cache
/// manager's described counters.
const std::vector<Family> &allFamilies() {
  static const std::vector<Family> list = [] {
    std::vector<Family> all = families();
    addDescribed<poolrt::CacheFunnel>(all, &EngineSnapshot::funnel);
    addDescribed<poolrt::CacheStats>(all, &EngineSnapshot::stats);
    return all;
  }();
  return list;
}

nlohmann::ordered_json cacheCounters(const EngineSnapshot &s) {
  nlohmann::ordered_json j;
  poolrt::CacheStats::describe(
      [&](const poolrt::CounterKey &k, auto get) { j[k.key] = get(s.stats); });
  poolrt::CacheFunnel::describe(
      [&](const poolrt::CounterKey &k, auto get) { j[k.key] = get(s.funnel); });
  j["blocks_total"] = s.blocksTotal;
  j["blocks_free"] = s.blocksFree;
  j["blocks_cached"] = s.blocksIndexed;
  j["blocks_held"] = s.blocksUsed;
  j["groups_total"] = s.groupsTotal;
  j["groups_free"] = s.groupsFree;
  return j;
}

} // namespace

std::string prometheusText(const std::vector<EngineSnapshot> &ranks) {
  std::ostringstream out;
  for (const Family &f : allFamilies()) {
    out << "# HELP poolserve:" << f.name << " " << f.help << "\n"
        << "# TYPE poolserve:" << f.name << " " << f.type << "\n";
    for (size_t r = 0; r < ranks.size(); ++r)
      for (const Sample &s : f.samples) {
        out << "poolserve:" << f.name << "{rank=\"" << r << "\"";
        if (s.labels)
          out << "," << s.labels;
        out << "} " << s.get(ranks[r]) << "\n";
      }
  }
  return out.str();
}

std::string cacheStatsJson(const std::vector<EngineSnapshot> &ranks) {
  EngineSnapshot sum;
  for (const EngineSnapshot &s : ranks)
    sum += s;
  nlohmann::ordered_json j;
  j["ranks"] = ranks.size();
  const nlohmann::ordered_json total = cacheCounters(sum);
  for (auto it = total.begin(); it != total.end(); ++it)
    j[it.key()] = it.value();
  nlohmann::ordered_json per = nlohmann::ordered_json::array();
  for (const EngineSnapshot &s : ranks)
    per.push_back(cacheCounters(s));
  j["per_rank"] = per;
  return j.dump(2) + "\n";
}

} // namespace serve
} // namespace pool
