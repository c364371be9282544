//===- CacheManager.h - Prefix hits, publication, checkpoint ladder -*- C++ -*-===//
//
// The block manager of the reference (spec §8) over libpoolrt's pools:
//   * admission: the longest prefix of a request's hash blocks that is in
//     the content index (the last hash block never: prefill must forward at
//     least one block), gated to a fixpoint across every state class (a hit
//     is usable only where every stateful class can resume);
//   * publication: blocks enter the index only after a forward computed
//     them (hashBlocks), up to the committed watermark;
//   * the checkpoint ladder: rungs every `interval` tokens up to the last
//     one that leaves the successor its room, demand rungs where a hit was
//     refused for want of a checkpoint, the decode spacing rule;
//   * the funnel counters, which merge across ranks by summation.
//
// Deviation (quirk Q1): the demand counterfactual assumes only checkpoints
// that could exist: a class whose successor room is infinite (transfer
// none) answers as in the real gate, so such a model never records demand.
//
// This version runs with decode-context parallelism 1 (a hash block is a
// block) and fork/none state classes; PAGE-unit (copy) checkpoints plug in
// through StateClass when their coordinator lands.
//
// The window classes (sliding / chunked attention) live in a WindowSet of
// their own (runtime/pools/WindowClasses.h, private to the pools library),
// the boundary mover in runtime/pools/BoundaryMove.cpp. Tests reach the
// private steps below through one friend, CacheManagerTestAccess
// (test/Unit/CacheManagerTestAccess.h).
//
// Lock contract: not thread-safe; owned by the scheduler thread.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_CACHEMANAGER_H
#define POOLRT_CACHEMANAGER_H

#include "poolrt/Attention.h"
#include "poolrt/BlockHash.h"
#include "poolrt/BlockPool.h"
#include "poolrt/PageUnitStore.h"
#include "poolrt/StateGroupPool.h"
#include "poolrt/StateTransfer.h"

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace poolrt {

/// What the cache layer reads and writes of one request.
struct Request {
  int64_t id = 0;              // who asks for checkpoints (copy classes)
  std::vector<int64_t> tokens; // prompt + generated
  int64_t numPromptTokens = 0;
  std::vector<BlockId> blockTable;
  /// Between a successful CacheManager::allocate and its deallocate. The
  /// table alone cannot say so (a request of 0 tokens holds no block), and
  /// deallocate, hashBlocks and moveBoundary refuse a request that is not
  /// allocated rather than free someone else's blocks.
  bool allocated = false;
  int64_t numCachedTokens = 0; // KV computed; set through setNumCachedTokens
  int64_t numHashedTokens = 0; // publish watermark
  int64_t numCompressedHitBlocks = 0;
  int64_t numWantedHitBlocks = 0;
  int64_t checkpointDemandPos = 0; // 0: none
  bool demandCounted = false;
  bool demandDeclined = false;
  int64_t lastCheckpointPos = 0;
  /// Tokens the request will hold when its response ends (prompt + the
  /// output it may generate; 0: unknown). The response-end checkpoint is
  /// the last hash-block boundary its committed tokens reach.
  int64_t responseEnd = 0;
  /// Tokens its admission resumed from a checkpoint (0: none), and the
  /// checkpoint's hash.
  int64_t resumedTokens = 0;
  std::optional<BlockHash> resumedFrom;
  StateHolder state; // group, fork source, hasPerReqCache, numTokens
  /// The tenant's cache salt (vLLM's cache_salt): requests hit only blocks
  /// published under the same salt. Set it before the first canAllocate;
  /// empty: no salt.
  std::string cacheSalt;
  /// Chained hashes of the leading full hash blocks, computed once: tokens
  /// only grow, so the prefix's hashes never change.
  mutable std::vector<BlockHash> hashCache;
  /// Token fingerprints (tokenPrint of the int32 ids, as the block pool
  /// stores them) of the leading full hash blocks, for the collision check;
  /// computed once, like hashCache.
  mutable std::vector<uint64_t> printCache;
  /// The blocks the last admission matched (its indexed prefix), kept as
  /// hints: the next attempt checks each against the block's own metadata
  /// and probes the index only where one no longer holds (BlockPool::
  /// matchRun), and allocate claims from them. A hint never changes an
  /// answer, only its cost; a stale one costs an index probe.
  std::vector<BlockId> hitHint;
  /// Window classes (sliding / chunked attention; CacheManagerConfig::
  /// windowClasses, in that order): one block table each, indexed by block
  /// position like blockTable. kNoBlock where the block was released (it
  /// fell out of the window) or was never needed (before the window of a
  /// prefix hit). Empty for a model without window classes.
  std::vector<std::vector<BlockId>> windowTables;
  /// Whether this request's window reserve is counted (allocate sets it,
  /// deallocate clears it).
  bool windowsReserved = false;

  int64_t numTokens() const { return int64_t(tokens.size()); }
  /// Sets the cache salt; refused (State) once the request has hashes or
  /// blocks, whose chain the salt would change.
  Status setCacheSalt(std::string salt);
  /// The scheduler advances the computed-KV mark per chunk. InvalidArgument
  /// outside [0, numTokens()]: a mark past the tokens would make hashBlocks
  /// read past them, a negative one would re-publish from before block 0.
  Status setNumCachedTokens(int64_t n);
};

/// One kind of per-request state that gates prefix hits and keeps
/// checkpoints (spec §6).
class StateClass {
public:
  virtual ~StateClass();
  virtual bool applies(const Request &r) const = 0;
  /// Tokens the forward after a checkpoint must carry (inf: never).
  virtual double successorRoom() const = 0;
  /// The longest prefix <= hitBlocks this class can resume.
  virtual int64_t resumableHit(const Request &r, int64_t hitBlocks,
                               const std::vector<BlockHash> &hashes,
                               bool assumeCheckpointed) const = 0;
  virtual Status checkpoint(Request &r, int64_t boundaryBlocks, BlockHash h) = 0;
};

/// A copy class (DeepSeek-V4): checkpoints are images in PAGE units of the
/// block pool, kept by the PAGE-unit store. Nothing is handed over, so the
/// successor needs no room and any stored boundary is resumable.
class PagedCheckpointClass final : public StateClass {
public:
  explicit PagedCheckpointClass(PageUnitCheckpointStore &store, bool enabled = true)
      : store(store), enabled(enabled) {}
  bool applies(const Request &r) const override {
    return enabled && r.state.hasPerReqCache;
  }
  double successorRoom() const override { return 0; }
  int64_t resumableHit(const Request &r, int64_t hit,
                       const std::vector<BlockHash> &hashes,
                       bool assumeCheckpointed) const override;
  /// Records the intent; the store turns it into a copy at batch
  /// construction (takeCheckpointOps).
  Status checkpoint(Request &r, int64_t boundaryBlocks, BlockHash h) override;

private:
  PageUnitCheckpointStore &store;
  bool enabled;
};

/// The rows PAGE blocks and STATE slots share (a row-space model: both live
/// in the same planes, blocks from row 0 up, slots from the top down), read
/// from the artifact's row_space. With plane_rows fixed, every address is
/// independent of the split, so the boundary can move at run time.
struct PoolBoundaryGeometry {
  int64_t envelopeRows = 0; // rows of one block
  int64_t slotRows = 0;     // rows of one slot
  int64_t planeRows = 0;    // fixed
  int64_t slotPositions = 0; // physical slot of group g: positions - 1 - g
  /// Blocks the artifact has room for outside the planes too (its rider
  /// regions): the block pool never grows past this.
  int64_t maxBlocks = 0;

  int64_t heldSlots() const { return slotRows > 0 ? planeRows / slotRows : 0; }
  /// Most blocks that fit below `groups` slots.
  int64_t blocksFor(int64_t groups) const;
  /// Most slots that fit above `blocks` blocks.
  int64_t groupsFor(int64_t blocks) const;
  int32_t physicalSlot(GroupId g) const {
    return int32_t(slotPositions - 1 - g.value);
  }
};

/// What moving the boundary did. The byte moves must run before the next
/// forward, in any order (no id is both a source and a destination, and no
/// destination appears twice): blockCopyIds feeds the block_copy kernel,
/// slotCopyIds the slot_copy kernel, as (source, destination) pairs.
struct BoundaryMove {
  int64_t numBlocks = 0, numGroups = 0; // after the move
  bool reachedTarget = false;
  std::string stopReason; // why not, when !reachedTarget
  std::vector<std::pair<BlockId, BlockId>> blockMoves;
  std::vector<GroupRelocation> groupMoves;
  std::vector<int32_t> blockCopyIds, slotCopyIds;
  int64_t blocksRetired = 0, groupsRetired = 0;
  int64_t unitsMoved = 0;        // PAGE units of stored checkpoints
  int64_t checkpointsRehomed = 0; // checkpointed groups moved, not spent
  int64_t checkpointsSpent = 0;   // checkpointed groups given up
  int64_t tableEntriesRepointed = 0;
};

/// The checkpoint interval (tokens) when the caller names none: the
/// reference's --state-checkpoint-interval-tokens default. The one place
/// this number is written (C, Python and the tools use it from here).
constexpr int64_t kDefaultCheckpointInterval = 8192;

/// A PAGE class with sliding-window or chunked attention beside the full
/// class (specs/window-classes.md). The full class keeps `blockTable`; each
/// window class keeps a table of its own in Request::windowTables.
struct WindowClassConfig {
  std::string name;
  AttentionPattern pattern;
  /// Blocks of a pool of its own; 0: it draws from the full class's pool
  /// (one block id space: the compiler chose it because the pages are the
  /// same size).
  int64_t numBlocks = 0;
  /// Blocks reserved per running request (AttentionPattern::reserveBlocks,
  /// solved by the compiler): a request never holds more, so admitting
  /// only while every pool can back its reserves means a window class never
  /// runs dry.
  int64_t reserveBlocks = 0;
};

/// Where a stateful model keeps a checkpoint (specs/checkpoint-placement.md).
/// The ladder is the reference's grid (every `interval` tokens, and the
/// decode spacing rule); the others are where reuse is.
enum class CheckpointKind : uint8_t {
  PromptEnd,   // the last hash-block boundary a prompt reaches
  Branch,      // where the request's prefix left the cached one (the demand)
  ResponseEnd, // the last boundary its response's committed tokens reach
  Ladder,      // a grid rung, or the decode spacing rule
};
constexpr int kNumCheckpointKinds = 4;
/// "prompt_end", "branch", "response_end", "ladder".
const char *checkpointKindName(CheckpointKind k);

/// Run-time policy: what the artifact does not fix and an engine chooses.
struct CachePolicy {
  /// >= 0 (0: ladder off); CacheManager::create refuses a negative one
  /// rather than read it as 0, as the reference's max(0, x) does.
  int64_t checkpointIntervalTokens = kDefaultCheckpointInterval;
  bool prefixCaching = true;
  /// The chain the prefix hashes use (BlockHash.h): XXH3 unless the engine
  /// must match hashes computed the reference's way.
  HashScheme hashScheme = HashScheme::Xxh3;
  /// Sparse placement: a checkpoint at each prompt's end, at the branch
  /// point where a request leaves a cached prefix (the demand, kept with
  /// the ladder off too), and at each response's end. Off: the ladder and
  /// its demand rungs only, as the reference places them.
  bool promptEndCheckpoints = true;
  bool branchCheckpoints = true;
  bool responseEndCheckpoints = true;
  /// A fork class whose artifact has image_store / image_restore kernels
  /// keeps its checkpoints as images in PAGE units, priced against the
  /// blocks (cacheManagerConfig). Off: a free state group per checkpoint.
  bool forkCheckpointsInPageUnits = true;

  /// The reference's placement: the ladder and its demand rungs only.
  void placeAsReference() {
    promptEndCheckpoints = branchCheckpoints = responseEndCheckpoints = false;
  }
};

/// What a cache manager is built from. The counts are the compiler's
/// (cacheManagerConfig reads them from the artifact); `policy` is the
/// caller's.
struct CacheManagerConfig {
  int64_t blockSize = 0; // tokens per block: required (>= 1)
  int64_t numBlocks = 0;
  int64_t numGroups = 0; // STATE groups (0: stateless model)
  StateTransfer transfer = StateTransfer::none();
  CachePolicy policy;
  /// Copy classes (DeepSeek-V4): checkpoints are images in PAGE units of
  /// the block pool. The state groups are then plain slots (transfer must be
  /// none) and the PAGE-unit coordinator is the one state class.
  std::optional<PagedStateCheckpointSpec> pagedCheckpoints;
  /// Row-space models: the shared rows, so moveBoundary can re-split them.
  std::optional<PoolBoundaryGeometry> boundary;
  /// Window classes (none: a single full-attention PAGE class). Not with a
  /// state class, PAGE-unit checkpoints or a boundary (create refuses it).
  std::vector<WindowClassConfig> windowClasses;
  /// Computed tokens that may still be rolled back when a forward starts
  /// (the speculative drafts): window classes keep their blocks this much
  /// longer before releasing them.
  int64_t windowMarginTokens = 0;
};

/// One counter's wire description, named once: `key` is what every writer
/// calls it (the Python dicts, pool-serve's JSON summary and /cache_stats,
/// the C API's field); `family` and `label` its Prometheus sample
/// (`poolserve:<family>{rank, <label>}`, a null label: none); `help` the
/// family's help text (the first member of a family gives it).
struct CounterKey {
  const char *key, *family, *label, *help;
};

/// How many counters `Counters::describe()` names (CacheFunnel,
/// CacheStats).
template <class Counters> constexpr int describedCount() {
  int n = 0;
  Counters::describe([&](const CounterKey &, auto) { ++n; });
  return n;
}

/// Counters that merge across ranks by summation.
struct CacheFunnel {
  int64_t demandsRecorded = 0;
  int64_t demandsDeclinedNoRoom = 0;
  int64_t chunksCutForDemand = 0;
  CheckpointFates fates;
  int64_t blocksEvicted = 0;
  /// Per CheckpointKind: checkpoints taken (kept), refused for want of room
  /// (dropped), and resumed by an admission (read back).
  int64_t taken[kNumCheckpointKinds] = {};
  int64_t dropped[kNumCheckpointKinds] = {};
  int64_t readBack[kNumCheckpointKinds] = {};

  /// The one description of the members: f(CounterKey, get) for each, where
  /// get(funnel) is the member (const or not). Summation, every writer and
  /// the metrics walk it; a new counter is a member and a line here.
  template <class F> static constexpr void describe(F &&f) {
    f(CounterKey{"demands_recorded", "checkpoint_demands_total", "outcome=\"recorded\"",
                 "Checkpoint demands the ladder recorded or declined for want of room."},
      [](auto &c) -> auto & { return c.demandsRecorded; });
    f(CounterKey{"demands_declined_no_room", "checkpoint_demands_total",
                 "outcome=\"declined_no_room\"", nullptr},
      [](auto &c) -> auto & { return c.demandsDeclinedNoRoom; });
    f(CounterKey{"chunks_cut_for_demand", "chunks_cut_for_demand_total", nullptr,
                 "Prefill chunks shortened to land on a demanded checkpoint."},
      [](auto &c) -> auto & { return c.chunksCutForDemand; });
    f(CounterKey{"checkpoints_kept", "checkpoints_total", "fate=\"kept\"",
                 "State checkpoints by fate."},
      [](auto &c) -> auto & { return c.fates.kept; });
    f(CounterKey{"checkpoints_dropped", "checkpoints_total", "fate=\"dropped\"", nullptr},
      [](auto &c) -> auto & { return c.fates.dropped; });
    f(CounterKey{"checkpoints_evicted", "checkpoints_total", "fate=\"evicted\"", nullptr},
      [](auto &c) -> auto & { return c.fates.evicted; });
    f(CounterKey{"checkpoints_orphaned", "checkpoints_total", "fate=\"orphaned\"", nullptr},
      [](auto &c) -> auto & { return c.fates.orphaned; });
    f(CounterKey{"blocks_evicted", "blocks_evicted_total", nullptr,
                 "Cached blocks evicted from the index."},
      [](auto &c) -> auto & { return c.blocksEvicted; });
#define POOLRT_KIND_COUNTERS(kind, i, first)                                   \
  f(CounterKey{"taken_" kind, "checkpoints_by_kind_total",                     \
               "kind=\"" kind "\",event=\"taken\"",                            \
               first ? "State checkpoints by placement: taken, dropped for "   \
                       "want of room, read back by a hit."                     \
                     : nullptr},                                               \
    [](auto &c) -> auto & { return c.taken[i]; });                             \
  f(CounterKey{"dropped_" kind, "checkpoints_by_kind_total",                   \
               "kind=\"" kind "\",event=\"dropped\"", nullptr},                \
    [](auto &c) -> auto & { return c.dropped[i]; });                           \
  f(CounterKey{"read_back_" kind, "checkpoints_by_kind_total",                 \
               "kind=\"" kind "\",event=\"read_back\"", nullptr},              \
    [](auto &c) -> auto & { return c.readBack[i]; });
    POOLRT_KIND_COUNTERS("prompt_end", 0, true)
    POOLRT_KIND_COUNTERS("branch", 1, false)
    POOLRT_KIND_COUNTERS("response_end", 2, false)
    POOLRT_KIND_COUNTERS("ladder", 3, false)
#undef POOLRT_KIND_COUNTERS
  }

  CacheFunnel &operator+=(const CacheFunnel &o) {
    describe([&](const CounterKey &, auto get) { get(*this) += get(o); });
    return *this;
  }
};

/// Prefix-cache statistics over admitted prefills (spec 10.4), in tokens:
/// per admission cached <= wanted <= compressed <= full. Counters merge
/// across ranks by summation; the ratios are taken after merging.
struct CacheStats {
  int64_t requests = 0;
  int64_t fullTokens = 0;       // prompt (+ generated) tokens admitted
  int64_t cachedTokens = 0;     // served from the cache
  int64_t wantedTokens = 0;     // would have been, had the checkpoints existed
  int64_t compressedTokens = 0; // in the content index at admission

  /// The one description of the counters (as CacheFunnel::describe).
  template <class F> static constexpr void describe(F &&f) {
    f(CounterKey{"requests", "cache_requests_total", nullptr,
                 "Prefills admitted through the prefix cache."},
      [](auto &c) -> auto & { return c.requests; });
    f(CounterKey{"full_tokens", "cache_tokens_total", "kind=\"full\"",
                 "Admitted prefill tokens: full, cached, wanted (had the checkpoints "
                 "existed) and compressed (in the index)."},
      [](auto &c) -> auto & { return c.fullTokens; });
    f(CounterKey{"cached_tokens", "cache_tokens_total", "kind=\"cached\"", nullptr},
      [](auto &c) -> auto & { return c.cachedTokens; });
    f(CounterKey{"wanted_tokens", "cache_tokens_total", "kind=\"wanted\"", nullptr},
      [](auto &c) -> auto & { return c.wantedTokens; });
    f(CounterKey{"compressed_tokens", "cache_tokens_total", "kind=\"compressed\"", nullptr},
      [](auto &c) -> auto & { return c.compressedTokens; });
  }
  /// The ratios derived from the counters, each with its wire key:
  /// f(key, value). Taken after merging.
  template <class F> void describeRatios(F &&f) const {
    f("hit", hit());
    f("compressed_hit", compressedHit());
    f("lost_to_checkpoint", lostToCheckpoint());
    f("lost_unrecoverable", lostUnrecoverable());
  }

  CacheStats &operator+=(const CacheStats &o) {
    describe([&](const CounterKey &, auto get) { get(*this) += get(o); });
    return *this;
  }
  double ratio(int64_t part) const {
    return fullTokens > 0 ? double(part) / double(fullTokens) : 0.0;
  }
  double hit() const { return ratio(cachedTokens); }
  double compressedHit() const { return ratio(compressedTokens); }
  double lostToCheckpoint() const { return ratio(wantedTokens - cachedTokens); }
  double lostUnrecoverable() const { return ratio(compressedTokens - wantedTokens); }
};

/// Whether a request can be admitted now, and what its prefix hit is, in
/// both units (CacheManager::admission).
struct Admission {
  bool admissible = false;
  /// The hit admission would use, in blocks and in tokens (0 when refused).
  int64_t hitBlocks = 0, hitTokens = 0;
  /// Blocks of the prefix found in the index, before the checkpoint gate: a
  /// stateful hit stops at the last boundary whose checkpoint is held.
  int64_t indexedBlocks = 0;
  /// Blocks the request needs in all (prompt so far).
  int64_t neededBlocks = 0;
  /// Refused: "blocks" (not enough free or evictable PAGE blocks) or
  /// "state groups" (no free per-request state group). Admitted with a hit
  /// cut short by the gate: "checkpoint missing". Otherwise "".
  std::string reason;
};

class WindowSet;
class CacheManagerTestAccess;

class CacheManager {
public:
  static Result<std::unique_ptr<CacheManager>> create(const CacheManagerConfig &c);
  ~CacheManager();
  // The block pool's eviction hook holds `this`: a copy or a move would
  // leave it pointing at the old manager.
  CacheManager(const CacheManager &) = delete;
  CacheManager &operator=(const CacheManager &) = delete;

  int64_t blockSize() const { return blockSize_; }
  int64_t hashBlockSize() const { return blockSize_; }
  /// The chain this cache's prefix hashes use (CachePolicy::hashScheme).
  HashScheme hashScheme() const { return hashScheme_; }
  /// The ladder interval after snapping to a multiple of the hash block
  /// (0: ladder off); `snapWarning` says when snapping changed it.
  int64_t interval() const { return interval_; }
  const std::string &snapWarning() const { return snapWarning_; }
  BlockPool &blocks() { return *blocks_; }
  StateGroupPool *groups() { return groups_.get(); }
  const StateGroupPool *groups() const { return groups_.get(); }
  /// The PAGE-unit store (copy classes, and fork classes whose artifact
  /// stores images in PAGE units).
  PageUnitCheckpointStore *pagedStore() { return store_.get(); }
  const PageUnitCheckpointStore *pagedStore() const { return store_.get(); }
  /// At batch construction: the image copies to run (stores of kept
  /// checkpoints, restores into resumed slots).
  PageUnitCheckpointStore::CheckpointOps takeStateMaintenanceOps();

  /// Chained hashes of the first `n` hash blocks of `r` (cached on `r`).
  std::vector<BlockHash> prefixHashes(const Request &r, int64_t n) const;

  /// Prefix hit in blocks for admission, or -1 when the request cannot be
  /// admitted now; records checkpoint demand either way.
  int64_t canAllocate(Request &r);
  /// canAllocate, explained: the hit in blocks and tokens, what the index
  /// held before the checkpoint gate, and why a refusal (blocks or state
  /// groups). Records checkpoint demand as canAllocate does.
  Admission admission(Request &r);
  /// State error when `r` is already allocated.
  Status allocate(Request &r, int64_t numCachedBlocks);
  /// After a forward over `numNewTokens` tokens from `startTokens` (default:
  /// numCachedTokens): publish the full blocks, keep checkpoints. State
  /// error when `r` is not allocated (its table is not this manager's).
  Status hashBlocks(Request &r, int64_t numNewTokens,
                    std::optional<int64_t> startTokens = std::nullopt,
                    std::optional<int64_t> nextForwardTokens = std::nullopt,
                    bool aimed = true);
  Status hashDecodeBlocks(Request &r, int64_t committedKvLen,
                          int64_t nextForwardTokens = 0);
  /// Decode growth (the reference's can_append / may_append): the fresh
  /// blocks `r`'s table needs to cover `totalTokens` positions (0 when it
  /// already does), whether they can be had now (free blocks, or free plus
  /// evictable checkpoint units under PAGE-unit checkpoints), and taking
  /// them. appendSlots takes nothing unless it can take every block
  /// (State error; InvalidArgument for a request that is not allocated or
  /// a negative count). Fresh blocks are unhashed: hashDecodeBlocks
  /// publishes them once a forward computed them.
  int64_t blocksToAppend(const Request &r, int64_t totalTokens) const;
  bool canAppend(const Request &r, int64_t totalTokens) const;
  Status appendSlots(Request &r, int64_t totalTokens);
  /// The window classes (CacheManagerConfig::windowClasses, in order).
  int64_t numWindowClasses() const;
  const WindowClassConfig &windowClass(int64_t i) const;

  /// State error, nothing freed, when `r` is not allocated (never, or
  /// already deallocated): a second free would drop references other
  /// requests hold on shared prefix blocks.
  Status deallocate(Request &r);
  /// Top of every scheduling pass: pins of the previous batch drain.
  void completePreviousStateBatch();

  /// The last rung of r's ladder: the largest multiple of the interval
  /// that leaves every applicable class's successor its room in r's prompt
  /// (0: the ladder is off, no class needs room, or no rung fits).
  int64_t checkpointLimit(const Request &r) const;
  /// The scheduler's chunk end rules (spec §10.1-10.2).
  static int64_t chunkedPrefillSize(int64_t numNew, int64_t budgetRemaining,
                                    int64_t numBatched, int64_t blockSize);
  int64_t finalizePrefillChunk(Request &r, int64_t start, int64_t chunk);

  CacheFunnel funnel() const;
  const CacheStats &stats() const { return stats_; }
  const std::optional<PoolBoundaryGeometry> &boundary() const { return boundary_; }
  /// The id the generated slot kernels take for group `g`: its physical
  /// slot in a row-space model, the group itself otherwise.
  int32_t slotKernelId(GroupId g) const {
    return boundary_ ? boundary_->physicalSlot(g) : g.value;
  }

  /// Re-split the shared rows so that there are `targetGroups` state
  /// groups (row-space models only; call between batches: after
  /// completePreviousStateBatch, before takeStateMaintenanceOps). Growing
  /// retires blocks from the top (held ones and stored checkpoints' PAGE
  /// units move down), shrinking retires groups from the top (live ones
  /// move down, checkpoints are re-homed or spent) and gives the rows to
  /// the block pool. Every request in `live` has its block table and group
  /// re-pointed. Stops early, consistent, at a block or group that cannot
  /// move this pass (a popped or pinned top, nothing free to move into);
  /// the result says where and why. Errors, before anything moves: no
  /// boundary geometry, a target outside [0, held slots], maintenance ops
  /// queued or in flight, a null or repeated request in `live`
  /// (InvalidArgument: a repeated one would be re-pointed twice), a request
  /// in `live` that is not allocated (State).
  Result<BoundaryMove> moveBoundary(int64_t targetGroups,
                                    const std::vector<Request *> &live);

private:
  /// Tests' one way in (test/Unit/CacheManagerTestAccess.h); it forwards
  /// the steps below and nothing else.
  friend class CacheManagerTestAccess;

  CacheManager();

  // Steps of the public operations, reached by tests through
  // CacheManagerTestAccess ----------------------------------------------------

  /// Add a further state class (tests: a second class to gate hits; create
  /// adds the built-in ones). Not owned: it must stay alive while in use.
  void addStateClass(StateClass *c) { classes_.push_back(c); }
  /// The fixpoint of every applicable class's resumable hit <= compressedHit
  /// (admission's gate; with assumeCheckpointed, the demand counterfactual).
  int64_t gatedHit(const Request &r, int64_t compressedHit,
                   const std::vector<BlockHash> &hashes,
                   bool assumeCheckpointed) const;
  /// The classes that keep a checkpoint at `pos` (aimed: ladder rungs and
  /// the demand position; otherwise the decode spacing rule).
  std::vector<StateClass *> checkpointersAt(const Request &r, int64_t pos,
                                            std::optional<int64_t> nextForward,
                                            bool aimed) const;
  /// The placement that keeps a checkpoint at `pos`, if any (aimed: a
  /// prefill chunk's end; otherwise a decode step's committed tokens).
  std::optional<CheckpointKind> placementAt(const Request &r, int64_t pos,
                                            bool aimed) const;
  /// The prompt-end boundary of `r` (0: none, or the placement is off).
  int64_t promptEndPos(const Request &r) const;
  /// The response-end boundary of `r` (0: none, or the placement is off).
  int64_t responseEndPos(const Request &r) const;
  /// Where the ladder or the recorded demand cuts a chunk [start, end)
  /// (0: no cut); counts a cut made for demand.
  int64_t checkpointCut(Request &r, int64_t start, int64_t end);
  /// Window classes: the largest end <= `end` a forward from
  /// r.numCachedTokens may reach without a window class holding more than
  /// its reserve (a multiple of the block size when it cuts). `end` when
  /// the model has no window class.
  int64_t windowForwardLimit(const Request &r, int64_t end) const;
  /// Window classes, before a forward from r.numCachedTokens to `end`:
  /// release the blocks that fell out of every window (they stay in the
  /// index, evictable, for later hits) and take fresh blocks up to `end`.
  /// finalizePrefillChunk and appendSlots call it; all or nothing. State
  /// error when `end` needs more than a class's reserve (cap it with
  /// windowForwardLimit) or `r` is not allocated.
  Status prepareWindows(Request &r, int64_t end);
  /// The pool window class `i` draws from (the full class's when shared).
  BlockPool &windowPool(int64_t i);
  /// The index key of hash `h` in window class `i`: each class publishes
  /// its blocks under keys of its own, so classes sharing one pool never
  /// find each other's blocks.
  BlockHash windowKey(BlockHash h, int64_t i) const;

  // Internals -----------------------------------------------------------------

  /// Ensure r.hashCache covers `n` blocks; returns how many it covers.
  int64_t ensureHashes(const Request &r, int64_t n) const;
  /// Ensure r.printCache covers `n` (<= hashed) blocks.
  void ensurePrints(const Request &r, int64_t n) const;
  std::vector<StateClass *> applicable(const Request &r) const;
  void recordDemand(Request &r, int64_t hit, int64_t compressedHit,
                    const std::vector<BlockHash> &hashes);

  int64_t blockSize_ = 0, interval_ = 0;
  bool prefixCaching_ = true;
  bool promptEnd_ = true, branch_ = true, responseEnd_ = true;
  /// The placement of each checkpoint taken, by its boundary's hash (for
  /// the read-back counters; an entry outlives its checkpoint until the
  /// hash is taken again, which only costs a stale label).
  std::unordered_map<BlockHash, CheckpointKind> kindOf_;
  HashScheme hashScheme_ = HashScheme::Xxh3;
  std::string snapWarning_;
  std::unique_ptr<BlockPool> blocks_;
  std::unique_ptr<StateGroupPool> groups_;
  std::unique_ptr<StateClass> groupClass_;
  std::unique_ptr<PageUnitCheckpointStore> store_;
  std::unique_ptr<PagedCheckpointClass> pagedClass_;
  bool pageUnitsFor(int64_t count, std::optional<BlockHash> protectedHash) const;
  std::vector<StateClass *> classes_;
  CacheFunnel funnel_;
  CacheStats stats_;
  /// Ids of live requests, where the PAGE-unit store keys checkpoint
  /// intents on them: two live requests of one id would share (and one's
  /// deallocation forget) the other's intents, so allocate refuses it.
  std::unordered_set<int64_t> liveIds_;
  std::optional<PoolBoundaryGeometry> boundary_;
  /// moveBoundary collects on_evict hashes here and drops their
  /// checkpoints only after every unit move is recorded.
  bool deferEvictions_ = false;
  std::vector<BlockHash> deferredEvictions_;
  void dropCheckpointOf(BlockHash h);
  /// Whether a checkpoint of `kind` is worth its bytes now (the ends of a
  /// turn are kept where the traffic reads them back).
  bool worthTaking(CheckpointKind kind);
  /// r kept a prompt or response end: the image of its own conversation it
  /// resumed from gives its units back.
  void supersede(Request &r);
  int64_t skipped_[kNumCheckpointKinds] = {};
  /// Label the checkpoint taken under `h` (kindOf_).
  void noteKind(BlockHash h, CheckpointKind kind);
  /// The window classes (never null after create; empty without any).
  std::unique_ptr<WindowSet> windows_;

  /// allocate's work after its argument checks, in this order: the full
  /// class's hit blocks, the window classes' (before any fresh block could
  /// evict them), the state group (before fresh blocks could evict the
  /// checkpoint it restores), the fresh blocks, the statistics. allocate
  /// undoes all of it on error.
  Status allocateBlocksAndState(Request &r, int64_t numCached);
};

} // namespace poolrt

#endif
