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
// fires there (also when `retireTop` spends a cached block, and when
// `publish` renames a block whose old name was indexed).
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
// Every operation is O(1) on flat arrays indexed by BlockId (takeFree
// amortized: it drops the stale members it meets at the LRU list's front,
// at most one per block an earlier run claim took; see the invariants).
// The vacant half is a hierarchical bitmap (lowest member by
// count-trailing-zeros), the cached half an intrusive doubly linked list
// over a parallel array (a prefix hit takes a *named* block out of the
// middle; detail/IntrusiveLru.h),
// the content index a linear-probing table of 8-byte (tag, id) slots that
// finds the full key in the block's own metadata (detail/TaggedIndex.h).
// The bitmap and the list hand out exactly what the reference's
// heap-with-stale-entries and ordered dict do (bench/run_block_pool.sh
// checks it on a whole trace). Nothing allocates after construction except
// token storage on first publish.
//
// Memory per block: 32 B metadata (hash, token fingerprint, state) + 8 B
// LRU links + 64 B index (load at most 1/8) + the token vector header. The index is sized for speed, not
// space: probe-loop mispredictions are most of the pool's cost. On the
// prefix trace (bench/), 16-byte slots at load 1/2 ran 5.7 ns per pool
// operation, 8-byte slots at load 1/4 3.7, at 1/8 3.0. For pools of tens of
// millions of blocks, where 64 B per block starts to matter, lower
// kIndexSlotsPerEntry.

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
//   * The bitmap holds exactly the Vacant ids. The LRU list holds every
//     Cached id, in the order they were last freed, and may also hold Held
//     ids that a run claim took out of the cache (claimIndexedRun leaves
//     them linked: a stale member costs the claim nothing, and leaves the
//     list at its block's next free or when takeFree reaches it at the
//     front). Skipping stale members leaves the Cached ids' order exactly
//     the reference's.
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
#include "poolrt/detail/IntrusiveLru.h"
#include "poolrt/detail/MinIdSet.h"
#include "poolrt/detail/TaggedIndex.h"
#include "poolrt/detail/TypedId.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace poolrt {

/// A PAGE block (or raw unit) of one BlockPool. Not interchangeable with any
/// other id: construction from an integer is explicit.
using BlockId = detail::TypedId<struct BlockIdTag, int32_t>;
inline constexpr BlockId kNoBlock{};

/// What taking the highest block out of the pool cost. `movedTo` is kNoBlock
/// when the block was free and simply dropped; otherwise the block's
/// identity (ref count, hash, tokens) now lives there and every holder must
/// follow.
struct BlockRetirement {
  BlockId retired;
  BlockId movedTo;
  /// Set when the retired block was a raw unit moved with retireTopUnit:
  /// its owner's record must name movedTo as piece `unitPiece`.
  std::optional<int64_t> unitOwnerId;
  int32_t unitPiece = 0;
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

enum class BlockState : uint8_t {
  Vacant,
  Cached,
  Popped,
  Held,
  RawUnit,
  Retired
};
const char *blockStateName(BlockState s);

class BlockPool {
public:
  using EvictCallback = std::function<void(BlockHash)>;

  /// `maxBlocks` (default `numBlocks`) is how far `extend` may grow.
  /// InvalidArgument unless 0 <= numBlocks <= maxBlocks < 2^31 - 1.
  static Result<BlockPool>
  create(int64_t numBlocks, std::optional<int64_t> maxBlocks = std::nullopt,
         EvictCallback onEvict = {});
  void setOnEvict(EvictCallback cb) { onEvict = std::move(cb); }

  //--- counts -------------------------------------------------------------//
  int32_t numBlocks() const { return numBlocks_; }
  int32_t maxBlocks() const { return int32_t(meta.size()); }
  int32_t numFree() const { return numFree_; }
  /// Whether a free block holds nothing (a pop takes it before any cached
  /// one): the pool is not yet under pressure.
  bool hasVacant() const { return !vacant.empty(); }
  int32_t numUsed() const { return numUsed_; }
  /// Blocks reachable by content hash, held or merely not yet overwritten.
  int32_t numIndexed() const { return int32_t(index.size()); }
  bool hasFree(int64_t n) const { return numFree_ >= n; }

  //--- one block (ids outside [0, maxBlocks) read as an empty Retired block)
  BlockState state(BlockId b) const {
    if (b.value < 0 || b.value >= maxBlocks())
      return BlockState::Retired;
    return meta[size_t(b.value)].state;
  }
  bool isUsed(BlockId b) const { return usedState(state(b)); } // Held or RawUnit
  /// Whether the index maps `h` to `b` right now (lookup(h) == b), from
  /// the block alone: a block is indexed exactly when the index maps its
  /// hash to it. Lets a caller re-check an id it looked up earlier without
  /// probing the index again.
  bool indexedAs(BlockId b, BlockHash h) const {
    if (b.value < 0 || b.value >= numBlocks_)
      return false;
    const Meta &m = meta[size_t(b.value)];
    return m.indexed && m.hash == h;
  }
  /// Lookup error for an id outside [0, maxBlocks): unlike the state
  /// queries, a count of 0 would read as "a free block" to a caller that
  /// passed a wrong id. (A retired id below maxBlocks reads 0.)
  Result<int32_t> refCount(BlockId b) const;
  BlockHash hash(BlockId b) const; // kNoHash when none
  const std::vector<int32_t> &tokenIds(BlockId b) const;
  /// The collision check: does block `b` store `count` tokens whose
  /// fingerprint (tokenPrint) is `print`? False for a block without tokens.
  bool tokensMatch(BlockId b, size_t count, uint64_t print) const {
    if (b.value < 0 || b.value >= numBlocks_)
      return false;
    const Meta &m = meta[size_t(b.value)];
    return m.hasTokens && m.printCount == count && m.print == print;
  }

  //--- content index ------------------------------------------------------//
  /// The block indexed under `h`, or kNoBlock.
  BlockId lookup(BlockHash h) const { return BlockId(index.find(h, keyOf())); }
  /// Admission's match of a whole prompt, in one pass: how many of
  /// hashes[0..n), in order, are indexed by blocks that hold `count` tokens
  /// of fingerprint prints[i] (the collision check of tokensMatch); their
  /// ids go to ids[0..k). ids[0..numHints) arrive holding hints, the ids an
  /// earlier match found (a request's last attempt): a hint is taken where
  /// its block is still indexed under that hash, which is exactly when the
  /// index would return it, so hints change the cost, never the answer;
  /// the index is probed only where a hint fails. `prints` null matches the
  /// index alone (admission then computes fingerprints for the found blocks
  /// only and matches again with those as hints). `live`, when given,
  /// receives how many of the k matched blocks are used (held or raw).
  /// No allocation; ids outside the pool are misses, never read.
  inline size_t matchRun(const BlockHash *hashes, const uint64_t *prints,
                         size_t count, size_t n, BlockId *ids, size_t numHints,
                         size_t *live = nullptr) const;
  /// Claim ids[0..n) in order while each is indexed under hashes[i] and
  /// held or cached (what matchRun found, if nothing moved since); returns
  /// how many it claimed. The first one that is not stops it, untouched,
  /// for the caller's checked path (claim, with its errors). A cached
  /// block it takes stays linked in the LRU list as a stale member (see
  /// the invariants): the claim never touches the list.
  inline size_t claimIndexedRun(const BlockId *ids, const BlockHash *hashes, size_t n);
  /// Index held block `b` under the hash of the tokens it now holds.
  /// Re-points `h` if another block had it (that block becomes unreachable;
  /// see Q8 above).
  inline Status publish(BlockId b, BlockHash h, const int32_t *tokens = nullptr,
                        size_t numTokens = 0);
  /// Drop every index entry without on_evict calls. Free and popped blocks
  /// lose their content (every free block is vacant afterwards); held blocks
  /// keep theirs, unreachable.
  void clearIndex();

  //--- allocation ---------------------------------------------------------//
  /// The next free block (vacant lowest id first, else least recently freed
  /// cached), taken off the free list but not yet used: follow with
  /// allocate or claim. Internal error "No free blocks available" if none.
  /// Whether `e` is pop()'s refusal of an empty pool (bindings raise it
  /// as its own type).
  static bool isOutOfBlocks(const Error &e) {
    return e.message == noFreeBlocks().message;
  }
  Result<BlockId> pop() {
    BlockId b = takeFree();
    if (!b.valid())
      return noFreeBlocks();
    return b;
  }
  /// Same as pop, kNoBlock instead of an error.
  inline BlockId takeFree();
  /// Take a free or popped block for fresh content, evicting what it held.
  inline Status allocate(BlockId b);
  /// pop() then allocate() up to n times, ids to out[0..k): the next free
  /// blocks in pop's order, each held once with its old content evicted
  /// (on_evict as allocate fires it). Returns k, less than n only when the
  /// pool ran out of free blocks. A prefill's fresh blocks in one call, no
  /// status per block.
  inline size_t allocateFresh(size_t n, BlockId *out);
  /// Take a share of `b` for the content it holds (a prefix hit): a held
  /// block gains a reference, a free or popped one becomes held with its
  /// hash kept. A cached block leaves the LRU, so its next free re-queues it
  /// at the tail.
  inline Status claim(BlockId b);
  /// Drop one reference; at 0 the block becomes cached (index still maps its
  /// hash to it) or vacant.
  inline Status free(BlockId b);
  /// Make cached block `b` the next eviction victim (nothing can resume
  /// from it: a stateful model's blocks past its last checkpoint). A held,
  /// vacant or out-of-range block is left as it is.
  void demote(BlockId b);

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
  /// retireTop for a top that is a raw unit of `owner`'s tag: the unit
  /// moves into the next free block, keeping its (owner, piece), and the
  /// caller re-points the owner's record and copies the bytes. nullopt when
  /// the top is not such a unit or nothing is free.
  std::optional<BlockRetirement> retireTopUnit(const std::string &ownerTag);

  //--- debug --------------------------------------------------------------//
  /// Verify every invariant listed in the header comment; O(maxBlocks).
  Status checkInvariants() const;
  bool invariantsHold() const { return checkInvariants().ok(); }

  /// Held or RawUnit, from the state alone (the two are adjacent).
  static bool usedState(BlockState s) {
    return uint8_t(uint8_t(s) - uint8_t(BlockState::Held)) < 2;
  }
  static_assert(uint8_t(BlockState::RawUnit) == uint8_t(BlockState::Held) + 1,
                "usedState reads Held and RawUnit as one range");
  /// How many of eight states, a byte each, are used (usedState), without
  /// a branch or a per-byte loop: a byte's top bit after adding 0x80 - Held
  /// says "at least Held", after adding 0x80 - Retired "at least Retired"
  /// (no byte carries into the next: every state is at most Retired).
  static size_t usedStates(uint64_t states) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kTops = kOnes << 7;
    const uint64_t atLeastHeld = states + kOnes * (0x80 - uint8_t(BlockState::Held));
    const uint64_t atLeastRetired = states + kOnes * (0x80 - uint8_t(BlockState::Retired));
    const uint64_t tops = atLeastHeld & ~atLeastRetired & kTops;
    return size_t(((tops >> 7) * kOnes) >> 56);
  }
  static_assert(uint8_t(BlockState::Retired) == uint8_t(BlockState::RawUnit) + 1 &&
                    uint8_t(BlockState::Retired) < 0x80,
                "usedStates: Retired is the last state, and a byte's sum stays in it");

private:
  static constexpr int32_t kNil = -1;
  // Index load at most 1/8: 64 bytes of index per block. Probe-loop
  // mispredictions are the pool's main cost; see TaggedIndex.h.
  static constexpr int kIndexSlotsPerEntry = 8;
  // 32 bytes, so an entry never straddles two cache lines. The token
  // fingerprint lives here too: admission's collision check then reads one
  // line per block, not two.
  struct Meta {
    BlockHash hash = kNoHash;
    uint64_t print = 0;      // tokenPrint of tokens[b], where hasTokens
    // printCount, indexed, hasTokens and the zero pad are one 8-byte word
    // (matchWord): admission's per-block check of all three is one load
    // and one compare.
    uint32_t printCount = 0; // the tokens it covers
    bool indexed = false;   // index[hash] == this block (the Q8 test, O(1))
    bool hasTokens = false; // tokens[b] non-empty; spares a cold read
    uint16_t zero = 0;      // never written: keeps matchWord exact
    int32_t refCount = 0;
    BlockState state = BlockState::Retired;
  };
  static_assert(sizeof(Meta) == 32, "a Meta entry stays inside one cache line");
  static_assert(offsetof(Meta, indexed) == offsetof(Meta, printCount) + 4 &&
                    offsetof(Meta, hasTokens) == offsetof(Meta, printCount) + 5 &&
                    offsetof(Meta, zero) == offsetof(Meta, printCount) + 6,
                "matchWord reads printCount..zero as one word");
  static uint64_t matchWord(const Meta &m) {
    uint64_t w;
    std::memcpy(&w, &m.printCount, sizeof w);
    return w;
  }
  /// matchWord of an indexed block holding `count` tokens.
  static uint64_t matchWordFor(size_t count) {
    Meta m;
    m.printCount = uint32_t(count);
    m.indexed = true;
    m.hasTokens = true;
    return matchWord(m);
  }
  template <bool kPrints>
  size_t matchRunImpl(const BlockHash *hashes, const uint64_t *prints,
                      size_t count, size_t n, BlockId *ids, size_t numHints,
                      size_t *live) const;
  /// matchRunImpl past its hints: blocks [i, n) through the index alone,
  /// with the probes prefetched. Out of line, so the hinted loops keep
  /// their registers.
  struct Probed {
    size_t end, used;
  };
  /// Block `b` (a hint or the index's answer) as block `at` of a match: in
  /// the pool, and under kPrints holding that block's fingerprint and
  /// count. Counts it in `used` and records it in ids[at].
  template <bool kPrints>
  bool acceptMatch(int32_t b, size_t at, const uint64_t *prints, uint64_t want,
                   BlockId *ids, size_t &used) const {
    if (b < 0 || b >= numBlocks_)
      return false;
    const Meta &m = meta[size_t(b)];
    if (kPrints && ((m.print ^ prints[at]) | (matchWord(m) ^ want)))
      return false;
    used += size_t(usedState(m.state));
    ids[at] = BlockId(b);
    return true;
  }
  template <bool kPrints>
  [[gnu::noinline]] Probed matchProbes(const BlockHash *hashes, const uint64_t *prints,
                                       uint64_t want, size_t i, size_t n,
                                       BlockId *ids) const;
  /// The index's key of a block: the hash it holds (see TaggedIndex).
  struct KeyOf {
    const Meta *meta;
    BlockHash operator()(int32_t b) const { return meta[b].hash; }
  };
  KeyOf keyOf() const { return KeyOf{meta.data()}; }
  struct RawOwner {
    int32_t tag = -1; // index into ownerTags; -1: not a raw unit
    int32_t piece = 0;
    int64_t id = 0;
  };

  BlockPool(int32_t numBlocks, int32_t maxBlocks, EvictCallback onEvict);
  enum class Op : uint8_t { Allocate, Claim, Free, Publish };
  static Error noFreeBlocks();
  static Error noHashPublished(BlockId b);
  void setTokens(int32_t b, const int32_t *toks, size_t n);
  void dropDisplaced(int32_t b);
  /// The error for a refused op on `b` (cold; explains the block's state).
  Error refuse(Op op, BlockId b) const;
  bool inPool(BlockId b) const { return b.value >= 0 && b.value < numBlocks_; }

  /// Take a free block (Vacant or Cached) out of its half.
  void takeNamed(int32_t b);
  /// A block no one held (taken off its free half, or popped) is held once.
  void hold(Meta &m) {
    m.refCount = 1;
    m.state = BlockState::Held;
    ++numUsed_;
  }
  /// File a block whose count just reached 0 (or that must move halves).
  void fileFree(int32_t b);
  /// Drop b's index entry if the index maps its hash to it (on_evict), then
  /// forget its content.
  void unindex(int32_t b);
  void forgetContent(int32_t b);
  void adopt(int32_t dst, int32_t src);
  std::string ownerText(const RawOwner &o) const;
  int32_t internTag(const std::string &tag);

  std::vector<Meta> meta;                   // [maxBlocks]
  detail::IntrusiveLru lru; // the cached half, least recently freed first
  std::vector<std::vector<int32_t>> tokens; // [maxBlocks], cold
  std::vector<RawOwner> rawOwner;           // [maxBlocks], cold
  std::vector<std::string> ownerTags;
  detail::MinIdSet vacant;
  detail::TaggedIndex index; // an entry's key is meta[id].hash
  int32_t numBlocks_ = 0;
  int32_t numFree_ = 0;
  int32_t numUsed_ = 0;
  EvictCallback onEvict;
};

//===----------------------------------------------------------------------===//
// The hot paths, inline: a prefix-cache admission runs several of these per
// block. Error reporting stays out of line (BlockPool.cpp).
//===----------------------------------------------------------------------===//

inline void BlockPool::takeNamed(int32_t b) {
  if (meta[size_t(b)].state == BlockState::Vacant)
    vacant.erase(b);
  else
    lru.unlink(b);
  --numFree_;
}

inline void BlockPool::forgetContent(int32_t b) {
  Meta &m = meta[size_t(b)];
  m.hash = kNoHash;
  m.indexed = false;
  if (m.hasTokens) {
    tokens[size_t(b)].clear(); // keeps capacity: no allocation on reuse
    m.hasTokens = false;
  }
}

inline void BlockPool::unindex(int32_t b) {
  Meta &m = meta[size_t(b)];
  if (m.indexed) {
    BlockHash h = m.hash;
    index.erase(h, b);
    m.indexed = false;
    if (onEvict)
      onEvict(h);
  }
  forgetContent(b);
}

inline void BlockPool::fileFree(int32_t b) {
  Meta &m = meta[size_t(b)];
  ++numFree_;
  // A block a run claim took out of the cache is still linked where it was
  // last freed (a stale member): it moves to the back, as a fresh free.
  const bool linked = lru.contains(b);
  // Q8: cached only while a lookup can reach it.
  if (m.indexed) {
    m.state = BlockState::Cached;
    if (linked)
      lru.moveToBack(b);
    else
      lru.pushBack(b);
    return;
  }
  if (linked)
    lru.unlink(b);
  forgetContent(b);
  m.state = BlockState::Vacant;
  vacant.insert(b);
}

inline BlockId BlockPool::takeFree() {
  int32_t b = vacant.popLowest();
  if (b < 0) {
    // Stale members at the front (held blocks a run claim left linked) go
    // now; each was one claim's, so this is O(1) amortized.
    for (b = lru.front(); b != detail::IntrusiveLru::kNil &&
                          meta[size_t(b)].state != BlockState::Cached;
         b = lru.front())
      lru.unlink(b);
    if (b == detail::IntrusiveLru::kNil)
      return kNoBlock;
    lru.unlink(b);
    // The new head is the next victim; its index entry is erased when it is
    // allocated. Under pressure that is the next miss: start the load now.
    if (!lru.empty())
      index.prefetch(meta[size_t(lru.front())].hash);
  }
  meta[size_t(b)].state = BlockState::Popped;
  --numFree_;
  return BlockId(b);
}

inline Status BlockPool::allocate(BlockId id) {
  if (!inPool(id))
    return refuse(Op::Allocate, id);
  int32_t b = id.value;
  Meta &m = meta[size_t(b)];
  if (m.state == BlockState::Vacant || m.state == BlockState::Cached)
    takeNamed(b);
  else if (m.state != BlockState::Popped)
    return refuse(Op::Allocate, id);
  unindex(b); // the eviction event (lazy eviction)
  m.refCount = 1;
  m.state = BlockState::Held;
  ++numUsed_;
  return Status();
}

inline size_t BlockPool::allocateFresh(size_t n, BlockId *out) {
  size_t i = 0;
  for (; i < n; ++i) {
    BlockId b = takeFree();
    if (!b.valid())
      break;
    unindex(b.value); // the eviction event, as allocate
    hold(meta[size_t(b.value)]);
    out[i] = b;
  }
  return i;
}

inline Status BlockPool::claim(BlockId id) {
  if (!inPool(id))
    return refuse(Op::Claim, id);
  int32_t b = id.value;
  Meta &m = meta[size_t(b)];
  if (m.state == BlockState::Held) {
    ++m.refCount;
    return Status();
  }
  if (m.state == BlockState::Vacant || m.state == BlockState::Cached)
    takeNamed(b);
  else if (m.state != BlockState::Popped)
    return refuse(Op::Claim, id);
  hold(m);
  return Status();
}

inline size_t BlockPool::matchRun(const BlockHash *hashes, const uint64_t *prints,
                                  size_t count, size_t n, BlockId *ids,
                                  size_t numHints, size_t *live) const {
  // Two loops, not one with `if (prints)` in it: the test would run per
  // block (the compiler does not unswitch the lane loop).
  return prints ? matchRunImpl<true>(hashes, prints, count, n, ids, numHints, live)
                : matchRunImpl<false>(hashes, prints, count, n, ids, numHints, live);
}

template <bool kPrints>
inline size_t BlockPool::matchRunImpl(const BlockHash *hashes, const uint64_t *prints,
                                      size_t count, size_t n, BlockId *ids,
                                      size_t numHints, size_t *live) const {
  const Meta *md = meta.data();
  const uint32_t limit = uint32_t(numBlocks_);
  const size_t hinted = std::min(numHints, n);
  size_t i = 0, used = 0;
  if (kPrints && count > 0xffffffffu) { // no block holds that many (publish)
    if (live)
      *live = 0;
    return 0;
  }
  const uint64_t want = matchWordFor(count);
  // Hints, eight at a time with one branch per eight: a re-admission's
  // whole prefix is usually still where the last attempt found it. Each
  // block is three exact compares folded into one word (hash, print, and
  // matchWord: count, indexed, has tokens). The eight ids are range-checked
  // together first (their maximum against the pool), so no lane reads past
  // the pool and none carries a mask of its own; a group with an id outside
  // goes to the scalar loop, which refuses that id there.
  constexpr size_t kLanes = 8;
  while (i + kLanes <= hinted) {
    uint32_t bs[kLanes];
    uint32_t top = 0;
    for (size_t j = 0; j < kLanes; ++j) {
      bs[j] = uint32_t(ids[i + j].value);
      top = std::max(top, bs[j]);
    }
    if (top >= limit)
      break;
    // Separate accumulators, each a chain: one folded expression gets
    // reassociated into a tree whose leaves spill to the stack. The eight
    // states go into one word, a byte each, counted at the end.
    uint64_t badH = 0, badP = 0, badW = 0, states = 0;
    for (size_t j = 0; j < kLanes; ++j) {
      const Meta &m = md[bs[j]];
      badH |= m.hash ^ hashes[i + j];
      if constexpr (kPrints) {
        badP |= m.print ^ prints[i + j];
        badW |= matchWord(m) ^ want;
      } else {
        badW |= uint64_t(!m.indexed);
      }
      states |= uint64_t(uint8_t(m.state)) << (8 * j);
    }
    if (badH | badP | badW)
      break; // the scalar loop finds which one, and probes for it
    used += usedStates(states);
    i += kLanes;
  }
  // One at a time: the hint where it still holds, else the index.
  for (; i < hinted; ++i) {
    int32_t b = ids[i].value;
    if (!indexedAs(BlockId(b), hashes[i]))
      b = index.find(hashes[i], keyOf());
    if (!acceptMatch<kPrints>(b, i, prints, want, ids, used))
      break;
  }
  if (i >= hinted && i < n) {
    Probed p = matchProbes<kPrints>(hashes, prints, want, i, n, ids);
    i = p.end;
    used += p.used;
  }
  if (live)
    *live = used;
  return i;
}

template <bool kPrints>
BlockPool::Probed BlockPool::matchProbes(const BlockHash *hashes, const uint64_t *prints,
                                         uint64_t want, size_t i, size_t n,
                                         BlockId *ids) const {
  // Past the hints every block is a probe, and the chain's hashes are all
  // known: each probe's home slot is asked for kAhead blocks early, so the
  // probes' cache misses overlap instead of each waiting on its own.
  constexpr size_t kAhead = 8;
  size_t used = 0;
  for (size_t k = i; k < std::min(n, i + kAhead); ++k)
    index.prefetch(hashes[k]);
  for (; i < n; ++i) {
    if (i + kAhead < n)
      index.prefetch(hashes[i + kAhead]);
    if (!acceptMatch<kPrints>(index.find(hashes[i], keyOf()), i, prints, want, ids, used))
      break;
  }
  return Probed{i, used};
}

inline size_t BlockPool::claimIndexedRun(const BlockId *ids, const BlockHash *hashes,
                                         size_t n) {
  // The counts stay in registers for the loop: written through `this`,
  // every store to a block's metadata could alias them and force a reload
  // per block. A cached block taken here stays linked in the LRU list (a
  // stale member, see the invariants): its links are neither read nor
  // written, which was a third of the claim's cost a block. Its next free
  // moves it to the back, or takeFree drops it on reaching it.
  Meta *md = meta.data();
  const uint32_t limit = uint32_t(numBlocks_);
  int32_t taken = 0;

  size_t i = 0;
  for (; i < n; ++i) {
    int32_t b = ids[i].value;
    if (uint32_t(b) >= limit) // negative ids wrap past the pool too
      break;
    Meta &m = md[b];
    if (!m.indexed || m.hash != hashes[i])
      break;
    if (m.state == BlockState::Held) {
      ++m.refCount;
      continue;
    }
    // Indexed and not held: Cached or Popped (an indexed block is never
    // Vacant); a popped one is left to the caller's checked path.
    if (m.state != BlockState::Cached)
      break;
    m.refCount = 1;
    m.state = BlockState::Held;
    ++taken;
  }
  numFree_ -= taken;
  numUsed_ += taken;
  return i;
}

inline Status BlockPool::publish(BlockId id, BlockHash h, const int32_t *toks,
                                 size_t numTokens) {
  if (!inPool(id) || meta[size_t(id.value)].state != BlockState::Held)
    return refuse(Op::Publish, id);
  if (h == kNoHash)
    return noHashPublished(id);
  int32_t b = id.value;
  Meta &m = meta[size_t(b)];
  if (m.hash != h) {
    // New content under a new name: the old name no longer reaches it.
    if (m.indexed) {
      BlockHash old = m.hash;
      index.erase(old, b);
      m.indexed = false;
      if (onEvict)
        onEvict(old);
    }
    m.hash = h;
  }
  if (numTokens > 0xffffffffu) // the fingerprint's count is 32-bit
    return Error::invalid("publish: " + std::to_string(numTokens) +
                          " tokens in one block (at most 2^32 - 1)");
  if (numTokens > 0 || m.hasTokens)
    setTokens(b, toks, numTokens);
  int32_t prev = index.insertOrAssign(h, b, keyOf());
  m.indexed = true;
  if (prev != detail::TaggedIndex::kAbsent && prev != b)
    dropDisplaced(prev);
  return Status();
}

inline Status BlockPool::free(BlockId id) {
  if (!inPool(id) || meta[size_t(id.value)].state != BlockState::Held)
    return refuse(Op::Free, id); // Q2: double free, raw unit, unknown id
  int32_t b = id.value;
  if (--meta[size_t(b)].refCount > 0)
    return Status();
  --numUsed_;
  fileFree(b);
  return Status();
}

} // namespace poolrt

#endif // POOLRT_BLOCKPOOL_H
