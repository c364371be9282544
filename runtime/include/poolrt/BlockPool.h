//===- BlockPool.h - Paged blocks, ref counts, content index ----*- C++ -*-===//
//
// The PAGE pool's block allocator (spec/semantics.md §5): blocks with
// reference counts, a content-hash index for prefix hits, lazy eviction, raw
// units for PAGE-backed state checkpoints, and resizing at the top.
//
// Why it is shaped like this
// --------------------------
// Eviction is lazy: a freed block keeps its hash and tokens until it is
// handed out for something else, so a later request can still claim it.
// `allocate`, not `free`, is therefore the eviction event, and `on_evict`
// fires there (and when `retireTop` spends a cached block).
//
// Free blocks are in one of two halves, by whether they hold reusable
// content:
//   vacant  no hash. Nothing is lost by taking one, so they go first, lowest
//           id first -- which also drains the top of the pool, where a
//           shrinking boundary retires blocks.
//   cached  reachable by hash. Least-recently-freed first, so handing one
//           out evicts the coldest content.
// One queue for both would evict a cached block while a vacant one waited.
//
// Every operation is O(1) on flat arrays indexed by BlockId: the vacant half
// is a hierarchical bitmap (lowest member by count-trailing-zeros), the
// cached half an intrusive doubly linked list threaded through the block
// array (a prefix hit takes a *named* block out of the middle), the index an
// open-addressing table sized once for one entry per block. Nothing
// allocates after construction except token storage on first publish.
//
// Where this differs from the reference (spec "Known reference quirks")
// -------------------------------------------------------------------
// Q2  Freeing a block that is not held, claiming or allocating an id outside
//     the pool, allocating a held block, or touching a raw unit through the
//     block API is an error (Internal, naming the id and the operation) and
//     leaves the pool unchanged. The reference decremented the count to -1
//     and corrupted the free lists. Errors are returned in every build type
//     (not asserted), so callers and tests can see them.
// Q8  When a block's count reaches 0 it is filed as cached only if the index
//     still maps its hash to it; otherwise its hash and tokens are cleared and
//     it is filed as vacant. By the same rule, a *free* cached block whose
//     hash `publish` re-points to another block leaves the cached half at
//     once and becomes vacant. So the cached half is exactly the set of free
//     blocks a lookup can reach, and no unreachable block competes in LRU
//     order. A *held* block keeps a displaced hash (a sequence's next hash
//     chain reads it) until it is freed.
// Also refused (the reference accepted them and drifted): publishing a block
// that is not held, publishing kNoHash, claiming a raw unit, retiring a top
// block that `pop` took and nobody allocated yet (it has no owner to move
// it), extending by a negative count. Re-publishing a block under a new hash
// drops the old hash's index entry first (firing on_evict), so the index
// never names a block that holds other content.
//
// Invariants (checkInvariants() verifies all of them in O(max_blocks))
// ----------
//   * Each id in [0, numBlocks) is in exactly one state: Vacant (free, no
//     hash), Cached (free, index[hash] == id), Popped (taken by pop, awaiting
//     allocate/claim), Held (ref >= 1), RawUnit (ref 1, owner recorded).
//     Ids in [numBlocks, maxBlocks) are Retired: ref 0, no hash.
//   * The bitmap holds exactly the Vacant ids; the LRU list exactly the
//     Cached ids, in the order they were last freed.
//   * numFree = |Vacant| + |Cached|; numUsed = |Held| + |RawUnit|.
//   * index[h] == b implies block b holds hash h and b < numBlocks.
//
// Silent failure modes (what breaks without an error if misused)
// --------------------
//   * `pop` takes a block off the free list but does not mark it used; a
//     caller that pops and never allocates/claims leaks the block (it is in
//     no list and counted neither free nor used).
//   * `retireTop` relocates a held block and reports where: every holder's
//     block table must be rewritten and the bytes copied in the same pass,
//     or holders read the retired id.
//   * The on_evict callback runs inside allocate/publish/retireTop; it must
//     not call back into the pool.
//   * Not thread-safe: one owner (the scheduler thread) calls it.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_BLOCKPOOL_H
#define POOLRT_BLOCKPOOL_H

#include "poolrt/BlockHash.h"
#include "poolrt/Status.h"
#include "poolrt/detail/HashIndex.h"
#include "poolrt/detail/MinIdSet.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace poolrt {

/// A PAGE block (or raw unit) of one BlockPool. Not interchangeable with any
/// other id: construction from an integer is explicit.
struct BlockId {
  int32_t value = -1;
  constexpr BlockId() = default;
  constexpr explicit BlockId(int32_t v) : value(v) {}
  constexpr bool valid() const { return value >= 0; }
  friend constexpr bool operator==(BlockId a, BlockId b) {
    return a.value == b.value;
  }
  friend constexpr bool operator!=(BlockId a, BlockId b) {
    return a.value != b.value;
  }
  friend constexpr bool operator<(BlockId a, BlockId b) {
    return a.value < b.value;
  }
};
inline constexpr BlockId kNoBlock{};

/// What taking the highest block out of the pool cost. `movedTo` is kNoBlock
/// when the block was free and simply dropped; otherwise the block's
/// identity (ref count, hash, tokens) now lives there and every holder must
/// follow.
struct BlockRetirement {
  BlockId retired;
  BlockId movedTo;
};

/// Who reserved a raw unit: a tag and a number, e.g. ("state-checkpoint", 7).
struct UnitOwner {
  std::string tag;
  int64_t id = 0;
  bool operator==(const UnitOwner &o) const {
    return id == o.id && tag == o.tag;
  }
  /// Python-style, as the reference prints it: ('state-checkpoint', 7).
  std::string str() const;
};

enum class BlockState : uint8_t { Vacant, Cached, Popped, Held, RawUnit, Retired };
const char *blockStateName(BlockState s);

class BlockPool {
public:
  using EvictCallback = std::function<void(BlockHash)>;

  /// `maxBlocks` (default `numBlocks`) is how far `extend` may grow.
  /// InvalidArgument unless 0 <= numBlocks <= maxBlocks < 2^31 - 1.
  static Result<BlockPool> create(int64_t numBlocks,
                                  std::optional<int64_t> maxBlocks = std::nullopt,
                                  EvictCallback onEvict = {});
  void setOnEvict(EvictCallback cb) { onEvict = std::move(cb); }

  //--- counts -------------------------------------------------------------//
  int32_t numBlocks() const { return numBlocks_; }
  int32_t maxBlocks() const { return int32_t(meta.size()); }
  int32_t numFree() const { return numFree_; }
  int32_t numUsed() const { return numUsed_; }
  /// Blocks reachable by content hash, held or merely not yet overwritten.
  int32_t numIndexed() const { return int32_t(index.size()); }
  bool hasFree(int64_t n) const { return numFree_ >= n; }

  //--- one block (ids outside [0, maxBlocks) read as an empty Retired block)
  BlockState state(BlockId b) const;
  bool isUsed(BlockId b) const; // Held or RawUnit
  int32_t refCount(BlockId b) const;
  BlockHash hash(BlockId b) const; // kNoHash when none
  const std::vector<int32_t> &tokenIds(BlockId b) const;

  //--- content index ------------------------------------------------------//
  /// The block indexed under `h`, or kNoBlock.
  BlockId lookup(BlockHash h) const {
    return BlockId(index.find(h));
  }
  /// Index held block `b` under the hash of the tokens it now holds.
  /// Re-points `h` if another block had it (that block becomes unreachable;
  /// see Q8 above).
  Status publish(BlockId b, BlockHash h, const int32_t *tokens = nullptr,
                 size_t numTokens = 0);
  /// Drop every index entry without on_evict calls. Free and popped blocks
  /// lose their content (every free block is vacant afterwards); held blocks
  /// keep theirs, unreachable.
  void clearIndex();

  //--- allocation ---------------------------------------------------------//
  /// The next free block (vacant lowest id first, else least recently freed
  /// cached), taken off the free list but not yet used: follow with
  /// allocate or claim. Internal error "No free blocks available" if none.
  Result<BlockId> pop() {
    BlockId b = takeFree();
    if (!b.valid())
      return noFreeBlocks();
    return b;
  }
  /// Same as pop, kNoBlock instead of an error.
  BlockId takeFree();
  /// Take a free or popped block for fresh content, evicting what it held.
  Status allocate(BlockId b);
  /// Take a share of `b` for the content it holds (a prefix hit): a held
  /// block gains a reference, a free or popped one becomes held with its
  /// hash kept. A cached block leaves the LRU, so its next free re-queues it
  /// at the tail.
  Status claim(BlockId b);
  /// Drop one reference; at 0 the block becomes cached (index still maps its
  /// hash to it) or vacant.
  Status free(BlockId b);

  //--- raw units (PAGE-unit checkpoint images) ----------------------------//
  /// Reserve `count` free blocks for `owner`, piece i recorded as
  /// (owner, i). nullopt when fewer than `count` are free (nothing taken).
  /// InvalidArgument for a negative count or an owner with an empty tag.
  Result<std::optional<std::vector<BlockId>>>
  reserveUnits(int64_t count, const UnitOwner &owner);
  /// Release a whole reservation, in the order it was reserved. Checked
  /// before anything is released: duplicates -> InvalidArgument; a unit
  /// not owned by (owner, its position) -> Internal.
  Status releaseUnits(const std::vector<BlockId> &ids, const UnitOwner &owner);

  //--- resizing -----------------------------------------------------------//
  /// Grow by up to `count` vacant blocks at the top (capped at maxBlocks);
  /// returns how many were added.
  Result<int32_t> extend(int64_t count);
  /// Take block numBlocks-1 out of the pool. nullopt when the pool is
  /// empty, the top is a raw unit or popped, or it is held and nothing is
  /// free to move it into. A held top moves into the next free block
  /// (vacant first, else the oldest cached, whose content is the price).
  std::optional<BlockRetirement> retireTop();

  //--- debug --------------------------------------------------------------//
  /// Verify every invariant listed in the header comment; O(maxBlocks).
  Status checkInvariants() const;
  bool invariantsHold() const { return checkInvariants().ok(); }

private:
  static constexpr int32_t kNil = -1;
  struct Meta {
    BlockHash hash = kNoHash;
    int32_t refCount = 0;
    int32_t lruPrev = kNil; // cached half, threaded through the array
    int32_t lruNext = kNil;
    BlockState state = BlockState::Retired;
    bool indexed = false;   // index[hash] == this block (the Q8 test, O(1))
    bool hasTokens = false; // tokens[b] non-empty; spares a cold read
  };
  struct RawOwner {
    int32_t tag = -1; // index into ownerTags; -1: not a raw unit
    int32_t piece = 0;
    int64_t id = 0;
  };

  BlockPool(int32_t numBlocks, int32_t maxBlocks, EvictCallback onEvict);
  static Error noFreeBlocks();
  Error misuse(const char *op, BlockId b, const char *why) const;
  bool inPool(BlockId b) const {
    return b.value >= 0 && b.value < numBlocks_;
  }

  void lruPushBack(int32_t b);
  void lruUnlink(int32_t b);
  /// Take a free block (Vacant or Cached) out of its half.
  void takeNamed(int32_t b);
  /// File a block whose count just reached 0 (or that must move halves).
  void fileFree(int32_t b);
  /// Drop b's index entry if the index maps its hash to it (on_evict), then
  /// forget its content.
  void unindex(int32_t b);
  void forgetContent(int32_t b);
  void adopt(int32_t dst, int32_t src);
  std::string ownerText(const RawOwner &o) const;
  int32_t internTag(const std::string &tag);

  std::vector<Meta> meta;                  // [maxBlocks]
  std::vector<std::vector<int32_t>> tokens; // [maxBlocks], cold
  std::vector<RawOwner> rawOwner;          // [maxBlocks], cold
  std::vector<std::string> ownerTags;
  detail::MinIdSet vacant;
  detail::HashIndex index;
  int32_t lruHead = kNil, lruTail = kNil;
  int32_t numBlocks_ = 0;
  int32_t numFree_ = 0;
  int32_t numUsed_ = 0;
  EvictCallback onEvict;
};

} // namespace poolrt

#endif // POOLRT_BLOCKPOOL_H
