//===- Metrics.cpp - pool-serve's counters as Prometheus text and JSON ----===//

#include "Metrics.h"

#include <nlohmann/json.hpp>

#include <sstream>

namespace pool {
namespace serve {

namespace {

class Exposition {
public:
  void family(const char *name, const char *type, const char *help) {
    out << "# HELP poolserve:" << name << " " << help << "\n"
        << "# TYPE poolserve:" << name << " " << type << "\n";
    current = name;
  }
  void sample(int64_t v, const char *labels = nullptr) {
    out << "poolserve:" << current;
    if (labels)
      out << "{" << labels << "}";
    out << " " << v << "\n";
  }
  std::string str() const { return out.str(); }

private:
  std::ostringstream out;
  std::string current;
};

} // namespace

std::string prometheusText(const poolrt::serve::EngineSnapshot &s) {
  Exposition e;
  e.family("prefix_cache_queries_total", "counter",
           "Prompt tokens looked up in the prefix cache at admission.");
  e.sample(s.prefixQueryTokens);
  e.family("prefix_cache_hits_total", "counter",
           "Prompt tokens served from the prefix cache at admission.");
  e.sample(s.prefixHitTokens);
  e.family("requests_total", "counter", "Requests of the trace, by outcome so far.");
  e.sample(s.requestsFinished, "outcome=\"finished\"");
  e.sample(s.requestsRefused, "outcome=\"refused\"");
  e.family("num_requests_running", "gauge", "Requests admitted and not finished.");
  e.sample(s.requestsRunning);
  e.family("num_requests_waiting", "gauge", "Requests queued for admission.");
  e.sample(s.requestsWaiting);
  e.family("num_preemptions_total", "counter", "Requests preempted by recompute.");
  e.sample(s.preemptions);
  e.family("prompt_tokens_total", "counter", "Prompt tokens of admitted requests.");
  e.sample(s.promptTokens);
  e.family("generation_tokens_total", "counter", "Tokens generated.");
  e.sample(s.generatedTokens);
  e.family("forward_tokens_total", "counter", "Tokens the model forwarded.");
  e.sample(s.forwardTokens);
  e.family("steps_total", "counter", "Scheduling steps that ran a batch.");
  e.sample(s.prefillSteps, "kind=\"prefill\"");
  e.sample(s.decodeSteps, "kind=\"decode\"");
  e.family("spec_decode_draft_tokens_total", "counter", "Draft tokens offered.");
  e.sample(s.draftsOffered);
  e.family("spec_decode_accepted_tokens_total", "counter", "Draft tokens accepted.");
  e.sample(s.draftsAccepted);
  e.family("blocks", "gauge", "PAGE blocks by state.");
  e.sample(s.blocksTotal, "state=\"total\"");
  e.sample(s.blocksFree, "state=\"free\"");
  e.sample(s.blocksUsed, "state=\"held\"");
  e.sample(s.blocksIndexed, "state=\"cached\"");
  e.family("state_groups", "gauge", "Per-request state groups.");
  e.sample(s.groupsTotal, "state=\"total\"");
  e.sample(s.groupsFree, "state=\"free\"");
  e.family("checkpoints_total", "counter", "State checkpoints by fate.");
  e.sample(s.funnel.fates.kept, "fate=\"kept\"");
  e.sample(s.funnel.fates.dropped, "fate=\"dropped\"");
  e.sample(s.funnel.fates.evicted, "fate=\"evicted\"");
  e.sample(s.funnel.fates.orphaned, "fate=\"orphaned\"");
  e.family("checkpoint_demands_total", "counter",
           "Checkpoint demands the ladder recorded or declined for want of room.");
  e.sample(s.funnel.demandsRecorded, "outcome=\"recorded\"");
  e.sample(s.funnel.demandsDeclinedNoRoom, "outcome=\"declined_no_room\"");
  e.family("chunks_cut_for_demand_total", "counter",
           "Prefill chunks shortened to land on a demanded checkpoint.");
  e.sample(s.funnel.chunksCutForDemand);
  e.family("blocks_evicted_total", "counter", "Cached blocks evicted from the index.");
  e.sample(s.funnel.blocksEvicted);
  e.family("cache_tokens_total", "counter",
           "Admitted prefill tokens: full, cached, wanted (had the checkpoints "
           "existed) and compressed (in the index).");
  e.sample(s.stats.fullTokens, "kind=\"full\"");
  e.sample(s.stats.cachedTokens, "kind=\"cached\"");
  e.sample(s.stats.wantedTokens, "kind=\"wanted\"");
  e.sample(s.stats.compressedTokens, "kind=\"compressed\"");
  e.family("state_maintenance_ops_total", "counter",
           "Generated-kernel launches that move state.");
  e.sample(s.imageStores, "op=\"image_store\"");
  e.sample(s.imageRestores, "op=\"image_restore\"");
  e.sample(s.forkCopies, "op=\"group_copy\"");
  e.sample(s.blockCopies, "op=\"block_copy\"");
  e.sample(s.slotCopies, "op=\"slot_copy\"");
  e.family("boundary_moves_total", "counter",
           "Moves of the block/slot boundary of a row-space model.");
  e.sample(s.boundaryMoves);
  return e.str();
}

std::string cacheStatsJson(const poolrt::serve::EngineSnapshot &s) {
  nlohmann::ordered_json j;
  j["ranks"] = 1;
  j["requests"] = s.stats.requests;
  j["full_tokens"] = s.stats.fullTokens;
  j["cached_tokens"] = s.stats.cachedTokens;
  j["wanted_tokens"] = s.stats.wantedTokens;
  j["compressed_tokens"] = s.stats.compressedTokens;
  j["demands_recorded"] = s.funnel.demandsRecorded;
  j["demands_declined_no_room"] = s.funnel.demandsDeclinedNoRoom;
  j["chunks_cut_for_demand"] = s.funnel.chunksCutForDemand;
  j["checkpoints_kept"] = s.funnel.fates.kept;
  j["checkpoints_dropped"] = s.funnel.fates.dropped;
  j["checkpoints_evicted"] = s.funnel.fates.evicted;
  j["checkpoints_orphaned"] = s.funnel.fates.orphaned;
  j["blocks_evicted"] = s.funnel.blocksEvicted;
  return j.dump(2) + "\n";
}

} // namespace serve
} // namespace pool
