//===- PageUnitStore.h - State checkpoint images in PAGE units --*- C++ -*-===//
//
// PAGE-unit checkpoint images (spec/semantics.md §9). A "copy" state
// transfer (DeepSeek-V4) does not disturb the owner's Active Slot: the
// checkpoint is a byte image of part of the slot, scattered into
// `units_per_checkpoint` arbitrary blocks borrowed from the KV BlockPool as
// raw units, and indexed by the prefix hash of the boundary it was taken at.
//
// Why it is shaped like this
// --------------------------
// A store is a GPU copy that lands one scheduling pass later, so a record
// cannot be visible to lookups when it is issued:
//
//   COPYING --complete_inflight--> READY --unindex/clear/evict--> EVICTING
//      |                            (indexed, in LRU,               |
//      +--unindex/clear-------------> evictable if unpinned)        v
//                                                           units released
//                                                 (once no writer, no reader)
//
// A restore reads a READY image into a slot, also one pass later: it pins the
// record (pin_count) so eviction cannot hand its units to live KV while the
// gather is queued or in flight. An unindexed or cleared record keeps its
// units (EVICTING) until its writer has landed and its last reader is done.
//
// Units are priced off the image, not the slot: ceil(image_bytes /
// page_unit_bytes). Eviction is least-recently-used over READY records; a
// restore refreshes a record's LRU position.
//
// `ensure_free_units` refuses a count the cache cannot reach *before* it
// evicts anything: evicting until the free list reaches the count and only
// then giving up would destroy the whole cache just to say no, every pass,
// for as long as the pressure lasts.
//
// Invariants
// ----------
//   * Every record holds exactly `units_per_checkpoint` raw units of the pool,
//     reserved under ("state-checkpoint", id), until it is released.
//   * lookup(h) is a record only if it is READY; the LRU holds exactly the
//     READY records; a COPYING record is in `pending` under its hash.
//   * A record is released only when it is not COPYING-in-flight and its
//     pin_count is 0.
//
// Silent failure modes
// --------------------
//   * take_restore_ops must be called between begin_restore and the next
//     complete_inflight: complete_inflight only drops the pins of restores
//     that were taken (issued), so an untaken restore keeps its record pinned
//     (and unevictable) until it is taken or cancelled.
//   * The store owns its units: releasing them through the pool behind the
//     store's back makes release fail; that internal error is kept in
//     health() (the store carries on without the record).
//   * Not thread-safe; the scheduler thread owns it, like the pool.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_PAGEUNITSTORE_H
#define POOLRT_PAGEUNITSTORE_H

#include "poolrt/BlockHash.h"
#include "poolrt/BlockPool.h"
#include "poolrt/Status.h"
#include "poolrt/detail/HashIndex.h"
#include "poolrt/detail/IntrusiveLru.h"
#include "poolrt/detail/TypedId.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace poolrt {

/// One checkpoint image record; ids increase from 0 and are never reused.
using CheckpointId = detail::TypedId<struct CheckpointIdTag, int64_t>;
inline constexpr CheckpointId kNoCheckpoint{};

/// An Active Slot of the per-request state arena (a store's source, a
/// restore's destination).
using SlotIndex = detail::TypedId<struct SlotIndexTag, int32_t>;

/// Runtime geometry of the images (§9). page_unit_bytes = PAGE entry bytes,
/// slot_bytes = STATE entry bytes, image_bytes = the part of a slot an image
/// holds (<= slot_bytes).
class PagedStateCheckpointSpec {
public:
  /// InvalidArgument, in this order: any size < 1 ("<name> must be a positive
  /// integer"), image_bytes > slot_bytes, an empty layout id, and a given
  /// units_per_checkpoint (the manifest's, as the compiler solved it) that
  /// is not the units the image covers. Without one, the units are derived
  /// (a spec built by hand).
  static Result<PagedStateCheckpointSpec>
  create(int64_t pageUnitBytes, int64_t slotBytes, std::string layoutId,
         int64_t imageBytes,
         std::optional<int64_t> unitsPerCheckpoint = std::nullopt);
  int64_t pageUnitBytes() const { return pageUnitBytes_; }
  int64_t slotBytes() const { return slotBytes_; }
  int64_t imageBytes() const { return imageBytes_; }
  const std::string &layoutId() const { return layoutId_; }
  /// The PAGE units one image spans (read from the artifact, not derived
  /// again, when the spec came from one).
  int64_t unitsPerCheckpoint() const { return unitsPerCheckpoint_; }

private:
  PagedStateCheckpointSpec() = default; // only through create()
  int64_t pageUnitBytes_ = 0, slotBytes_ = 0, imageBytes_ = 0,
          unitsPerCheckpoint_ = 0;
  std::string layoutId_;
};

/// Scatter the checkpointed part of Active Slot `srcSlot` into `unitIds`.
struct CheckpointStoreOp {
  SlotIndex srcSlot;
  std::vector<BlockId> unitIds;
  int64_t imageBytes = 0;
  std::string layoutId;
};

/// Gather an image from `unitIds`, in order, back into Active Slot `dstSlot`.
struct CheckpointRestoreOp {
  SlotIndex dstSlot;
  std::vector<BlockId> unitIds;
  int64_t imageBytes = 0;
  std::string layoutId;
};

enum class CheckpointState : uint8_t { Copying, Ready, Evicting };
const char *checkpointStateName(CheckpointState s);

/// A read-only view of one record.
struct CheckpointRecordView {
  CheckpointId id;
  BlockHash prefixHash = kNoHash;
  CheckpointState state = CheckpointState::Copying;
  int32_t pinCount = 0;
  const std::vector<BlockId> *unitIds = nullptr;
};

class PageUnitCheckpointStore {
public:
  /// The store borrows units from `pool`, which must outlive it.
  PageUnitCheckpointStore(BlockPool &pool, PagedStateCheckpointSpec spec);

  const PagedStateCheckpointSpec &spec() const { return spec_; }
  int64_t unitsPerCheckpoint() const { return spec_.unitsPerCheckpoint(); }

  //--- queries ------------------------------------------------------------//
  /// The READY record indexed under `h`, or kNoCheckpoint.
  CheckpointId lookup(BlockHash h) const;
  bool contains(BlockHash h) const { return lookup(h).valid(); }
  bool containsOrPending(BlockHash h) const;
  /// Whether `count` units could be had, evicting READY unpinned records
  /// (other than the one `protectedHash` names) if it came to that. Walks the
  /// LRU only while short, and stops as soon as the shortfall is covered.
  bool hasAvailableUnits(int64_t count,
                         std::optional<BlockHash> protectedHash = {}) const;
  /// Sum of units of READY unpinned records.
  int64_t reclaimableUnits() const;
  std::optional<CheckpointRecordView> record(CheckpointId id) const;
  int64_t numRecords() const { return liveRecords; }

  //--- eviction -----------------------------------------------------------//
  /// Raise the pool's free count to `count`, evicting least recently used
  /// READY unpinned records. Refuses (evicting nothing) when unreachable.
  bool ensureFreeUnits(int64_t count);

  //--- lifecycle ----------------------------------------------------------//
  /// nullopt when `h` is READY or pending, or the units cannot be had.
  std::optional<CheckpointStoreOp> beginStore(BlockHash h, SlotIndex srcSlot);
  /// READY only: pins the record, refreshes its LRU position and queues the
  /// restore (returned here and again by takeRestoreOps).
  std::optional<CheckpointRestoreOp> beginRestore(BlockHash h,
                                                  SlotIndex dstSlot);
  /// Hand the queued restores to the batch being built; their pins drop at
  /// the next completeInflight.
  std::vector<CheckpointRestoreOp> takeRestoreOps();
  /// Drop queued (not yet taken) restores into `dstSlot` and their pins.
  void cancelQueuedRestore(SlotIndex dstSlot);
  /// The previous batch ran: stores become READY (or are released when
  /// unindexed meanwhile, or when another record for the hash got READY
  /// first), taken restores drop their pins.
  void completeInflight();
  /// Unindex the READY or pending record for `h`: EVICTING, released now
  /// unless a store is in flight or readers pin it. False if none.
  bool unindex(BlockHash h);
  /// Everything EVICTING; what is safe is released now, the rest when its
  /// writer lands or its readers finish.
  void clear();

  //--- checkpoint intents (what the coordinator batches per pass) ----------//
  /// Request a checkpoint of `h` from `srcSlot` on behalf of `requester` (a
  /// sequence); a requester's later intent replaces its earlier one.
  void requestCheckpoint(int64_t requester, BlockHash h, SlotIndex srcSlot);
  /// Drop the pending intents of `requester`.
  void forgetRequester(int64_t requester);
  /// `requester` is gone but its intents stand (the slot keeps its bytes
  /// until the stores run, before any forward or restore of the batch): they
  /// move to an id of their own, which no later intent replaces.
  void detachRequester(int64_t requester);
  struct CheckpointOps {
    std::vector<CheckpointStoreOp> stores;
    std::vector<CheckpointRestoreOp> restores;
  };
  /// At batch construction: pending intents become stores (skipped when the
  /// hash is READY or pending; `dropped` when beginStore refuses, else
  /// `kept`), and the queued restores are taken.
  CheckpointOps takeCheckpointOps();

  //--- counters -----------------------------------------------------------//
  int64_t checkpointsKept() const { return kept; }
  int64_t checkpointsDropped() const { return dropped; }
  int64_t evictions() const { return evictions_; }
  /// The first internal error met (a unit release the pool refused); ok
  /// when none.
  const Status &health() const { return health_; }

  //--- moving the pool boundary --------------------------------------------//
  /// The owner tag of every unit this store reserves.
  static constexpr const char *kUnitTag = "state-checkpoint";
  /// Nothing is queued or in flight (stores, restores, intents' copies):
  /// the units' bytes are at rest and may be moved.
  /// A detached intent's slot may be freed and retired: its bytes must stay
  /// until the store ran, so it counts as queued too.
  bool atRest() const {
    return inflightStores.empty() && inflightRestores.empty() &&
           queuedRestores.empty() && numDetached == 0;
  }
  /// Piece `piece` of checkpoint `owner` moved from unit `from` to `to`
  /// (BlockPool::retireTopUnit); the caller copies the bytes. Internal
  /// error when the record does not hold `from` there.
  Status relocateUnit(int64_t owner, int32_t piece, BlockId from, BlockId to);
  /// A slot moved (StateGroupPool::retireTop): pending intents read `to`.
  void relocateSlot(SlotIndex from, SlotIndex to);

  /// Verify the invariants above (and the pool's); O(records + pool).
  Status checkInvariants() const;

private:
  static constexpr int32_t kNil = -1;
  struct Record {
    CheckpointId id;
    BlockHash prefixHash = kNoHash;
    std::vector<BlockId> unitIds;
    CheckpointState state = CheckpointState::Copying;
    int32_t pinCount = 0;
    bool live = false;          // slot in use
    bool storeInflight = false; // its scatter has not landed yet
  };
  struct Intent {
    int64_t requester;
    BlockHash hash;
    SlotIndex srcSlot;
    bool detached = false; // its requester is gone (detachRequester)
  };

  int32_t slotOf(CheckpointId id) const;
  bool evictable(int32_t slot, int32_t protectedSlot) const;
  int32_t nextVictim() const;
  void evict(int32_t slot);
  void releaseRecord(int32_t slot);
  void releaseRestorePin(CheckpointId id);
  /// Take `slot` out of the LRU if it is there.
  void lruUnlink(int32_t slot);
  UnitOwner ownerOf(CheckpointId id) const {
    return UnitOwner{kUnitTag, id.value};
  }

  BlockPool &pool;
  PagedStateCheckpointSpec spec_;
  // Records live in a slot array; ids map to slots through idToSlot.
  std::vector<Record> slots;
  std::vector<int32_t> freeSlots;
  detail::HashIndex idToSlot;
  detail::HashIndex readyByHash;   // hash -> slot, READY records
  detail::HashIndex pendingByHash; // hash -> slot, COPYING records
  detail::IntrusiveLru lru; // READY records' slots, least recently used first
  std::vector<CheckpointId> inflightStores;
  std::vector<std::pair<CheckpointId, CheckpointRestoreOp>> queuedRestores;
  std::vector<CheckpointId> inflightRestores;
  std::vector<Intent> intents;
  int64_t nextId = 0;
  // Ids of detached intents count up from the least int64 (no engine's).
  int64_t nextDetached = std::numeric_limits<int64_t>::min();
  int64_t numDetached = 0; // detached intents not yet taken
  int64_t liveRecords = 0;
  int64_t kept = 0, dropped = 0, evictions_ = 0;
  Status health_;
};

} // namespace poolrt

#endif // POOLRT_PAGEUNITSTORE_H
