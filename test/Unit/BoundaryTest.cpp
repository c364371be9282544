//===- BoundaryTest.cpp - Moving the block/slot boundary ------------------===//
//
// CacheManager::moveBoundary on a toy row space: a block is 1 row, a slot 4
// rows, the planes 40 rows (10 slot positions). The byte-level check (the
// generated kernels moving real bytes) is test/E2E/boundary_e2e.cpp.
//
//===----------------------------------------------------------------------===//

#include "poolrt/CacheManager.h"
#include "test/Unit/ToyBoundary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include "test/Unit/TestKinds.h"

using namespace poolrt;
using poolc_test::toyGeometry;
using poolc_test::toyManager;

namespace {

/// Hold block `b` (exactly that id) under hash `h`.
void hold(BlockPool &pool, int32_t b, BlockHash h) {
  ASSERT_TRUE(pool.allocate(BlockId(b)).ok());
  int32_t toks[4] = {b, b, b, b};
  ASSERT_TRUE(pool.publish(BlockId(b), h, toks, 4).ok());
}

/// A request holding every block below `upTo` except `except`, each under
/// its own hash.
Request holdAllBut(BlockPool &pool, int32_t upTo, std::set<int32_t> except = {}) {
  Request r;
  r.allocated = true; // holds what it took straight from the pools
  for (int32_t id = 0; id < upTo; ++id)
    if (!except.count(id)) {
      hold(pool, id, 7000 + BlockHash(id));
      r.blockTable.push_back(BlockId(id));
    }
  return r;
}

} // namespace

TEST(Boundary, GeometryCapacities) {
  PoolBoundaryGeometry g = toyGeometry();
  EXPECT_EQ(g.heldSlots(), 10);
  EXPECT_EQ(g.blocksFor(2), 32); // 32 rows free, capped at maxBlocks 32
  EXPECT_EQ(g.blocksFor(3), 28);
  EXPECT_EQ(g.blocksFor(10), 0);
  EXPECT_EQ(g.groupsFor(28), 3);
  EXPECT_EQ(g.groupsFor(29), 2); // a partial slot's rows are not a slot
  EXPECT_EQ(g.physicalSlot(GroupId(0)), 9);
}

TEST(Boundary, Refusals) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 32;
  c.numGroups = 2;
  auto plain = CacheManager::create(c).take();
  auto r = plain->moveBoundary(3, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(r.error().message.find("no boundary geometry"), std::string::npos);

  c.boundary = toyGeometry();
  c.numGroups = 3; // 32 blocks and 3 slots need 44 rows of 40
  auto tooBig = CacheManager::create(c);
  ASSERT_FALSE(tooBig.ok());
  EXPECT_EQ(tooBig.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(tooBig.error().message.find("do not fit 40 plane rows"),
            std::string::npos);

  auto m = toyManager();
  for (int64_t bad : {int64_t(-1), int64_t(11)}) {
    auto e = m->moveBoundary(bad, {});
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().kind, ErrorKind::InvalidArgument);
    EXPECT_NE(e.error().message.find("outside [0, 10]"), std::string::npos);
  }
  Request *null = nullptr;
  EXPECT_ERROR_KIND(m->moveBoundary(3, {null}), InvalidArgument);
  EXPECT_EQ(m->groups()->numGroups(), 2); // refused: nothing changed
  EXPECT_EQ(m->blocks().numBlocks(), 32);
}

TEST(Boundary, GrowAndShrinkAnEmptyPool) {
  auto m = toyManager();
  auto up = m->moveBoundary(5, {});
  ASSERT_TRUE(up.ok());
  EXPECT_TRUE(up->reachedTarget);
  EXPECT_EQ(up->numGroups, 5);
  EXPECT_EQ(up->numBlocks, 20);
  EXPECT_EQ(up->blocksRetired, 12);
  EXPECT_TRUE(up->blockMoves.empty());
  auto down = m->moveBoundary(2, {});
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(down->numGroups, 2);
  EXPECT_EQ(down->numBlocks, 32);
  EXPECT_EQ(down->groupsRetired, 3);
  EXPECT_TRUE(m->blocks().invariantsHold());
  EXPECT_TRUE(m->groups()->invariantsHold());
}

TEST(Boundary, HeldTopBlocksMoveAndTablesFollow) {
  auto m = toyManager();
  BlockPool &pool = m->blocks();
  // Request A holds blocks 28..31; 0..3 are held by B; the rest is vacant.
  Request a, b;
  a.allocated = b.allocated = true; // they hold what they took from the pool
  for (int32_t id = 28; id < 32; ++id) {
    hold(pool, id, 1000 + BlockHash(id));
    a.blockTable.push_back(BlockId(id));
  }
  for (int32_t id = 0; id < 4; ++id) {
    hold(pool, id, 2000 + BlockHash(id));
    b.blockTable.push_back(BlockId(id));
  }
  auto mv = m->moveBoundary(3, {&a, &b});
  ASSERT_TRUE(mv.ok());
  EXPECT_TRUE(mv->reachedTarget);
  EXPECT_EQ(mv->numBlocks, 28);
  // The lowest vacant blocks (4, 5, ...) take the held tops, top first.
  ASSERT_EQ(mv->blockMoves.size(), 4u);
  EXPECT_EQ(mv->blockMoves[0], std::make_pair(BlockId(31), BlockId(4)));
  EXPECT_EQ(mv->blockMoves[3], std::make_pair(BlockId(28), BlockId(7)));
  EXPECT_EQ(mv->blockCopyIds, (std::vector<int32_t>{31, 4, 30, 5, 29, 6, 28, 7}));
  EXPECT_EQ(a.blockTable, (std::vector<BlockId>{BlockId(7), BlockId(6),
                                                BlockId(5), BlockId(4)}));
  EXPECT_EQ(b.blockTable[0], BlockId(0)); // untouched
  EXPECT_EQ(mv->tableEntriesRepointed, 4);
  // The content index followed the content.
  EXPECT_EQ(pool.lookup(1031), BlockId(4));
  EXPECT_EQ(*pool.refCount(BlockId(4)), 1);
  EXPECT_TRUE(pool.invariantsHold());
}

TEST(Boundary, ChainedMovesCollapseIntoOneCopy) {
  auto m = toyManager();
  BlockPool &pool = m->blocks();
  // Everything held except 29 (vacant) and 5, 6 (cached, 5 freed first).
  Request a;
  a.allocated = true; // holds what it took straight from the pools
  for (int32_t id = 0; id < 32; ++id)
    if (id != 29) {
      hold(pool, id, 5000 + BlockHash(id));
      a.blockTable.push_back(BlockId(id));
    }
  ASSERT_TRUE(pool.free(BlockId(5)).ok());
  ASSERT_TRUE(pool.free(BlockId(6)).ok());
  a.blockTable.erase(std::remove(a.blockTable.begin(), a.blockTable.end(), BlockId(5)),
                     a.blockTable.end());
  a.blockTable.erase(std::remove(a.blockTable.begin(), a.blockTable.end(), BlockId(6)),
                     a.blockTable.end());
  // Retiring 31 -> 29 (vacant first), 30 -> 5, 29 -> 6 (31's content moves
  // on again), then 28 has nowhere to go.
  auto mv = m->moveBoundary(3, {&a});
  ASSERT_TRUE(mv.ok());
  EXPECT_FALSE(mv->reachedTarget);
  EXPECT_NE(mv->stopReason.find("top block 28 is held"), std::string::npos)
      << mv->stopReason;
  EXPECT_EQ(mv->numGroups, 2);
  EXPECT_EQ(mv->numBlocks, 32); // the rows went back to the block pool
  // One copy per content, no destination that is also a source.
  EXPECT_EQ(mv->blockCopyIds, (std::vector<int32_t>{31, 6, 30, 5}));
  EXPECT_EQ(a.blockTable.back(), BlockId(6));  // was 31
  EXPECT_EQ(a.blockTable[a.blockTable.size() - 2], BlockId(5)); // was 30
  EXPECT_EQ(pool.lookup(5031), BlockId(6));
  EXPECT_EQ(pool.state(BlockId(29)), BlockState::Vacant); // given back
  EXPECT_TRUE(pool.invariantsHold());
}

TEST(Boundary, LiveGroupsMoveAndRequestsFollow) {
  auto m = toyManager();
  ASSERT_TRUE(m->moveBoundary(4, {}).ok());
  StateGroupPool &groups = *m->groups();
  // Groups 0..3; the request holds the top one, 1 is held by someone else.
  Request r;
  r.allocated = true; // holds what it took straight from the pools
  GroupId top(3);
  std::vector<GroupId> popped;
  for (int i = 0; i < 4; ++i) {
    auto g = groups.pop();
    ASSERT_TRUE(g.ok());
    popped.push_back(*g);
  }
  for (GroupId g : popped)
    if (g == top)
      r.state.group = g;
    else if (g.value != 1)
      ASSERT_TRUE(groups.release(g).ok());
  ASSERT_EQ(r.state.group, top);
  auto mv = m->moveBoundary(3, {&r});
  ASSERT_TRUE(mv.ok());
  EXPECT_TRUE(mv->reachedTarget);
  ASSERT_EQ(mv->groupMoves.size(), 1u);
  EXPECT_EQ(mv->groupMoves[0].src, top);
  EXPECT_EQ(mv->groupMoves[0].dst, GroupId(0)); // lowest vacant
  EXPECT_EQ(r.state.group, GroupId(0));
  // Physical slots for slot_copy: position 9 - group.
  EXPECT_EQ(mv->slotCopyIds, (std::vector<int32_t>{6, 9}));
  EXPECT_EQ(mv->numBlocks, 28);
  EXPECT_TRUE(groups.invariantsHold());
}

TEST(Boundary, PinnedTopStopsTheShrink) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 28;
  c.numGroups = 3;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = 0;
  c.boundary = toyGeometry();
  auto m = CacheManager::create(c).take();
  StateGroupPool &groups = *m->groups();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(groups.pop().ok());
  ASSERT_TRUE(groups.pin(GroupId(2)).ok());
  auto mv = m->moveBoundary(1, {});
  ASSERT_TRUE(mv.ok());
  EXPECT_FALSE(mv->reachedTarget);
  EXPECT_NE(mv->stopReason.find("top group 2 is pinned"), std::string::npos)
      << mv->stopReason;
  EXPECT_EQ(mv->numGroups, 3);
  EXPECT_EQ(mv->numBlocks, 28);
}

TEST(Boundary, StoredCheckpointUnitsMoveWithTheirRecord) {
  auto m = toyManager(/*paged=*/true);
  BlockPool &pool = m->blocks();
  PageUnitCheckpointStore &store = *m->pagedStore();
  // Fill 0..29 so the checkpoint's two units land on 30 and 31.
  Request filler = holdAllBut(pool, 30);
  auto op = store.beginStore(4242, SlotIndex(0));
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->unitIds, (std::vector<BlockId>{BlockId(30), BlockId(31)}));
  // Copies in flight: the boundary must wait.
  auto busy = m->moveBoundary(3, {&filler});
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().kind, ErrorKind::State);
  EXPECT_NE(busy.error().message.find("in flight"), std::string::npos);
  store.completeInflight(); // READY
  // Free two low blocks so the units have somewhere to go.
  ASSERT_TRUE(pool.free(BlockId(0)).ok());
  ASSERT_TRUE(pool.free(BlockId(1)).ok());
  auto mv = m->moveBoundary(3, {&filler});
  ASSERT_TRUE(mv.ok());
  EXPECT_EQ(mv->unitsMoved, 2);
  EXPECT_EQ(mv->blockCopyIds, (std::vector<int32_t>{31, 0, 30, 1}));
  auto rec = store.record(store.lookup(4242));
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(*rec->unitIds, (std::vector<BlockId>{BlockId(1), BlockId(0)}));
  // 29, 28 are held with nothing left free: the move stops there.
  EXPECT_FALSE(mv->reachedTarget);
  EXPECT_NE(mv->stopReason.find("top block 29"), std::string::npos);
  EXPECT_TRUE(store.checkInvariants().ok()) << store.checkInvariants().error().message;
  // The record can still be restored and released through its new units.
  EXPECT_TRUE(store.unindex(4242));
  EXPECT_TRUE(store.checkInvariants().ok());
  EXPECT_EQ(pool.state(BlockId(0)), BlockState::Vacant);
}

TEST(Boundary, RelocateUnitRefusesAWrongPiece) {
  auto m = toyManager(/*paged=*/true);
  PageUnitCheckpointStore &store = *m->pagedStore();
  auto op = store.beginStore(99, SlotIndex(0));
  ASSERT_TRUE(op.has_value());
  store.completeInflight();
  CheckpointId id = store.lookup(99);
  Status s = store.relocateUnit(id.value, 1, op->unitIds[0], BlockId(20));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::Internal);
  EXPECT_NE(s.error().message.find("does not hold unit"), std::string::npos);
  EXPECT_ERROR_KIND(store.relocateUnit(id.value + 7, 0, op->unitIds[0], BlockId(20)), Internal);
}

namespace {

/// A copy batch the kernels can run in any order: no destination twice, no
/// id both a source and a destination.
void expectRunnableBatch(const std::vector<int32_t> &pairs) {
  std::set<int32_t> srcs, dsts;
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    srcs.insert(pairs[i]);
    EXPECT_TRUE(dsts.insert(pairs[i + 1]).second)
        << "destination " << pairs[i + 1] << " twice";
  }
  for (int32_t d : dsts)
    EXPECT_FALSE(srcs.count(d)) << d << " is both a source and a destination";
}

} // namespace

// Review finding: moving a unit into a cached block that was its own
// checkpoint's last KV block used to free the record mid-move.
TEST(Boundary, EvictingTheMovingCheckpointWaitsForTheMove) {
  auto m = toyManager(/*paged=*/true);
  BlockPool &pool = m->blocks();
  PageUnitCheckpointStore &store = *m->pagedStore();
  Request filler = holdAllBut(pool, 30);
  auto op = store.beginStore(777, SlotIndex(0));
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->unitIds, (std::vector<BlockId>{BlockId(30), BlockId(31)}));
  store.completeInflight();
  // Block 3 becomes the checkpoint's cached KV block, the only free one.
  int32_t toks[4] = {3, 3, 3, 3};
  ASSERT_TRUE(pool.publish(BlockId(3), 777, toks, 4).ok());
  ASSERT_TRUE(pool.free(BlockId(3)).ok());
  filler.blockTable.erase(filler.blockTable.begin() + 3);
  auto mv = m->moveBoundary(3, {&filler});
  ASSERT_TRUE(mv.ok()) << mv.error().message;
  EXPECT_EQ(mv->stopReason.find("internal"), std::string::npos) << mv->stopReason;
  expectRunnableBatch(mv->blockCopyIds);
  EXPECT_TRUE(pool.invariantsHold());
  EXPECT_TRUE(store.checkInvariants().ok()) << store.checkInvariants().error().message;
  // The eviction reached the store after the move: the checkpoint is gone
  // and its units went back to the pool, none of them past the boundary.
  EXPECT_FALSE(store.contains(777));
  EXPECT_EQ(store.numRecords(), 0);
  for (int32_t id = pool.numBlocks(); id < pool.maxBlocks(); ++id)
    EXPECT_EQ(pool.state(BlockId(id)), BlockState::Retired);
}

// Review finding: a unit moved earlier in the pass, then freed by an
// eviction, used to be handed out again as a destination.
TEST(Boundary, NoDestinationTwiceWhenCheckpointsAreEvicted) {
  auto m = toyManager(/*paged=*/true);
  BlockPool &pool = m->blocks();
  PageUnitCheckpointStore &store = *m->pagedStore();
  Request filler = holdAllBut(pool, 32, {20, 31});
  auto op = store.beginStore(777, SlotIndex(0));
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->unitIds, (std::vector<BlockId>{BlockId(20), BlockId(31)}));
  store.completeInflight();
  int32_t toks[4] = {3, 3, 3, 3};
  ASSERT_TRUE(pool.publish(BlockId(3), 777, toks, 4).ok());
  ASSERT_TRUE(pool.free(BlockId(3)).ok());
  ASSERT_TRUE(pool.free(BlockId(10)).ok());
  filler.blockTable.erase(std::remove_if(filler.blockTable.begin(),
                                         filler.blockTable.end(),
                                         [](BlockId b) {
                                           return b == BlockId(3) || b == BlockId(10);
                                         }),
                          filler.blockTable.end());
  auto mv = m->moveBoundary(3, {&filler});
  ASSERT_TRUE(mv.ok()) << mv.error().message;
  expectRunnableBatch(mv->blockCopyIds);
  for (BlockId b : filler.blockTable) {
    EXPECT_LT(b.value, pool.numBlocks());
    EXPECT_EQ(pool.state(b), BlockState::Held);
  }
  EXPECT_TRUE(pool.invariantsHold());
  EXPECT_TRUE(store.checkInvariants().ok());
}

// Review finding: a checkpoint re-homed into a group that the next live
// top then spends used to leave two copies into that group.
TEST(Boundary, ARehomedCheckpointSpentAgainLeavesOneCopy) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 24;
  c.numGroups = 4;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = 0;
  c.boundary = toyGeometry();
  auto m = CacheManager::create(c).take();
  StateGroupPool &groups = *m->groups();
  std::vector<GroupId> g;
  for (int i = 0; i < 4; ++i)
    g.push_back(groups.pop().take());
  ASSERT_EQ(g, (std::vector<GroupId>{GroupId(0), GroupId(1), GroupId(2), GroupId(3)}));
  ASSERT_TRUE(groups.index(900, GroupId(0)).ok());
  ASSERT_TRUE(groups.release(GroupId(0)).ok()); // the older checkpoint
  ASSERT_TRUE(groups.index(903, GroupId(3)).ok());
  ASSERT_TRUE(groups.release(GroupId(3)).ok());
  Request r1, r2;
  r1.state.group = GroupId(1);
  r2.state.group = GroupId(2);
  r1.allocated = r2.allocated = true; // they hold the groups popped above
  auto mv = m->moveBoundary(2, {&r1, &r2});
  ASSERT_TRUE(mv.ok()) << mv.error().message;
  EXPECT_TRUE(mv->reachedTarget);
  expectRunnableBatch(mv->slotCopyIds);
  // Only the live group's bytes move; both checkpoints were spent.
  ASSERT_EQ(mv->groupMoves.size(), 1u);
  EXPECT_EQ(mv->groupMoves[0].src, GroupId(2));
  EXPECT_EQ(mv->groupMoves[0].dst, GroupId(0));
  EXPECT_EQ(r2.state.group, GroupId(0));
  EXPECT_EQ(r1.state.group, GroupId(1));
  EXPECT_EQ(mv->checkpointsRehomed, 0);
  EXPECT_FALSE(groups.lookupGroup(903).valid());
  EXPECT_TRUE(groups.invariantsHold());
}

TEST(Boundary, AnEmptyStatePoolCannotGrow) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 32;
  c.numGroups = 0;
  c.boundary = toyGeometry();
  auto m = CacheManager::create(c).take();
  auto mv = m->moveBoundary(2, {});
  ASSERT_FALSE(mv.ok());
  EXPECT_EQ(mv.error().kind, ErrorKind::State);
  EXPECT_NE(mv.error().message.find("disabled"), std::string::npos);
}

TEST(CacheManagerErrors, OutOfRangeTokenCountsAreRefused) {
  auto m = toyManager();
  Request r;
  for (int64_t t = 0; t < 10; ++t)
    r.tokens.push_back(t);
  r.numPromptTokens = 10;
  r.state.hasPerReqCache = false;
  EXPECT_ERROR_KIND(m->allocate(r, -1), InvalidArgument);
  EXPECT_TRUE(r.blockTable.empty());
  ASSERT_TRUE(m->allocate(r, 0).ok());
  EXPECT_FALSE(m->hashBlocks(r, 11).ok());     // more than the request has
  EXPECT_FALSE(m->hashBlocks(r, 4, -4).ok());  // negative start
  EXPECT_ERROR_KIND(m->hashBlocks(r, -1), InvalidArgument);
  EXPECT_TRUE(m->hashBlocks(r, 10).ok());
}

TEST(CacheManagerErrors, AFailedAllocateGivesBackEverything) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 4;
  c.numGroups = 2;
  c.transfer = StateTransfer::fork(1).value();
  c.policy.checkpointIntervalTokens = 0;
  auto m = CacheManager::create(c).take();
  Request r; // 6 blocks' worth of tokens for a 4-block pool
  for (int64_t t = 0; t < 24; ++t)
    r.tokens.push_back(t);
  r.numPromptTokens = 24;
  Status s = m->allocate(r, 0); // without asking can_allocate first
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::State);
  EXPECT_NE(s.error().message.find("No PAGE unit available"), std::string::npos);
  EXPECT_TRUE(r.blockTable.empty());
  EXPECT_FALSE(r.state.group.valid());
  EXPECT_EQ(m->blocks().numFree(), 4);
  EXPECT_EQ(m->groups()->numFree(), 2);
  EXPECT_EQ(m->stats().requests, 0);
  EXPECT_TRUE(m->blocks().invariantsHold());
  EXPECT_TRUE(m->groups()->invariantsHold());
}
