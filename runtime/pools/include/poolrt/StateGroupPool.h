//===- StateGroupPool.h - State groups and fork checkpoints -----*- C++ -*-===//
//
// A *group* is what one request occupies in the pre-allocated STATE tensor
// (GDN conv+ssm, a compressor ring + window): `entries_per_req` consecutive
// entries, addressed by a GroupId. This pool owns the free list, so it is
// the single answer to "can one more request be admitted", and it keeps a
// content index over the free groups: under a fork transfer a checkpoint is
// a free group whose bytes are still the state as of a block boundary
// (lazy eviction: re-allocation, not the free, destroys it).
//
// Every group id below numGroups() is in exactly one state:
//   Held          owned by a request, or pinned (see below); never handed out.
//   Vacant        free, carries nothing; handed out lowest id first.
//   Checkpointed  free, carries a checkpoint (a hash); handed out least
//                 recently used first, and only when nothing is vacant.
// Ids in [numGroups(), slotCount()) are Retired (given back by retireTop,
// reusable by extend). Which free half a group is in is a function of its
// hash, and setHash() is the only mover, so the halves cannot drift.
//
// Why two halves in these orders: vacant-lowest-first packs requests towards
// id 0, so the top stays cold and shrinking rarely moves anything; LRU on
// checkpoints spends the least useful one. A single release-ordered FIFO
// spends a checkpoint released before a never-used group first.
//
// Pins. A fork source must not be handed out while a forward still reads
// it. pin() moves the obligation to the pool: the group stays Held until
// releasePins() (called at the top of every scheduling pass) returns it —
// one pass later for a normal pin (the reader is the batch being built), two
// for a deferred one (checkpoint(): the reader is the batch the *next* pass
// builds). Every pin clears within two passes whatever the reader does, so a
// preempted reader cannot strand a group. dropReader() returns a group early
// when its last reader is gone.
//
// Invariants (invariantsHold() checks them; tests run it after every step):
//   * a group carries hash h  <=>  index[h] is that group (a bijection), and
//     every indexed group is below numGroups();
//   * Vacant <=> no hash and free; Checkpointed <=> hash and free; the LRU
//     list holds exactly the Checkpointed groups; numFree() counts both;
//   * a pinned group is Held; a deferred pin is a pin.
//
// Silent failure modes this guards (the pool cannot see them otherwise):
//   * releasing a group twice files it twice; the reference then hands one
//     checkpoint-holding group to two requests, which write the same state
//     (quirk Q2). Here every misuse — release of a free or pinned group,
//     claim of a held group, pin of a free group, unpin of an unpinned one,
//     an id outside the pool — returns an error naming the operation and the
//     id, and leaves the pool unchanged (ErrorKind::Internal for misuse of a
//     valid id, InvalidArgument for an id the pool does not have);
//   * a pin released one pass early lets one kernel read and write the same
//     group: checkpoint() pins deferred for exactly that reason;
//   * a checkpoint whose KV block left the index is unreachable but still
//     occupies the LRU ahead of live ones: the block manager must call
//     unindex() from its eviction callback;
//   * a retirement or relocation the caller does not copy (and, for a live
//     top, re-point the owner) before the next forward leaves the reader
//     with another group's bytes; takeRelocations() is the hand-off.
//
// Differences from the reference (spec semantics.md §7):
//   * Q2 misuse is an error (above). pin() on a free group is refused because
//     releasePins() would release it a second time; release() of a pinned
//     group is refused for the same reason. Q2's "assert in debug builds" is
//     not done: the refusal is a [[nodiscard]] Status in every build, so the
//     error paths stay testable; invariantsHold() is the debug check.
//   * claim() of a checkpointed group is O(1) (intrusive list over flat
//     arrays) instead of a linear deque removal; the vacant half is an exact
//     set (detail::MinIdSet, shared with BlockPool), so there are no stale
//     heap entries and no compaction.
//   * resumableHit(assumeCheckpointed=true) honours Q1: under none() (no
//     successor room) the counterfactual answers exactly as the real gate.
//   * retireTop() of a live (Held) top that carries a hash moves the hash to
//     the relocation target; the reference left the index pointing at the
//     retired id.
//
// Lock contract: not thread-safe. One scheduler thread owns the pool (as the
// reference's single-threaded scheduler does); any other caller must hold the
// scheduler's lock.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_STATEGROUPPOOL_H
#define POOLRT_STATEGROUPPOOL_H

#include "poolrt/BlockHash.h"
#include "poolrt/StateTransfer.h"
#include "poolrt/Status.h"
#include "poolrt/detail/HashIndex.h"
#include "poolrt/detail/MinIdSet.h"
#include "poolrt/detail/TypedId.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace poolrt {

/// A per-request state group. Not a block id, not a slot index.
using GroupId = detail::TypedId<struct GroupIdTag, int32_t>;

/// "No group" (the reference's -1).
inline constexpr GroupId kNoGroup{};

/// What retireTop() did and what the caller still owes. relocatedTo ==
/// kNoGroup: the top was empty or was itself spent, no bytes move.
/// Otherwise copy retired -> relocatedTo before the next forward and, when
/// heldCheckpoint is false, re-point the owning request to relocatedTo (a
/// checkpoint's index entry has already been re-filed here).
struct GroupRetirement {
  GroupId retired;
  GroupId relocatedTo;
  bool heldCheckpoint = false;
};

struct GroupRelocation {
  GroupId src;
  GroupId dst;
};

/// The four fields of a request the pool reads and writes (the reference's
/// Sequence.has_per_req_cache, num_tokens, per_req_cache_group and
/// state_fork_src).
struct StateHolder {
  bool hasPerReqCache = true;
  int64_t numTokens = 0; // prompt + generated
  GroupId group;         // the request's own group
  GroupId forkSource;    // read-side group of its next forward
};

/// What became of the checkpoints the ladder asked the pool to keep.
struct CheckpointFates {
  int64_t kept = 0;     // landed
  int64_t dropped = 0;  // no free group to fork into
  int64_t evicted = 0;  // landed, later spent by pop()
  int64_t orphaned = 0; // its KV block left the index first
};

class StateGroupPool {
public:
  /// `enabled` covers the index only (the free list is always live) and is
  /// false when numGroups is 0; it is decided here once, so a pool created
  /// empty stays disabled after extend() (as in the reference). A copy
  /// transfer is refused: PAGE-copy checkpoints belong to the PAGE-unit
  /// store.
  static Result<StateGroupPool>
  create(int64_t numGroups, StateTransfer transfer = StateTransfer::none(),
         int64_t hashBlockSize = 1, bool enabled = true);

  //===--- Configuration --------------------------------------------------===//
  bool enabled() const { return enabled_; }
  const StateTransfer &transfer() const { return transfer_; }
  int64_t minForkTokens() const { return transfer_.forkTokens(); }
  double successorRoom() const { return transfer_.successorRoom(); }
  int64_t hashBlockSize() const { return hashBlockSize_; }

  //===--- Free list ------------------------------------------------------===//
  int32_t numGroups() const { return numGroups_; }
  int32_t numFree() const { return numFree_; }
  bool hasFree() const { return numFree_ > 0; }
  /// Queries answer false / 0 for any id outside the pool.
  bool isFree(GroupId g) const;
  /// Free and carrying a checkpoint.
  bool holdsCheckpoint(GroupId g) const;

  /// Hand out a group: lowest vacant, else the LRU checkpoint (counted as
  /// evicted); its checkpoint, if any, is invalidated. Error when nothing is
  /// free (callers check hasFree()).
  Result<GroupId> pop();
  /// Whether `e` is pop()'s refusal when no group is free or evictable.
  static bool isOutOfGroups(const Error &e);
  /// Take one specific free group, content and hash kept (a resume).
  Status claim(GroupId g);
  /// Hand a Held, unpinned group back; a hash files it at the LRU tail (being
  /// resumed from refreshes it), otherwise it becomes vacant.
  Status release(GroupId g);

  //===--- Index ----------------------------------------------------------===//
  /// File `g` as the checkpoint for `h` (reference `_index`). A previous
  /// group of `h` is orphaned (back to the vacant half if free). No-op when
  /// disabled.
  Status index(BlockHash h, GroupId g);
  /// Drop g's checkpoint, if it carries one. No-op when disabled.
  Status invalidate(GroupId g);
  /// The KV block of `h` left the block index: drop its checkpoint (counted
  /// as orphaned). Returns the group, or kNoGroup.
  GroupId unindex(BlockHash h);
  void clearIndex();
  /// The group filed under `h`, or kNoGroup (always when disabled).
  GroupId lookupGroup(BlockHash h) const;
  size_t numIndexed() const { return size_t(index_.size()); }

  //===--- State-cache protocol -------------------------------------------===//
  bool applies(const StateHolder &seq) const {
    return enabled_ && seq.hasPerReqCache;
  }
  /// Whether `seq` needs a group of its own to run: its state lives there
  /// whether or not the index is enabled. The reference attaches groups
  /// only where applies() holds, which leaves a stateful request without
  /// state when prefix caching is off; here admission, attach and free
  /// follow this test, and only the checkpoint protocol follows applies().
  bool holdsState(const StateHolder &seq) const {
    return seq.hasPerReqCache && numGroups_ > 0;
  }
  /// The largest L <= hitBlocks such that a checkpoint is filed under
  /// hashes[L-1] and the forward resuming there carries at least
  /// minForkTokens() tokens (numTokens - L*hashBlockSize); 0 if none.
  /// `assumeCheckpointed` drops the index test (the demand counterfactual),
  /// except under none() where nothing could ever be checkpointed (Q1).
  /// Identity when !applies(seq). hitBlocks must lie in [0, hashes.size()].
  Result<int64_t> resumableHit(const StateHolder &seq, int64_t hitBlocks,
                               const std::vector<BlockHash> &hashes,
                               bool assumeCheckpointed = false) const;
  /// Keep `seq`'s state as of this boundary under `h` (fork transfer only):
  /// the request moves to a fresh group, the old one is filed and pinned
  /// deferred for the next forward, which reads it. No free group: counted
  /// as dropped. `boundaryBlocks` is part of the protocol (PAGE checkpoints
  /// record it); a fork group does not need it.
  Status checkpoint(StateHolder &seq, int64_t boundaryBlocks, BlockHash h);
  CheckpointFates fates() const { return fates_; }

  //===--- Pins -----------------------------------------------------------===//
  /// Keep a Held group off the free list until its reader ran.
  Status pin(GroupId g, bool readerIsNextBatch = false);
  /// Drop one reference without freeing (the caller takes the group over).
  Status unpin(GroupId g);
  /// A reader is gone before it read: drop its pin, free the group if it was
  /// the last. kNoGroup, or a group whose pins already cleared, is a no-op.
  Status dropReader(GroupId g);
  /// Top of every scheduling pass: release every pinned group (ascending id)
  /// except those pinned deferred since the last call, which clear next time.
  void releasePins();
  bool isPinned(GroupId g) const { return pinCount(g) > 0; }
  int32_t pinCount(GroupId g) const;

  //===--- Resizing -------------------------------------------------------===//
  /// Add `count` vacant groups at the top (the caller provided the bytes).
  Status extend(int64_t count);
  /// Give up the top id (see GroupRetirement), or nullopt when it cannot go
  /// this pass: the pool is empty, the top is pinned, or it is live and
  /// nothing is free to move it into. A checkpointed top moves into the
  /// lowest vacant group, else the LRU checkpoint is spent for it, keeping
  /// its own LRU position.
  std::optional<GroupRetirement> retireTop();
  /// Queue a (src, dst) byte move for the next batch's maintenance ops. Ids
  /// may be retired ones (the usual src is a retired top).
  Status recordRelocation(GroupId src, GroupId dst);
  std::vector<GroupRelocation> takeRelocations();

  //===--- Introspection (tests, debugging) -------------------------------===//
  /// Ids ever allocated: numGroups() plus retired slots kept for reuse.
  int32_t slotCount() const { return int32_t(state_.size()); }
  /// The hash a slot carries (free or held), nullopt for none / no slot.
  std::optional<BlockHash> groupHash(GroupId g) const;
  /// Index entries sorted by hash.
  std::vector<std::pair<BlockHash, GroupId>> indexEntries() const;
  /// Checkpointed groups, least recently used first.
  std::vector<GroupId> checkpointLru() const;
  /// Checks every invariant in the file comment; on failure says which.
  bool invariantsHold(std::string *why = nullptr) const;

private:
  enum class Slot : uint8_t { Held, Vacant, Checkpointed, Retired };

  StateGroupPool() = default;

  bool inPool(GroupId g) const { return g.value >= 0 && g.value < numGroups_; }
  Error misuse(const char *op, GroupId g, const std::string &what) const;
  Error outOfRange(const char *op, GroupId g) const;

  // Free-list primitives. fileFree: Held -> Vacant/Checkpointed (tail);
  // unfileFree: Vacant/Checkpointed -> Held.
  void fileFree(int32_t g);
  void unfileFree(int32_t g);
  /// The one place a group's hash changes; re-files a free group.
  void setHash(int32_t g, std::optional<BlockHash> h);
  void invalidateUnchecked(int32_t g);
  void pinUnchecked(int32_t g, bool deferred);
  void dropPin(int32_t g);
  int32_t lowestVacant() const;
  int32_t relocationTarget(int32_t exclude);
  void rehomeCheckpoint(int32_t src, int32_t dst);
  void growSlots(int32_t count);

  void lruAppend(int32_t g);
  void lruUnlink(int32_t g);

  StateTransfer transfer_ = StateTransfer::none();
  int64_t hashBlockSize_ = 1;
  bool enabled_ = false;
  int32_t numGroups_ = 0;
  int32_t numFree_ = 0;

  // Per slot (flat arrays indexed by GroupId::value).
  std::vector<Slot> state_;
  std::vector<BlockHash> hash_;
  std::vector<uint8_t> hasHash_;
  std::vector<int32_t> lruPrev_, lruNext_; // Checkpointed only
  std::vector<int32_t> pins_;
  std::vector<uint8_t> deferred_;
  std::vector<int32_t> pinnedPos_; // position in pinned_, -1 if unpinned

  int32_t lruHead_ = -1, lruTail_ = -1, numCheckpointed_ = 0;
  // Vacant groups, lowest first; rebuilt larger when extend() grows slots.
  detail::MinIdSet vacant_;
  int32_t numVacant_ = 0;
  std::vector<int32_t> pinned_; // unordered; sorted when released
  // hash -> group; at most one entry per slot, so sized by slotCount().
  detail::HashIndex index_;
  std::vector<GroupRelocation> relocations_;
  CheckpointFates fates_;
};

} // namespace poolrt

#endif // POOLRT_STATEGROUPPOOL_H
