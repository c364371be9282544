//===- WindowClasses.h - Sliding / chunked PAGE classes ---------*- C++ -*-===//
//
// The window classes of one CacheManager (specs/window-classes.md), kept
// apart from the full class the way TensorRT-LLM keeps its
// WindowBlockManager and vLLM one manager per attention type. Each class
// has a block table per request (Request::windowTables, indexed by block
// position), a pool (its own, or the full class's), a reserve per running
// request that admission must be able to back, and index keys of its own
// (key()). The cache manager calls it at admission (hit, reservesFor,
// debt), at allocation (claimHits), at publication (publish), before each
// forward (forwardLimit, prepare) and at deallocation (release); nothing
// else touches a window class's blocks.
//
// An empty set (a model without window classes) answers every call as
// that model needs: no hit cut, no debt, no limit, nothing to take.
//
// Private to PoolRuntime: not installed, not part of the API. Tests reach
// it through the CacheManager (CacheManagerTestAccess).
//
// Lock contract: none of its own; it belongs to its CacheManager, which
// the scheduler thread owns.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_POOLS_WINDOWCLASSES_H
#define POOLRT_POOLS_WINDOWCLASSES_H

#include "poolrt/BlockPool.h"
#include "poolrt/CacheManager.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace poolrt {

class WindowSet {
public:
  /// The window classes of `c` (none: an empty set). A class of 0 blocks
  /// draws from `fullPool`, the full class's pool, which must outlive the
  /// set. InvalidArgument, nothing built, for window classes beside state
  /// groups, PAGE-unit checkpoints or a pool boundary, a negative margin, a
  /// pattern that is not a window, a reserve that does not pass its ring,
  /// or a pool of its own too small for one reserve.
  static Result<std::unique_ptr<WindowSet>> create(const CacheManagerConfig &c,
                                                   BlockPool &fullPool);

  bool empty() const { return windows_.empty(); }
  int64_t size() const { return int64_t(windows_.size()); }
  const WindowClassConfig &config(int64_t i) const {
    return windows_[size_t(i)].cfg;
  }
  /// The pool class `i` draws from (the full class's when shared).
  BlockPool &pool(int64_t i) { return *windows_[size_t(i)].pool; }
  /// The index key of hash `h` in class `i`: each class publishes its
  /// blocks under keys of its own, so classes sharing one pool never find
  /// each other's blocks.
  static BlockHash key(BlockHash h, int64_t i);

  // Admission ---------------------------------------------------------------

  /// Blocks of `pool` promised to window reserves and not yet held.
  /// Inline, like hit's empty cases: every admission asks, window classes
  /// or not.
  int64_t debt(const BlockPool *pool) const {
    int64_t debt = 0;
    for (const Window &w : windows_)
      if (w.pool == pool)
        debt += std::max<int64_t>(0, w.reserved - w.physical);
    return debt;
  }
  /// Whether every pool a class draws from can back one more request's
  /// reserves, besides `fullBlocks` for the full class (out of the full
  /// class's pool, where a class shares it).
  bool reservesFor(int64_t fullBlocks) const;
  /// The largest hit <= `indexed` blocks every class can resume. Reads
  /// r.hashCache and r.printCache over the first `indexed` blocks (the
  /// caller filled them) and keeps each class's hit blocks, as hints for
  /// claimHits.
  int64_t hit(const Request &r, int64_t indexed) {
    return windows_.empty() || indexed <= 0 ? indexed : jointHit(r, indexed);
  }

  // A request's life ----------------------------------------------------------

  /// At allocation, before the full class takes any fresh block (in a
  /// shared pool it could evict them): count r's reserves and claim each
  /// class's blocks of a hit of `numCached` blocks (from the window of
  /// numCached * blockSize on). State error, naming the block, where one
  /// is not in the class's index; what was claimed stays in r's tables,
  /// for release() to give back.
  Status claimHits(Request &r, int64_t numCached);
  /// Publish block `block` of r, full-class hash `h` and `numTokens` token
  /// ids, in every class whose table holds it, under the class's key.
  Status publish(const Request &r, int64_t block, BlockHash h,
                 const int32_t *tokens, size_t numTokens);
  /// The largest end <= `end` a forward from r.numCachedTokens may reach
  /// without a class holding more than its reserve (a multiple of the
  /// block size when it cuts). `end` for an empty set.
  int64_t forwardLimit(const Request &r, int64_t end) const;
  /// Before a forward from r.numCachedTokens to `end`: release the blocks
  /// that fell out of every window (they stay indexed, evictable) and take
  /// fresh ones up to `end`. State error, nothing changed, for a request
  /// that is not allocated or a forward past forwardLimit; InvalidArgument
  /// for an `end` before the computed mark; Internal where a pool cannot
  /// back a reserve (a bookkeeping bug, reported, not a crash).
  Status prepare(Request &r, int64_t end);
  /// Give back every window block r holds and its reserves, and clear its
  /// tables: at deallocation, and to undo a failed allocation.
  void release(Request &r);

private:
  WindowSet() = default;

  struct Window {
    WindowClassConfig cfg;
    BlockPool *pool = nullptr;
    std::unique_ptr<BlockPool> own;
    int64_t reserved = 0; // reserveBlocks x requests counted
    int64_t physical = 0; // distinct blocks the class's tables hold
    std::vector<BlockId> hitScratch; // admission: the window's hit blocks
    std::vector<int64_t> runScratch;
  };

  /// hit() past its empty cases.
  int64_t jointHit(const Request &r, int64_t indexed);
  /// Free one table entry; `physical` drops when no table holds it any
  /// more.
  void releaseBlock(Window &w, BlockId b);

  std::vector<Window> windows_;
  BlockPool *fullPool_ = nullptr;
  int64_t blockSize_ = 0;
  int64_t margin_ = 0; // CacheManagerConfig::windowMarginTokens
};

} // namespace poolrt

#endif // POOLRT_POOLS_WINDOWCLASSES_H
