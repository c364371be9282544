//===- PlanTest.cpp - Carving one allocation from a pool plan -------------===//

#include "poolrt/Plan.h"
#include "poolrt/RowSpace.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace poolrt;

namespace {

SubPoolSpec page(const char *name, int64_t bytes) {
  return SubPoolSpec::make(Pool::Page, name, bytes).value();
}
SubPoolSpec state(const char *name, int64_t bytes, int64_t perReq) {
  return SubPoolSpec::make(Pool::State, name, bytes, perReq).value();
}

/// planes_only (test/Passes/plan-pools.mlir): a dense and a CSA layer, ring
/// 5, block 256: 64-row envelopes, 10-row slots (no arena), one 1024 B plane.
RowSpaceRows rowSpace() {
  RowSpaceRows rows;
  rows.pageClass = "kv";
  rows.slotClass = "state";
  rows.envelopeRows = 64;
  rows.slotRows = 10;
  rows.planeWidths = {1024};
  rows.arenaRows = 0;
  rows.entryRows = 10;
  rows.slotAlignRows = 2;
  rows.classEnvelopeRows = 64;
  return rows;
}

/// planes_only's counts: 2 slots of 10,240 B, 15 blocks of 65,536 B.
PoolPlan rowSpacePlan() {
  return planPools({page("kv", 65536), state("state", 10240, 1)}, 1048576, 2)
      .take();
}
AllocationShape rowSpaceShape() {
  AllocationShape shape;
  shape.classes = {{"kv", std::nullopt}, {"state", std::nullopt}};
  shape.rowSpace = rowSpace();
  return shape;
}

TEST(Plan, CarvesPageFirstThenStateAligned) {
  // pp_state_floor_first (test/Passes/plan-pools.mlir): kv 2 x 1000 B,
  // recurrent 16 x 500 B; the second region starts on a 256 boundary.
  PoolPlan plan =
      planPools({page("kv", 1000), state("recurrent", 500, 2)}, 10000, 8)
          .take();
  AllocationShape shape;
  shape.classes = {{"recurrent", 500}, {"kv", 1000}}; // declaration order
  auto c = carveAllocation(plan, shape);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->rowSpace);
  EXPECT_TRUE(c->planeOffsets.empty());
  ASSERT_EQ(c->regionOffsets.size(), 2u);
  EXPECT_EQ(c->regionOffsets[1], 0);    // kv: the PAGE region first
  EXPECT_EQ(c->regionOffsets[0], 2048); // recurrent after it
  EXPECT_EQ(c->total, 10240);
}

TEST(Plan, RowSpaceSplitIsTight) {
  // planes_only (test/Passes/plan-pools.mlir): 64-row envelopes, 10-row
  // slots, 15 blocks and 2 slots in one 1024 B plane.
  PoolPlan plan = rowSpacePlan();
  AllocationShape shape = rowSpaceShape();
  shape.rowSpace = rowSpace();
  auto c = carveAllocation(plan, shape);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->rowSpace);
  EXPECT_EQ(c->rowSpace->numBlocks, 15);
  EXPECT_EQ(c->rowSpace->numSlots, 2);
  EXPECT_EQ(c->rowSpace->planeRows, 980);
  EXPECT_EQ(c->rowSpace->slotPositions, 98);
  EXPECT_EQ(c->planeOffsets, std::vector<int64_t>{0});
  EXPECT_FALSE(c->regionOffsets[0]); // both classes live in the plane
  EXPECT_FALSE(c->regionOffsets[1]);
  EXPECT_EQ(c->total, 980 * 1024);
}

TEST(Plan, BlockTableRidersGetTheirOwnRegion) {
  PoolPlan plan = planPools({page("kv", 65536 + 100), state("state", 10240, 1)},
                            1048576, 2)
                      .take();
  AllocationShape shape;
  shape.classes = {{"kv", 100}, {"state", std::nullopt}};
  shape.rowSpace = rowSpace();
  auto c = carveAllocation(plan, shape);
  ASSERT_TRUE(c.ok()) << c.error().message;
  int64_t blocks = c->rowSpace->numBlocks;
  int64_t planeBytes = c->rowSpace->planeRows * 1024;
  EXPECT_EQ(c->regionOffsets[0], planeBytes); // 256-aligned: rows * 1024
  EXPECT_EQ(c->total, (planeBytes + blocks * 100 + 255) / 256 * 256);
}

TEST(Plan, RowSpaceNamingAnUnplannedClassIsItsFault) {
  PoolPlan plan = planPools({page("kv", 65536)}, 1048576, 2).take();
  AllocationShape shape;
  shape.classes = {{"kv", std::nullopt}};
  shape.rowSpace = rowSpace();
  PlanFault fault = PlanFault::Allocation;
  auto c = carveAllocation(plan, shape, &fault);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(fault, PlanFault::RowSpace);
  EXPECT_EQ(c.error().message, "names classes the model does not plan");
}

TEST(Plan, StaleRowSpaceIsRefusedNotCarved) {
  PoolPlan plan = rowSpacePlan();
  AllocationShape shape = rowSpaceShape();
  for (int what = 0; what < 2; ++what) {
    shape.rowSpace = rowSpace();
    if (what == 0)
      shape.rowSpace->slotRows = 12; // not arena + entry rounded up
    else
      shape.rowSpace->envelopeRows = 65; // not what its classes add up to
    PlanFault fault = PlanFault::Allocation;
    auto c = carveAllocation(plan, shape, &fault);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(fault, PlanFault::RowSpace);
    EXPECT_EQ(c.error().message,
              "disagrees with its own geometry: re-run pool-solve-row-space");
  }
}

TEST(Plan, FitGivesUpPageEntriesUntilTheAllocationFits) {
  // 3 x 1000 B of kv and 1 x 10 B of state reserve 3010 of 3010 bytes; the
  // state region's 256-aligned start pushes the allocation to 3328.
  PoolPlan plan =
      planPools({page("kv", 1000), state("s", 10, 1)}, 3010, 1).take();
  AllocationShape shape;
  shape.classes = {{"kv", 1000}, {"s", 10}};
  auto counts = carveWithinBudget(plan, shape, 3010, /*fit=*/false);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->plan.pagedEntries(), 3);
  EXPECT_GT(counts->carving.total, 3010);
  auto fitted = carveWithinBudget(plan, shape, 3010, /*fit=*/true);
  ASSERT_TRUE(fitted.ok()) << fitted.error().message;
  EXPECT_EQ(fitted->plan.pagedEntries(), 2);
  EXPECT_LE(fitted->carving.total, 3010);
  EXPECT_EQ(fitted->carving.regionOffsets[1], 2048);
}

TEST(Plan, FitKeepsTheStateFloorEvenWhenNothingFits) {
  PoolPlan plan = planPools({page("kv", 1000), state("s", 300, 1)}, 300, 1)
                      .take();
  AllocationShape shape;
  shape.classes = {{"kv", 1000}, {"s", 300}};
  auto fitted = carveWithinBudget(plan, shape, 300, /*fit=*/true);
  ASSERT_TRUE(fitted.ok()) << fitted.error().message;
  EXPECT_EQ(fitted->plan.pagedEntries(), 0);
  EXPECT_EQ(fitted->plan.find("s")->entries, 1);
  EXPECT_EQ(fitted->carving.total, 512); // passes the budget: the floor stays
}

TEST(Plan, SlotRowsRoundUpToTheAlignment) {
  EXPECT_EQ(slotRowsFor(0, 10, 2).value(), 10);
  EXPECT_EQ(slotRowsFor(3, 10, 4).value(), 16);
  EXPECT_FALSE(slotRowsFor(0, 10, 0).ok());
  EXPECT_FALSE(slotRowsFor(INT64_MAX, 1, 2).ok());
}

TEST(Plan, TightPlaneRowsRoundsBlocksUpToWholeSlots) {
  EXPECT_EQ(tightPlaneRows(15, 64, 2, 10).value(), 980);
  EXPECT_EQ(tightPlaneRows(0, 64, 0, 10).value(), 0);
  EXPECT_FALSE(tightPlaneRows(-1, 64, 2, 10).ok());
  EXPECT_FALSE(tightPlaneRows(1, 64, 2, 0).ok());
  EXPECT_FALSE(tightPlaneRows(int64_t(1) << 40, int64_t(1) << 30, 0, 2).ok());
  // The same rows RowSpaceGeometry gives when it is not told plane_rows.
  auto g = RowSpaceGeometry::create({0, 4}, 15, 2, 5, 256);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->planeRows(),
            tightPlaneRows(15, g->envelopeRows(), 2, g->slotRows()).value());
}

} // namespace
