//===- SubPool.h - Entry classes and pool sizing ----------------*- C++ -*-===//
//
// A model declares entry classes (SubPoolSpec); planPools turns a byte budget
// into an entry count per class. Two pools share the budget:
//   * STATE entries scale with in-flight requests and are reserved first
//     (max_num_seqs * entries_per_req + extra_entries of each class);
//   * the one PAGE class (the paged KV block) takes whatever remains.
// The plan is the single source of every count: the report, the artifact and
// the runtime read it, nothing re-derives it.
//
// Deviations from the reference (spec "Known reference quirks"):
//   Q3 an exact fit of the STATE reservation is a valid plan with 0 PAGE
//      entries; only a reservation that exceeds the budget is an error.
//   Q4 structure (merge clashes, more than one PAGE class) is validated before
//      the budget, so an insufficient budget cannot mask a config error.
//   Q5 entry_bytes >= 1 and extra_entries >= 0 are validated at construction.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SUBPOOL_H
#define POOLRT_SUBPOOL_H

#include "poolrt/Attention.h"
#include "poolrt/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace poolrt {

enum class Pool { Page, State };

const char *poolName(Pool pool); // "page" / "state"
std::optional<Pool> parsePool(const std::string &name);

/// One declared entry class. Construct through make(), which validates.
struct SubPoolSpec {
  Pool pool = Pool::Page;
  std::string name;
  int64_t entryBytes = 0;
  int64_t entriesPerReq = 0;
  int64_t extraEntries = 0;
  /// PAGE classes: the attention pattern (full unless declared) and, for a
  /// window pattern, the new tokens of one forward its reserve covers (0:
  /// one window, or one chunk).
  AttentionPattern attention;
  int64_t forwardTokens = 0;
  /// A window class with a pool of its own: the percentage of the budget
  /// left after every reserve it gets on top of its reserves, to cache the
  /// blocks requests release (0: reserves only).
  int64_t cachePercent = 0;

  static Result<SubPoolSpec> make(Pool pool, std::string name,
                                  int64_t entryBytes, int64_t entriesPerReq = 0,
                                  int64_t extraEntries = 0);

  /// Reference-style rendering, used in clash diagnostics.
  std::string str() const;
};

/// Specs that share a name share an index space and sum their bytes (an
/// Eagle3 draft or an indexer cache riding the target's block table). A later
/// spec must agree on (pool, entries_per_req, extra_entries). Order of first
/// occurrence is kept. `firstIndex` (if given) receives, per merged class, the
/// position in `specs` of its first declaration; on a clash `clashIndex`
/// receives the positions of the two declarations that disagree.
Result<std::vector<SubPoolSpec>>
mergeSpecs(const std::vector<SubPoolSpec> &specs,
           std::vector<size_t> *firstIndex = nullptr,
           std::pair<size_t, size_t> *clashIndex = nullptr);

struct PlannedClass {
  std::string name;
  Pool pool = Pool::Page;
  int64_t entries = 0;
  int64_t entryBytes = 0;
  int64_t reservedBytes = 0;
  int64_t entriesPerReq = 0; // 0 for the PAGE class
  int64_t extraEntries = 0;
  /// Window classes (planHybridPools): the pattern, the forward its
  /// reserve covers, the reserve in blocks per running request, and
  /// whether it shares the full class's block id space (then `entries` is
  /// the full class's count and `reservedBytes` 0: its blocks are the full
  /// class's bytes).
  AttentionPattern attention;
  int64_t forwardTokens = 0, reserveBlocks = 0, cachePercent = 0;
  bool sharesBlocks = false;
  bool isWindow() const { return attention.isWindow(); }
};

/// The result of sizing: every class's count and bytes, in merge order.
class PoolPlan {
public:
  static PoolPlan empty() { return PoolPlan(); }

  const std::vector<PlannedClass> &classes() const { return cls; }
  const PlannedClass *find(const std::string &name) const;
  /// Name of the PAGE class, if any.
  std::optional<std::string> pagedClass() const;
  /// Entries of the PAGE class (0 without one).
  int64_t pagedEntries() const;
  int64_t totalReservedBytes() const;
  /// The same plan with the PAGE count set to `count` (pipeline-parallel
  /// stages reconcile to the minimum block count). Errors without a PAGE
  /// class, for a negative count, or on overflow.
  Result<PoolPlan> withPagedEntries(int64_t count) const;

  std::vector<PlannedClass> cls;
};

/// Size the pools. `availableBytes` may be negative (the runner subtracts
/// reserves); STATE counts never depend on it.
Result<PoolPlan> planPools(const std::vector<SubPoolSpec> &specs,
                           int64_t availableBytes, int64_t maxNumSeqs);

/// What sizing window classes needs besides the specs.
struct HybridGeometry {
  int64_t blockSize = 0;
  int64_t marginTokens = 0; // speculative drafts per step
};

/// Size a model with window PAGE classes (specs/window-classes.md, "Sizing"): one
/// full-attention PAGE class, window classes beside it, no STATE class.
/// Equal page sizes: one block id space of budget / bytes blocks, drawn on
/// by every class (windows within their reserves). Otherwise each window
/// class gets max_num_seqs x reserve blocks of its own, first, and the full
/// class the rest. Without window classes this is planPools.
Result<PoolPlan> planHybridPools(const std::vector<SubPoolSpec> &specs,
                                 int64_t availableBytes, int64_t maxNumSeqs,
                                 const HybridGeometry &geo);
/// Whether `specs` declare a window PAGE class (then planHybridPools).
bool hasWindowClass(const std::vector<SubPoolSpec> &specs);

} // namespace poolrt

#endif // POOLRT_SUBPOOL_H
