//===- BoundaryMove.cpp - Moving the block pool / state group boundary ----===//
//
// CacheManager::moveBoundary and its pieces: a row-space model's PAGE
// blocks and STATE slots share rows (PoolBoundaryGeometry), and moving the
// boundary between them retires blocks or groups from the top, moves what
// is live there down, and re-points the live requests. The contract is
// CacheManager::moveBoundary's (poolrt/CacheManager.h).
//
//===----------------------------------------------------------------------===//

#include "poolrt/CacheManager.h"
#include "poolrt/Checked.h"

#include "CacheManagerDetail.h"

#include <algorithm>
#include <unordered_map>

namespace poolrt {

using cachedetail::notAllocated;

int64_t PoolBoundaryGeometry::blocksFor(int64_t groups) const {
  int64_t rows = (heldSlots() - groups) * slotRows;
  return rows < 0 ? 0 : std::min(maxBlocks, rows / envelopeRows);
}

int64_t PoolBoundaryGeometry::groupsFor(int64_t blocks) const {
  int64_t used = ceilDiv(blocks * envelopeRows, slotRows);
  return std::max<int64_t>(0, heldSlots() - used);
}

namespace {

/// Byte moves composed so that a destination that moves again is skipped:
/// the bytes go from the first source straight to the last destination.
template <typename Id> class MoveChain {
public:
  /// Returns true when `to` was an earlier move's destination: that
  /// content was given up (a re-homed checkpoint spent again) and its move
  /// is dropped.
  bool add(Id from, Id to) {
    bool overwrote = false;
    auto old = byDst.find(to.value);
    if (old != byDst.end()) {
      dead[old->second] = true;
      byDst.erase(old);
      overwrote = true;
    }
    auto it = byDst.find(from.value);
    if (it != byDst.end()) { // `from` only ever held bytes still in flight
      size_t i = it->second;
      byDst.erase(it);
      moves[i].second = to;
      byDst[to.value] = i;
      return overwrote;
    }
    byDst[to.value] = moves.size();
    moves.push_back({from, to});
    dead.push_back(false);
    return overwrote;
  }
  /// Where an id held before the move now lives.
  Id follow(Id id) const {
    auto it = bySrc.find(id.value);
    return it == bySrc.end() ? id : it->second;
  }
  void seal() {
    std::vector<std::pair<Id, Id>> live;
    for (size_t i = 0; i < moves.size(); ++i)
      if (!dead[i])
        live.push_back(moves[i]);
    moves.swap(live);
    for (auto &m : moves)
      bySrc[m.first.value] = m.second;
  }
  std::vector<std::pair<Id, Id>> moves;

private:
  std::vector<bool> dead;
  std::unordered_map<int32_t, size_t> byDst;
  std::unordered_map<int32_t, Id> bySrc;
};

std::string blockStopReason(const BlockPool &pool, BlockId top) {
  std::string why = "top block " + std::to_string(top.value) + " is " +
                    blockStateName(pool.state(top));
  if (pool.state(top) == BlockState::Popped)
    return why + " (taken off the free list, not yet allocated)";
  return why + " and nothing is free to move it into";
}

/// Why a move cannot start: a target outside the rows, PAGE copies still
/// queued, a live list with a null, unallocated or repeated request, or a
/// disabled group pool asked to grow. Nothing has changed when it refuses.
Status checkBoundaryMove(const PoolBoundaryGeometry &g, int64_t targetGroups,
                         const std::vector<Request *> &live,
                         const PageUnitCheckpointStore *store,
                         const StateGroupPool &groupPool) {
  if (targetGroups < 0 || targetGroups > g.heldSlots())
    return Error::invalid("move_boundary: target " + std::to_string(targetGroups) +
                          " groups is outside [0, " +
                          std::to_string(g.heldSlots()) + "] (the slots " +
                          std::to_string(g.planeRows) + " plane rows hold)");
  if (store && !store->atRest())
    return Error{ErrorKind::State,
                 "move_boundary: PAGE checkpoint copies are queued or in "
                 "flight; move the boundary between batches"};
  std::unordered_map<const Request *, size_t> seen;
  for (size_t i = 0; i < live.size(); ++i) {
    const Request *r = live[i];
    if (!r)
      return Error::invalid("move_boundary: a null request in the live list");
    if (!r->allocated)
      return notAllocated("move_boundary", *r);
    auto [it, fresh] = seen.emplace(r, i);
    if (!fresh)
      return Error::invalid("move_boundary: request " + std::to_string(r->id) +
                            " is in the live list twice (entries " +
                            std::to_string(it->second) + " and " +
                            std::to_string(i) + "): it would be re-pointed twice");
  }
  if (targetGroups > groupPool.numGroups() && !groupPool.enabled())
    return Error{ErrorKind::State,
                 "move_boundary: the state-group pool is disabled (created "
                 "with 0 groups or without prefix caching); it cannot grow"};
  return Status::success();
}

/// A boundary move under way: what it will report, and whether an internal
/// failure stopped it.
struct MoveInProgress {
  BoundaryMove out;
  bool internalFailure = false;
  void fail(const Error &e) {
    out.stopReason = "internal error: " + e.message;
    internalFailure = true;
  }
};

/// Grow the state side: free the rows of the new slots first (retiring
/// blocks from the top, moving live ones and PAGE units down), then add the
/// groups the freed rows hold.
void growStateSide(const PoolBoundaryGeometry &g, int64_t targetGroups,
                   BlockPool &blockPool, StateGroupPool &groupPool,
                   PageUnitCheckpointStore *store, MoveInProgress &move,
                   MoveChain<BlockId> &blockMoves) {
  BoundaryMove &out = move.out;
  int64_t groups = groupPool.numGroups();
  int64_t cap = g.blocksFor(targetGroups);
  while (blockPool.numBlocks() > cap) {
    std::optional<BlockRetirement> r = blockPool.retireTop();
    if (!r && store)
      r = blockPool.retireTopUnit(PageUnitCheckpointStore::kUnitTag);
    if (!r) {
      out.stopReason =
          blockStopReason(blockPool, BlockId(blockPool.numBlocks() - 1));
      break;
    }
    ++out.blocksRetired;
    if (!r->movedTo.valid())
      continue;
    blockMoves.add(r->retired, r->movedTo);
    if (r->unitOwnerId) {
      Status s = store->relocateUnit(*r->unitOwnerId, r->unitPiece, r->retired,
                                     r->movedTo);
      if (!s.ok()) { // an invariant breach, reported, never half-done
        move.fail(s.error());
        break;
      }
      ++out.unitsMoved;
    }
  }
  int64_t reach = std::min(targetGroups, g.groupsFor(blockPool.numBlocks()));
  if (reach > groups) {
    Status s = groupPool.extend(reach - groups);
    if (!s.ok())
      move.fail(s.error());
  }
}

/// Grow the block side: give back groups from the top, re-homing the live
/// ones (and their checkpoints) into free groups below.
void growBlockSide(int64_t targetGroups, StateGroupPool &groupPool,
                   PageUnitCheckpointStore *store, BoundaryMove &out,
                   MoveChain<GroupId> &groupMoves) {
  while (groupPool.numGroups() > targetGroups) {
    std::optional<GroupRetirement> r = groupPool.retireTop();
    if (!r) {
      GroupId top(groupPool.numGroups() - 1);
      out.stopReason = "top group " + std::to_string(top.value) +
                       (groupPool.isPinned(top)
                            ? " is pinned by a fork reader this pass"
                            : " is live and no group is free to move it into");
      break;
    }
    ++out.groupsRetired;
    if (r->heldCheckpoint && !r->relocatedTo.valid())
      ++out.checkpointsSpent;
    if (!r->relocatedTo.valid())
      continue;
    if (r->heldCheckpoint)
      ++out.checkpointsRehomed;
    if (groupMoves.add(r->retired, r->relocatedTo)) {
      // The group a checkpoint was re-homed into was spent again.
      --out.checkpointsRehomed;
      ++out.checkpointsSpent;
    }
    if (store)
      store->relocateSlot(SlotIndex(r->retired.value),
                          SlotIndex(r->relocatedTo.value));
  }
}

/// Point every live request's block table, group and fork source at where
/// the (sealed) moves put them.
void repointLive(const std::vector<Request *> &live,
                 const MoveChain<BlockId> &blockMoves,
                 const MoveChain<GroupId> &groupMoves, BoundaryMove &out) {
  for (Request *r : live) {
    for (BlockId &b : r->blockTable) {
      BlockId to = blockMoves.follow(b);
      if (to != b) {
        b = to;
        ++out.tableEntriesRepointed;
      }
    }
    r->state.group = groupMoves.follow(r->state.group);
    r->state.forkSource = groupMoves.follow(r->state.forkSource);
  }
}

/// The byte moves as the copy kernels' id pairs (slots by physical
/// position), the counts after the move, and why it stopped short.
void reportMove(const PoolBoundaryGeometry &g, int64_t targetGroups,
                MoveChain<BlockId> &blockMoves,
                const MoveChain<GroupId> &groupMoves, MoveInProgress &move,
                int64_t numBlocks, int64_t numGroups) {
  BoundaryMove &out = move.out;
  out.blockMoves = std::move(blockMoves.moves);
  for (auto &m : out.blockMoves) {
    out.blockCopyIds.push_back(m.first.value);
    out.blockCopyIds.push_back(m.second.value);
  }
  for (auto &m : groupMoves.moves) {
    out.groupMoves.push_back(GroupRelocation{m.first, m.second});
    out.slotCopyIds.push_back(g.physicalSlot(m.first));
    out.slotCopyIds.push_back(g.physicalSlot(m.second));
  }
  out.numBlocks = numBlocks;
  out.numGroups = numGroups;
  out.reachedTarget = out.numGroups == targetGroups && !move.internalFailure;
  if (out.reachedTarget)
    out.stopReason.clear();
  else if (out.stopReason.empty())
    out.stopReason = "the rows above " + std::to_string(out.numBlocks) +
                     " blocks hold " + std::to_string(g.groupsFor(out.numBlocks)) +
                     " slots";
}

} // namespace

Result<BoundaryMove>
CacheManager::moveBoundary(int64_t targetGroups,
                           const std::vector<Request *> &live) {
  if (!boundary_)
    return Error::invalid("move_boundary: this cache manager has no boundary "
                          "geometry (not a row-space model)");
  const PoolBoundaryGeometry &g = *boundary_;
  Status refused =
      checkBoundaryMove(g, targetGroups, live, store_.get(), *groups_);
  if (!refused.ok())
    return refused.error();

  // From here on the move always completes what it started: an internal
  // failure stops it like a refusal would, and the moves made so far are
  // still reported and followed.
  deferEvictions_ = true;
  deferredEvictions_.clear();
  MoveInProgress move;
  MoveChain<BlockId> blockMoves;
  MoveChain<GroupId> groupMoves;
  if (targetGroups > groups_->numGroups())
    growStateSide(g, targetGroups, *blocks_, *groups_, store_.get(), move,
                  blockMoves);
  else
    growBlockSide(targetGroups, *groups_, store_.get(), move.out, groupMoves);
  // Rows not enough for a whole slot go back to the block pool.
  int64_t blockCap = g.blocksFor(groups_->numGroups());
  if (blocks_->numBlocks() < blockCap) {
    auto grown = blocks_->extend(blockCap - blocks_->numBlocks());
    if (!grown.ok())
      move.fail(grown.error());
  }

  blockMoves.seal();
  groupMoves.seal();
  repointLive(live, blockMoves, groupMoves, move.out);
  // Every record names its units' new ids now: drop the checkpoints whose
  // blocks the moves evicted.
  deferEvictions_ = false;
  std::vector<BlockHash> evicted;
  evicted.swap(deferredEvictions_);
  for (BlockHash h : evicted)
    dropCheckpointOf(h);
  reportMove(g, targetGroups, blockMoves, groupMoves, move,
             blocks_->numBlocks(), groups_->numGroups());
  return std::move(move.out);
}

} // namespace poolrt
