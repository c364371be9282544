//===- pool-serve.cpp - Serve a compiled artifact over a request trace ----===//
//
//   pool-serve replay TRACE --artifact X.poolpack [--device host|cuda|hip]
//       [--no-prefix-cache] [--listen 127.0.0.1:PORT] [--summary out.json]
//       [--outputs out.jsonl] [--num-spec K] ...
//
// TRACE is a Mooncake JSONL trace, a shared-prefix trace
// (make_prefix_trace.py) or "multi-turn[:key=value,...]". The engine
// (runtime/serve) runs the scheduler, the cache manager, the generated
// kernels and the reference model; --outputs writes one line per request in
// trace order (its output and final-state checksums) so two runs compare
// with cmp; --summary writes the run's JSON summary atomically. With
// --listen, /metrics (Prometheus text) and /debug/cache_stats (JSON) are
// served while it runs.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Explore.h"
#include "Metrics.h"

#include "poolrt/Artifact.h"
#include "poolrt/Device.h"
#include "poolrt/serve/Engine.h"
#include "poolrt/serve/Ranks.h"
#include "poolrt/serve/Trace.h"

#include <CLI/CLI.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <set>
#include <thread>

using namespace poolrt;
using namespace poolrt::serve;

namespace {

struct Args {
  std::string trace, artifact, device = "host", listen, summary, outputs;
  bool noPrefixCache = false, fixedBoundary = false, noModel = false;
  std::string modelKernel;
  int64_t ranks = 1;
  int64_t numSpec = 0, maxNumSeqs = 0, maxBatchedTokens = 2048;
  int64_t interval = kDefaultCheckpointInterval, acceptPercent = 70;
  std::vector<std::string> checkpointAt{"prompt-end", "branch", "response-end"};
  std::string forkCheckpoints = "page-units";
  int64_t prefixOutputTokens = 16, maxModelLen = 0, lingerMs = 0, boundaryChurn = 0;
  uint64_t seed = 1;
  std::string progress = "auto";
  std::string blockHash = "xxh3";
  std::string tier, tierNamespace;
  int64_t tierChunk = 0, tierDeadlineMs = 2000;
};

int fail(const std::string &msg) {
  std::fprintf(stderr, "pool-serve: error: %s\n", msg.c_str());
  return 1;
}

double percentile(const std::vector<double> &v, double p) { return latencyPercentile(v, p); }

/// A tier spec with a Redis password replaced by "***".
std::string redactTierSpec(std::string spec) {
  size_t at = spec.rfind('@');
  size_t scheme = spec.find("://");
  if (at != std::string::npos && scheme != std::string::npos && at > scheme)
    spec = spec.substr(0, scheme + 3) + ":***" + spec.substr(at);
  return spec;
}

std::string summaryJson(const Args &a, const RankSet &set, const Trace &trace,
                        double seconds, const std::string &device) {
  EngineSnapshot s = set.total();
  const Engine &e = set.rank(0);
  double ceiling = ceilingHitRate(trace, set.outcomes(), e.layout().geometry.hashBlockSize);
  // Hits from HBM and from the tier (a tier hit is a prefix hit too).
  int64_t hitTokens = s.stats.cachedTokens + s.tierHitTokens;
  double hit = s.stats.fullTokens > 0 ? double(hitTokens) / double(s.stats.fullTokens) : 0.0;
  nlohmann::ordered_json j;
  j["artifact"] = a.artifact;
  j["model"] = e.layout().model;
  j["device"] = device;
  j["model_impl"] = a.noModel ? "none (--no-model)" : e.model().describe();
  j["ranks"] = set.size();
  j["trace"] = {{"source", trace.source}, {"format", trace.format},
                {"requests", trace.requests.size()}};
  j["prefix_cache"] = !a.noPrefixCache;
  j["block_hash"] = a.blockHash;
  j["checkpoint_interval_tokens"] = e.layout().geometry.blockSize > 0 ? a.interval : 0;
  j["checkpoint_at"] = a.checkpointAt;
  {
    // Where the checkpoints live: images in the blocks' PAGE units, state
    // groups, or nowhere (a stateless model).
    const CacheManager &cm = e.cache();
    j["checkpoint_store"] = cm.pagedStore()                                  ? "page-units"
                            : cm.groups() && cm.groups()->numGroups() > 0 ? "groups"
                                                                           : "none";
  }
  j["num_spec"] = a.numSpec;
  j["max_num_seqs"] = e.maxNumSeqs();
  j["max_batched_tokens"] = a.maxBatchedTokens;
  j["requests"] = {{"total", s.requestsTotal},
                   {"finished", s.requestsFinished},
                   {"refused", s.requestsRefused}};
  j["prompt_tokens"] = s.promptTokens;
  j["generated_tokens"] = s.generatedTokens;
  j["hit_tokens"] = hitTokens;
  j["hit_rate"] = hit;
  j["ceiling_hit_rate"] = ceiling;
  j["hit_vs_ceiling"] = ceiling > 0 ? hit / ceiling : 0.0;
  // The counters' keys come from their one description (CacheManager.h).
  nlohmann::ordered_json &stats = j["cache_stats"];
  CacheStats::describe(
      [&](const CounterKey &k, auto get) { stats[k.key] = get(s.stats); });
  s.stats.describeRatios([&](const char *key, double v) { stats[key] = v; });
  nlohmann::ordered_json &funnel = j["funnel"];
  CacheFunnel::describe(
      [&](const CounterKey &k, auto get) { funnel[k.key] = get(s.funnel); });
  j["preemptions"] = s.preemptions;
  j["steps"] = {{"prefill", s.prefillSteps}, {"decode", s.decodeSteps}};
  j["spec_decode"] = {{"draft_tokens", s.draftsOffered},
                      {"accepted_tokens", s.draftsAccepted}};
  j["state_maintenance"] = {{"image_stores", s.imageStores},
                            {"image_restores", s.imageRestores},
                            {"fork_copies", s.forkCopies}};
  j["boundary"] = {{"moves", s.boundaryMoves},
                   {"block_copies", s.blockCopies},
                   {"slot_copies", s.slotCopies},
                   {"blocks", s.blocksTotal},
                   {"state_groups", s.groupsTotal}};
  if (e.hasTier()) {
    TierLatencies lat; // every rank's samples together
    for (size_t r = 0; r < set.size(); ++r) {
      TierLatencies l = set.rank(r).tierLatencyMicros();
      lat.fetch.insert(lat.fetch.end(), l.fetch.begin(), l.fetch.end());
      lat.store.insert(lat.store.end(), l.store.begin(), l.store.end());
      lat.restore.insert(lat.restore.end(), l.restore.begin(), l.restore.end());
    }
    int64_t full = s.stats.fullTokens;
    auto share = [&](int64_t t) { return full > 0 ? double(t) / double(full) : 0.0; };
    double grid = ceilingHitRate(trace, set.outcomes(), e.tierChunkTokens());
    j["tier"] = {
        {"backend", redactTierSpec(a.tier)},
        {"chunk_tokens", e.tierChunkTokens()},
        {"ceiling_hit_rate", grid}, // on the objects' grid
        {"hit_vs_ceiling", grid > 0 ? hit / grid : 0.0},
        {"hit_tokens", {{"hbm", s.stats.cachedTokens},
                        {"tier", s.tierHitTokens},
                        {"recomputed", full - hitTokens}}},
        {"shares", {{"hbm", share(s.stats.cachedTokens)},
                    {"tier", share(s.tierHitTokens)},
                    {"recomputed", share(full - hitTokens)}}},
        {"lookups", s.tierLookups},
        {"loads", {{"failed", s.tierLoadsFailed},
                   {"late", s.tierLoadsLate},
                   {"objects_refused", s.tierObjectsRefused},
                   {"bytes", s.tierBytesLoaded},
                   {"latency_us", {{"p50", percentile(lat.fetch, 0.5)},
                                   {"p99", percentile(lat.fetch, 0.99)},
                                   {"count", lat.fetch.size()}}},
                   // The loaded objects' copies and scatters on the device.
                   {"restore_us", {{"p50", percentile(lat.restore, 0.5)},
                                   {"p99", percentile(lat.restore, 0.99)},
                                   {"count", lat.restore.size()}}}}},
        {"stores", {{"queued", s.tierStoresQueued},
                    {"written", s.tierStoresDone},
                    {"failed", s.tierStoresFailed},
                    {"refused", s.tierStoresRefused},
                    {"bytes", s.tierBytesStored},
                    {"latency_us", {{"p50", percentile(lat.store, 0.5)},
                                    {"p99", percentile(lat.store, 0.99)},
                                    {"count", lat.store.size()}}}}}};
  }
  j["wall_seconds"] = seconds;
  j["tokens_per_second"] =
      seconds > 0 ? double(s.forwardTokens + s.generatedTokens) / seconds : 0.0;
  const std::vector<double> ov = set.stepOverheadMicros();
  j["step_overhead_us"] = {{"p50", percentile(ov, 0.5)},
                           {"p99", percentile(ov, 0.99)},
                           {"max", ov.empty() ? 0.0 : *std::max_element(ov.begin(), ov.end())}};
  return j.dump(2) + "\n";
}

/// The metrics endpoint, on its own thread.
class MetricsServer {
public:
  explicit MetricsServer(const RankSet &s) : ranks(s) {
    server.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
      res.set_content(pool::serve::prometheusText(ranks.snapshots()),
                      "text/plain; version=0.0.4");
    });
    // The layout explorer's page (poolrt/Explore.h) with its live panel,
    // which polls /debug/cache_stats.
    server.Get("/", [this](const httplib::Request &, httplib::Response &res) {
      res.set_content(page, "text/html; charset=utf-8");
    });
    server.Get("/debug/cache_stats",
               [this](const httplib::Request &, httplib::Response &res) {
                 res.set_content(pool::serve::cacheStatsJson(ranks.snapshots()),
                                 "application/json");
               });
  }
  /// "HOST:PORT" (port 0: any free port). Errors say why.
  Status start(const std::string &where) {
    size_t colon = where.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Error::invalid("--listen '" + where + "': expected HOST:PORT");
    std::string host = where.substr(0, colon), portText = where.substr(colon + 1);
    char *end = nullptr;
    long port = std::strtol(portText.c_str(), &end, 10);
    if (portText.empty() || *end != '\0' || port < 0 || port > 65535)
      return Error::invalid("--listen '" + where + "': the port must be 0..65535");
    int bound = port == 0 ? server.bind_to_any_port(host.c_str())
                          : (server.bind_to_port(host.c_str(), int(port)) ? int(port) : -1);
    if (bound < 0)
      return Error::invalid("cannot listen on " + where +
                            " (address in use, or not an address of this host)");
    boundPort = bound;
    listenHost = host;
    thread = std::thread([this] { server.listen_after_bind(); });
    return Status::success();
  }
  int port() const { return boundPort; }
  /// Set before start(): the page served at "/".
  std::string page;
  const std::string &host() const { return listenHost; }
  ~MetricsServer() {
    if (thread.joinable()) {
      server.stop();
      thread.join();
    }
  }

private:
  const RankSet &ranks;
  httplib::Server server;
  std::thread thread;
  int boundPort = -1;
  std::string listenHost;
};

/// A bar on a terminal, plain lines (every 10%) otherwise.
class Progress {
public:
  Progress(const std::string &mode, int64_t total) : total(total) {
    bool tty = isatty(STDERR_FILENO);
    bar = mode == "bar" || (mode == "auto" && tty);
    lines = mode == "lines" || (mode == "auto" && !tty);
  }
  void update(const EngineSnapshot &s) {
    int64_t done = s.requestsFinished + s.requestsRefused;
    if (bar) {
      auto now = std::chrono::steady_clock::now();
      if (done != total && now - last < std::chrono::milliseconds(100))
        return;
      last = now;
      int width = 30, filled = total ? int(width * done / total) : width;
      std::fprintf(stderr, "\r[%-*s] %" PRId64 "/%" PRId64 " requests, hit %.1f%%",
                   width, std::string(size_t(filled), '#').c_str(), done, total,
                   100 * s.stats.hit());
      if (done == total)
        std::fprintf(stderr, "\n");
    } else if (lines) {
      int64_t tenth = total ? 10 * done / total : 10;
      if (tenth > lastTenth) {
        lastTenth = tenth;
        std::fprintf(stderr, "pool-serve: %" PRId64 "/%" PRId64
                             " requests, %" PRId64 " steps, hit %.1f%%\n",
                     done, total, s.steps, 100 * s.stats.hit());
      }
    }
  }

private:
  int64_t total;
  bool bar = false, lines = false;
  int64_t lastTenth = 0;
  std::chrono::steady_clock::time_point last{};
};

/// The serving library names its own parameters in errors (ServeOptions'
/// num_spec, max_num_seqs; openTier's tier spec); the command line says
/// them as its flags.
std::string asFlags(std::string msg) {
  static const std::pair<const char *, const char *> kFlags[] = {
      {"num_spec ", "--num-spec "},
      {"max_num_seqs ", "--max-num-seqs "},
      {"tier spec '", "--tier '"}};
  for (const auto &[param, flag] : kFlags) {
    size_t at = msg.find(param);
    while (at != std::string::npos) {
      bool word = at == 0 || msg[at - 1] == ' ';
      if (word)
        msg.replace(at, std::strlen(param), flag);
      at = msg.find(param, at + (word ? std::strlen(flag) : 1));
    }
  }
  return msg;
}

int replay(const Args &a) {
  auto artifact = readArtifactFile(a.artifact);
  if (!artifact.ok())
    return fail(artifact.error().message);
  // Probed here so an absent backend is its own error; each rank opens its own.
  {
    auto device = openDevice(a.device);
    if (!device.ok())
      return fail(device.error().message);
  }
  ServeOptions o;
  o.maxNumSeqs = a.maxNumSeqs;
  o.maxBatchedTokens = a.maxBatchedTokens;
  o.numSpec = a.numSpec;
  o.acceptPercent = a.acceptPercent;
  o.seed = a.seed;
  o.policy.prefixCaching = !a.noPrefixCache;
  o.runModel = !a.noModel;
  o.policy.hashScheme = *parseHashScheme(a.blockHash); // CLI11 checked the name
  o.policy.checkpointIntervalTokens = a.interval;
  {
    std::set<std::string> at;
    for (const std::string &p : a.checkpointAt)
      if (p != "ladder")
        at.insert(p);
    o.policy.promptEndCheckpoints = at.count("prompt-end") > 0;
    o.policy.branchCheckpoints = at.count("branch") > 0;
    o.policy.responseEndCheckpoints = at.count("response-end") > 0;
    o.policy.forkCheckpointsInPageUnits = a.forkCheckpoints == "page-units";
  }
  o.maxModelLen = a.maxModelLen;
  o.elasticBoundary = !a.fixedBoundary;
  o.boundaryChurn = a.boundaryChurn;
  o.modelKernel = a.modelKernel;
  o.tier = a.tier;
  o.tierChunkTokens = a.tierChunk;
  o.tierNamespace = a.tierNamespace;
  o.tierLoadDeadlineMs = a.tierDeadlineMs;
  if (!a.tier.empty() && a.noPrefixCache)
    return fail("--tier with --no-prefix-cache: the tier is keyed by the prefix hashes");
  auto ranks = RankSet::create(*artifact, a.device, o, a.ranks);
  if (!ranks.ok())
    return fail(a.artifact + ": " + asFlags(ranks.error().message));
  RankSet &set = **ranks;
  Engine &e = set.rank(0);
  TraceOptions to;
  to.tokensPerPrefixHash = e.layout().geometry.hashBlockSize;
  to.prefixOutputTokens = a.prefixOutputTokens;
  auto trace = loadTrace(a.trace, to);
  if (!trace.ok())
    return fail(trace.error().message);
  std::unique_ptr<MetricsServer> metrics;
  if (!a.listen.empty()) {
    metrics = std::make_unique<MetricsServer>(set);
    auto report = poolrt::explore::artifactReportJson(*artifact);
    if (!report.ok())
      return fail(a.artifact + ": " + report.error().message);
    poolrt::explore::PageInputs in;
    in.layout = &e.layout();
    in.reportJson = *report;
    in.artifact = e.layout().fingerprint;
    in.live = true;
    // The checkpoint ladder under this replay's policy and pass budget.
    in.ladders = poolrt::explore::runLadders(
        e.layout(), o.policy,
        {poolrt::explore::defaultLadderQuery(e.layout(), a.interval, a.maxBatchedTokens)});
    auto data = poolrt::explore::pageData(in);
    if (!data.ok())
      return fail(a.artifact + ": " + data.error().message);
    metrics->page = poolrt::explore::pageHtml(*data);
    Status s = metrics->start(a.listen);
    if (!s.ok())
      return fail(s.error().message);
    std::fprintf(stderr, "pool-serve: metrics on http://%s:%d/metrics, the layout "
                         "and live cache at http://%s:%d/\n",
                 metrics->host().c_str(), metrics->port(), metrics->host().c_str(),
                 metrics->port());
  }
  set.submit(*trace);
  Progress bar(a.progress, int64_t(trace->requests.size()));
  auto t0 = std::chrono::steady_clock::now();
  Status ran = set.run([&] { bar.update(set.total()); });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!ran.ok())
    return fail("replay stopped: " + ran.error().message);
  if (!a.outputs.empty()) {
    Status w = writeFileAtomically(a.outputs, outcomesJsonl(set.outcomes()), "outputs");
    if (!w.ok())
      return fail(w.error().message);
  }
  std::string summary = summaryJson(a, set, *trace, seconds, set.device(0).name());
  if (!a.summary.empty()) {
    Status w = writeFileAtomically(a.summary, summary, "summary");
    if (!w.ok())
      return fail(w.error().message);
  }
  EngineSnapshot s = set.total();
  std::printf("pool-serve: %" PRId64 " requests (%" PRId64 " refused), %" PRId64
              " prompt + %" PRId64 " generated tokens, hit %.2f%% (ceiling %.2f%%), "
              "%" PRId64 " preemptions, %.1f s\n",
              s.requestsTotal, s.requestsRefused, s.promptTokens, s.generatedTokens,
              100 * (s.stats.fullTokens > 0 ? double(s.stats.cachedTokens + s.tierHitTokens) /
                                                  double(s.stats.fullTokens)
                                            : 0.0),
              100 * ceilingHitRate(*trace, set.outcomes(), e.layout().geometry.hashBlockSize),
              s.preemptions, seconds);
  if (set.rank(0).hasTier() && s.tierStoresQueued == 0 && s.tierStoresRefused == 0)
    std::fprintf(stderr,
                 "pool-serve: warning: the tier stored nothing: no forward passed "
                 "a boundary of its %" PRId64 "-token objects (--tier-chunk)\n",
                 set.rank(0).tierChunkTokens());
  if (metrics && a.lingerMs > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(a.lingerMs));
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return fail("cannot write standard output");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"pool-serve: serve a compiled .poolpack over a request trace"};
  app.require_subcommand(1);
  Args a;
  CLI::App *rep = app.add_subcommand("replay", "replay a trace through the engine");
  rep->add_option("trace", a.trace,
                  "Mooncake JSONL, a shared-prefix trace, or multi-turn[:k=v,...]")
      ->required();
  rep->add_option("--artifact", a.artifact, "the compiled .poolpack")->required();
  rep->add_option("--device", a.device, "host, cuda or hip")
      ->check(CLI::IsMember({"host", "cuda", "hip"}));
  rep->add_flag("--no-prefix-cache", a.noPrefixCache, "run every request cold");
  rep->add_flag("--no-model", a.noModel,
                "benchmarks of the cache: forward through no model (each token "
                "derived from the one before; checksums 0), the kernels still run");
  rep->add_option("--block-hash", a.blockHash,
                  "the prefix hashes' chain (specs/block-hash.md): xxh3 (default) or "
                  "xxh64, the reference's, for hashes an engine computes its way")
      ->check(CLI::IsMember({"xxh3", "xxh64"}));
  rep->add_option("--tier", a.tier,
                  "offload tier (specs/tier.md): host:SIZE, disk:DIR:SIZE, "
                  "host:SIZE+disk:DIR:SIZE or redis://[:PASSWORD@]HOST:PORT");
  rep->add_option("--tier-chunk", a.tierChunk,
                  "tokens per tier object (0: 256, rounded up to a block)")
      ->check(CLI::NonNegativeNumber);
  rep->add_option("--tier-namespace", a.tierNamespace,
                  "what the tier's objects depend on besides the layout (the weights)");
  rep->add_option("--tier-deadline-ms", a.tierDeadlineMs,
                  "a tier load later than this recomputes")
      ->check(CLI::PositiveNumber);
  rep->add_option("--model-kernel", a.modelKernel,
                  "forward through this compiled model kernel (libpoolmodel-MODEL.so, "
                  "built against the artifact's header) instead of the manifest-driven "
                  "reference model");
  rep->add_flag("--fixed-boundary", a.fixedBoundary,
                "row-space models: never move the block/slot boundary");
  rep->add_option("--listen", a.listen, "serve /metrics on HOST:PORT (port 0: any)");
  rep->add_option("--ranks", a.ranks,
                  "engines, one per rank, each with its own device handle, arena and "
                  "prefix cache, stepping on its own thread; conversations are "
                  "dealt round-robin, every turn to its conversation's rank")
      ->check(CLI::Range(int64_t(1), int64_t(64)));
  rep->add_option("--summary", a.summary, "write the JSON summary here (atomically)");
  rep->add_option("--outputs", a.outputs,
                  "write one line per request (checksums) here, in trace order");
  rep->add_option("--num-spec", a.numSpec, "draft tokens per decode step")
      ->check(CLI::Range(int64_t(0), int64_t(64)));
  rep->add_option("--accept-percent", a.acceptPercent, "draft acceptance, percent")
      ->check(CLI::Range(int64_t(0), int64_t(100)));
  rep->add_option("--max-num-seqs", a.maxNumSeqs,
                  "requests running at once (default: the artifact's)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  rep->add_option("--max-batched-tokens", a.maxBatchedTokens, "token budget per step")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  rep->add_option("--checkpoint-interval", a.interval,
                  "state checkpoint interval in tokens (0: ladder off)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
  rep->add_option("--checkpoint-at", a.checkpointAt,
                  "where a stateful model keeps checkpoints besides the ladder: "
                  "prompt-end, branch, response-end (default all three; "
                  "'ladder' alone: the reference's ladder and demand rungs)")
      ->delimiter(',')
      ->check(CLI::IsMember({"prompt-end", "branch", "response-end", "ladder"}));
  rep->add_option("--fork-checkpoints", a.forkCheckpoints,
                  "where a fork model keeps checkpoints: page-units (images in the "
                  "block pool's bytes, when the artifact has image_store kernels; "
                  "default) or groups (a free state group each)")
      ->check(CLI::IsMember({"page-units", "groups"}));
  rep->add_option("--seed", a.seed, "seed of the draft acceptance");
  rep->add_option("--prefix-output-tokens", a.prefixOutputTokens,
                  "output length of shared-prefix trace requests")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  rep->add_option("--max-model-len", a.maxModelLen,
                  "longest request, prompt + output (0: what the pool holds)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
  rep->add_option("--boundary-churn", a.boundaryChurn,
                  "testing: every N steps shrink the slots to those in use, then grow them back")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  rep->add_option("--progress", a.progress, "auto, bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  rep->add_option("--linger-ms", a.lingerMs,
                  "keep serving metrics this long after the replay")
      ->check(CLI::Range(int64_t(0), int64_t(600000)));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  try {
    return replay(a);
  } catch (const std::exception &e) {
    return fail(e.what());
  }
}
