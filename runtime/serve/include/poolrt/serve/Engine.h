//===- Engine.h - The serving loop over a compiled artifact -------*- C++ -*-===//
//
// One rank's engine: the cache manager configured from the artifact, the
// arena carved on a device, the generated kernels, the reference model
// and a continuous-batching scheduler in the reference's order
// (../shared/spec/semantics.md §10, §12):
//
//   1. complete the previous state batch (pins drain, stores land);
//   2. phase 1, running partial prefills: budget chunk (no slivers), then
//      finalizePrefillChunk (checkpoint and demand cuts, fork room);
//   3. phase 2, admissions in arrival order while a sequence slot and
//      budget remain: canAllocate (gates and demand) -> budget chunk ->
//      allocate -> finalize the chunk;
//   4. a batch with any prefill runs alone (prefill first); else every
//      running request decodes 1 + accepted drafts, growing its table
//      (canAppend / appendSlots) and preempting the latest admitted
//      request by recompute when blocks run out;
//   5. the batch's maintenance ops run with the generated kernels before
//      its forward: PAGE-unit image stores and restores, the fork copy of
//      a resumed group; after the forward: hashBlocks (prefill) or
//      hashDecodeBlocks (decode) publish, and a fork checkpoint's copy
//      runs at once.
//
// Speculative acceptance is drawn from a generator seeded by (seed,
// request, decode step), so every run commits the same drafts whatever
// the schedule; the committed tokens are the model's own samples, so
// outputs never depend on the schedule, the cache or the acceptance.
//
// Lock contract: step() and run() on one thread; snapshot() may be called
// from any thread (it copies under a mutex).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_ENGINE_H
#define POOLRT_SERVE_ENGINE_H

#include "poolrt/Arena.h"
#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/SolvedLayout.h"
#include "poolrt/Tier.h"
#include "poolrt/TierTransfer.h"
#include "poolrt/serve/TierDevice.h"
#include "poolrt/serve/ReferenceModel.h"
#include "poolrt/serve/Trace.h"

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace poolrt {
namespace serve {

class TierSession;

struct ServeOptions {
  /// Requests running at once; 0: the artifact's max_num_seqs.
  int64_t maxNumSeqs = 0;
  /// Tokens one scheduling step may forward.
  int64_t maxBatchedTokens = 2048;
  /// Draft tokens per decode step (<= the model's spec_depth).
  int64_t numSpec = 0;
  /// Probability (percent) that each draft is accepted, given the previous.
  int64_t acceptPercent = 70;
  uint64_t seed = 1;
  CachePolicy policy;
  /// Longest request (prompt + output); 0: what the PAGE pool can hold.
  int64_t maxModelLen = 0;
  /// false: no reference model (a token derived from the last one), for
  /// benchmarks of the host side; checksums stay 0.
  bool runModel = true;
  /// Row-space models: move the pool boundary between batches as the mix
  /// changes (CacheManager::moveBoundary): give idle slots' rows to the
  /// blocks when blocks run short, take rows back for a slot when a
  /// request waits for one (up to maxNumSeqs slots).
  bool elasticBoundary = true;
  /// Testing the moving boundary under load: every `boundaryChurn` steps
  /// (0: never) shrink the slots to those in use (+1), then grow them back
  /// to max_num_seqs, whatever the mix; live slots and blocks move with
  /// the generated copy kernels.
  int64_t boundaryChurn = 0;
  /// A compiled model kernel (libpoolmodel-MODEL.so, built against this
  /// artifact's header) to forward through instead of the manifest-driven
  /// reference model; "": the reference model.
  std::string modelKernel;
  /// The offload tier (specs/tier.md): a backend for openTier
  /// ("host:4GiB", "disk:DIR:64GiB", "host:4GiB+disk:DIR:64GiB",
  /// "redis://[:PASSWORD@]HOST:PORT"); "": none.
  std::string tier;
  /// The backend `tier` names, already open and shared with other engines
  /// (RankSet: data-parallel ranks share one tier, since their objects are
  /// the same geometry's). Null: the engine opens `tier` itself, in its
  /// device's host memory. A shared one must outlive the engine.
  std::shared_ptr<TierBackend> sharedTier;
  /// Tokens of one tier object (a multiple of the block size); 0: 256,
  /// rounded up to a block.
  int64_t tierChunkTokens = 0;
  /// What else the tier's objects depend on besides the layout (the
  /// weights: a model name and revision, a checkpoint hash): runs that
  /// differ here never share objects.
  std::string tierNamespace;
  /// A tier load not back by then is late: the request recomputes.
  int64_t tierLoadDeadlineMs = 2000;
  /// At the end of a run, queued stores must land within this (else error).
  int64_t tierDrainTimeoutMs = 30000;
};

/// What happened to one request of the trace.
struct RequestOutcome {
  std::string name;
  bool finished = false;
  bool refused = false;
  std::string reason; // why it was refused
  int64_t promptTokens = 0;
  int64_t outputTokens = 0;
  int64_t hitTokens = 0; // cached at its (last) admission
  int64_t preemptions = 0;
  uint64_t outputChecksum = 0; // XXH64 of the output token ids (int64 LE)
  uint64_t stateChecksum = 0;  // ReferenceModel::stateChecksum at the end
  std::vector<int64_t> output;
};

/// Counters a scrape or the summary reads (sums across ranks merge).
struct EngineSnapshot {
  int64_t requestsTotal = 0, requestsFinished = 0, requestsRefused = 0,
          requestsRunning = 0, requestsWaiting = 0;
  int64_t promptTokens = 0, generatedTokens = 0, forwardTokens = 0;
  int64_t preemptions = 0, steps = 0, prefillSteps = 0, decodeSteps = 0;
  int64_t imageStores = 0, imageRestores = 0, forkCopies = 0;
  /// Boundary moves (row-space models) and the bytes they moved.
  int64_t boundaryMoves = 0, blockCopies = 0, slotCopies = 0;
  int64_t draftsOffered = 0, draftsAccepted = 0;
  int64_t blocksTotal = 0, blocksFree = 0, blocksIndexed = 0, blocksUsed = 0;
  int64_t groupsTotal = 0, groupsFree = 0;
  CacheStats stats;
  CacheFunnel funnel;
  /// Prefix-cache queries and hits in tokens (the vLLM counter pair).
  int64_t prefixQueryTokens = 0, prefixHitTokens = 0;
  /// The offload tier (specs/tier.md): admissions that looked it up, the
  /// tokens it served, loads that failed (backend error or no blocks to
  /// land in), came too late or were refused (corrupt or mismatched
  /// objects, removed), stores queued / written / failed / refused (the
  /// queue was full), and the bytes moved.
  int64_t tierLookups = 0, tierHitTokens = 0, tierLoadsFailed = 0, tierLoadsLate = 0,
          tierObjectsRefused = 0, tierStoresQueued = 0, tierStoresDone = 0,
          tierStoresFailed = 0, tierStoresRefused = 0, tierBytesStored = 0,
          tierBytesLoaded = 0;

  /// Summed member by member (ranks' counters and gauges merge by sum).
  EngineSnapshot &operator+=(const EngineSnapshot &o);
};

/// The tier's latency samples, microseconds: fetches on the transfer
/// thread (the backend's get of a hit's objects), stores, and restores (a
/// loaded hit's copies and scatters on the device, synchronized).
struct TierLatencies {
  std::vector<double> fetch, store, restore;
};

class Engine {
public:
  /// Everything from the artifact: counts (cacheManagerConfig), the arena
  /// (carved on `device`, whose kernels must be loaded from the same
  /// artifact), the kernels and the model. Refused: options the artifact
  /// cannot honour (more drafts than its spec depth, more running requests
  /// than its max_num_seqs), a layout the model cannot run.
  static Result<std::unique_ptr<Engine>> create(const Artifact &artifact,
                                                Device &device,
                                                const ServeOptions &options);
  ~Engine();

  /// Queue a trace's requests (in order). Requests that can never run
  /// (longer than the model's limit) are refused here, with the reason.
  void submit(const Trace &trace);
  /// One scheduling step; false when nothing is left to do.
  Result<bool> step();
  /// Steps until done; `progress` (if set) is called after every step.
  Status run(const std::function<void()> &progress = {});

  const std::vector<RequestOutcome> &outcomes() const { return outcomes_; }
  EngineSnapshot snapshot() const;
  /// Host time of each step's scheduling and cache work (the step's wall
  /// time less the model's forwards and the kernels' launches).
  const std::vector<double> &stepOverheadMicros() const { return overheadUs_; }
  const SolvedLayout &layout() const { return layout_; }
  CacheManager &cache() { return *cache_; }
  const CacheManager &cache() const { return *cache_; }
  const Model &model() const { return *model_; }
  int64_t maxNumSeqs() const { return maxNumSeqs_; }
  int64_t tokenLimit() const { return tokenLimit_; }
  /// The tier's latencies (microseconds, one per job).
  TierLatencies tierLatencyMicros() const;
  bool hasTier() const { return tier_ != nullptr; }
  /// Tokens of one tier object (0 without a tier).
  int64_t tierChunkTokens() const;
  /// Waits for queued tier stores (ServeOptions::tierDrainTimeoutMs);
  /// run() calls it at the end. Error when they do not land in time.
  Status drainTier();
  /// What the last step ran: a prefill batch or not, and how many requests.
  std::pair<bool, int64_t> lastStep() const { return lastStep_; }

private:
  Engine() = default;
  struct Seq;
  struct Batch;
  Result<Batch> schedule();
  Status execute(Batch &batch);
  Status runMaintenance();
  Status moveBoundaryIfNeeded();
  Status forkCopy(Seq &s);
  Status launch(const KernelInfo &k, const std::vector<int32_t> &ids);
  Result<int64_t> forward(Seq &s, int64_t start, int64_t count, bool extend,
                          int64_t rejected);
  Status finishSeq(Seq &s);
  Status preempt(Seq &s);
  /// Refuse `s` with `reason`, and every turn that follows it.
  void refuse(Seq &s, const std::string &reason);
  /// Refuse `s` if it can never fit (prompt + output + drafts past the
  /// token limit); true when refused.
  bool refuseIfTooLong(Seq &s);
  void publishSnapshot();
  int64_t acceptedDrafts(const Seq &s) const;
  int32_t stateId(const Seq &s) const;
  /// Tier: the objects `s` was admitted with loaded (TierSession::restore),
  /// then its fork copy and its hit.
  Status tierRestore(Seq &s);
  /// A prefill chunk cut to end at the last tier boundary of the prompt
  /// (TierSession::cut; `chunk` without a tier).
  int64_t tierCut(const Seq &s, int64_t start, int64_t chunk) const;

  SolvedLayout layout_;
  ServeOptions options_;
  Device *device_ = nullptr;
  std::unique_ptr<DeviceArena> arena_;
  std::unique_ptr<KernelLauncher> launcher_;
  std::unique_ptr<CacheManager> cache_;
  std::unique_ptr<Model> model_;
  const KernelInfo *imageStore_ = nullptr, *imageRestore_ = nullptr,
                   *blockCopy_ = nullptr, *slotCopy_ = nullptr;
  /// One group_copy per STATE class of the request's group (a fork copies
  /// every class's entries of the source group).
  std::vector<const KernelInfo *> groupCopies_;
  // The offload tier (null without one): its backend, transfer thread,
  // geometry, TierDevice and restore latencies (TierSession.h).
  std::unique_ptr<TierSession> tier_;
  bool stateful_ = false;
  int64_t maxNumSeqs_ = 0, tokenLimit_ = 0, blockSize_ = 0;

  std::vector<std::unique_ptr<Seq>> seqs_; // trace order
  std::deque<Seq *> waiting_;
  std::vector<Seq *> running_; // admission order
  std::vector<RequestOutcome> outcomes_;
  std::vector<double> overheadUs_;
  double deviceUs_ = 0; // this step's model and kernel time
  /// Scheduling passes in a row that ran nothing while requests were
  /// running: past a bound, a bookkeeping bug, reported instead of a hang.
  int64_t idlePasses_ = 0;
  std::pair<bool, int64_t> lastStep_{false, 0};
  EngineSnapshot counters_;
  mutable std::mutex snapMutex_;
  EngineSnapshot published_;
};

/// pool-serve's --outputs: one JSON line per request, in trace order, with
/// its status and (finished) its output and final-state checksums, so two
/// runs compare with cmp. Never throws (bytes that are not UTF-8 in a name
/// are replaced).
std::string outcomesJsonl(const std::vector<RequestOutcome> &outcomes);

/// The hit rate an unbounded cache would reach on the replayed requests
/// (in arrival order, every full hash block of a finished request's prompt
/// and output published, the last block of a prompt never hit): the
/// trace's own ceiling, in tokens of hit over tokens admitted.
double ceilingHitRate(const Trace &trace, const std::vector<RequestOutcome> &out,
                      int64_t hashBlockSize);

} // namespace serve
} // namespace poolrt

#endif
