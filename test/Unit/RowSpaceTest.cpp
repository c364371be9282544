//===- RowSpaceTest.cpp - Row-space geometry arithmetic -------------------===//

#include "poolrt/RowSpace.h"

#include <gtest/gtest.h>

#include <set>
#include "test/Unit/TestKinds.h"

using namespace poolrt;

namespace {

std::vector<int64_t> flashTrunk() {
  std::vector<int64_t> r{0, 0};
  for (int i = 0; i < 20; ++i) {
    r.push_back(4);
    r.push_back(128);
  }
  r.push_back(4);
  return r;
}

TEST(RowSpace, RejectsWhatTheReferenceDividesByZeroOn) {
  // Q6: block size below or not a multiple of a ratio, all layers absent,
  // negative counts.
  EXPECT_ERROR_KIND(RowSpaceGeometry::create({128}, 1, 1, 128, 64), InvalidArgument);
  EXPECT_ERROR_KIND(RowSpaceGeometry::create({4}, 1, 1, 128, 6), InvalidArgument);
  EXPECT_ERROR_KIND(RowSpaceGeometry::create({-1, -1}, 0, 0, 128, 256), InvalidArgument);
  EXPECT_ERROR_KIND(RowSpaceGeometry::create({0}, -1, 0, 128, 256), InvalidArgument);
  EXPECT_ERROR_KIND(RowSpaceGeometry::create({0}, 0, -1, 128, 256), InvalidArgument);
  EXPECT_ERROR_KIND(RowSpaceGeometry::create({0}, 0, 0, 128, 0), InvalidArgument);
}

TEST(RowSpace, WithCapacityKeepsSlotNumbering) {
  // Q9: a geometry given slot_positions keeps them when re-split.
  auto g = RowSpaceGeometry::create(flashTrunk(), 4, 2, 128, 256, 200000, 0,
                                    40);
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto resplit = g->withCapacity(8, 3, 200000);
  ASSERT_TRUE(resplit.ok()) << resplit.error().message;
  EXPECT_EQ(resplit->slotPositions(), 40);
  EXPECT_EQ(*resplit->physicalSlot(0), 39);
}

TEST(RowSpace, FixedPlaneAddressesDoNotMoveWithTheSplit) {
  // With a fixed plane, every address is independent of (blocks, slots):
  // the boundary can move without re-capturing anything.
  auto a = RowSpaceGeometry::create(flashTrunk(), 10, 3, 131, 256, 100000);
  auto b = RowSpaceGeometry::create(flashTrunk(), 30, 1, 131, 256, 100000);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int64_t l : {0, 2, 3, 42})
    for (int64_t pos : {0, 1, 64, 130})
      EXPECT_EQ(*a->windowIndex(l, *a->physicalSlot(0), pos),
                *b->windowIndex(l, *b->physicalSlot(0), pos));
  EXPECT_EQ(*a->compressIndex(2, 5, 7), *b->compressIndex(2, 5, 7));
}

TEST(RowSpace, EveryRowDistinctAndInItsRegion) {
  auto g = RowSpaceGeometry::create(flashTrunk(), 3, 3, 131, 256, std::nullopt,
                                    100);
  ASSERT_TRUE(g.ok());
  std::set<int64_t> seen;
  for (int64_t grp = 0; grp < 3; ++grp) {
    int64_t slot = *g->physicalSlot(grp);
    auto span = g->slotSpan(slot);
    for (size_t l = 0; l < g->ratios().size(); ++l)
      for (int64_t pos = 0; pos < 131; ++pos) {
        int64_t row = *g->layerBaseRow(l) + *g->windowIndex(l, slot, pos);
        EXPECT_GE(row, span.first + g->arenaRows());
        EXPECT_LT(row, span.second);
        EXPECT_TRUE(seen.insert(row).second);
      }
  }
  for (size_t l = 0; l < g->ratios().size(); ++l) {
    if (g->ratios()[l] == 0)
      continue;
    for (int64_t blk = 0; blk < 3; ++blk)
      for (int64_t r = 0; r < (*g->layerClass(l))->blockRows; ++r) {
        int64_t row = *g->layerBaseRow(l) + *g->compressIndex(l, blk, r);
        EXPECT_LT(row, 3 * g->envelopeRows());
        EXPECT_TRUE(seen.insert(row).second);
      }
  }
}

TEST(RowSpace, LargePlanesStayIn64Bits) {
  // A 150 GiB-class plane: 210 M rows; byte offsets pass 2^31 and 2^32.
  auto g = RowSpaceGeometry::create(flashTrunk(), 147487, 256, 128, 256,
                                    std::nullopt, 20480);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->planeRows(), 210782208);
  EXPECT_EQ(g->planeBytes(512), int64_t(210782208) * 512);
  auto top = g->slotSpan(*g->physicalSlot(0));
  EXPECT_EQ(top.second, g->planeRows());
  // Absurd sizes are refused instead of wrapping.
  EXPECT_FALSE(RowSpaceGeometry::create(flashTrunk(), INT64_MAX / 2, 1, 128,
                                        256).ok());
}

TEST(RowSpace, WindowRowsAreForNonNegativePositions) {
  // Q7: the row of a position is defined for pos >= 0; ring positions out
  // of range are refused.
  auto g = RowSpaceGeometry::create(flashTrunk(), 1, 1, 128, 256);
  ASSERT_TRUE(g.ok());
  EXPECT_ERROR_KIND(g->windowIndex(0, 0, -1), InvalidArgument);
  EXPECT_ERROR_KIND(g->windowIndex(0, 0, 128), InvalidArgument);
  EXPECT_ERROR_KIND(g->layerBaseRow(99), InvalidArgument);
  EXPECT_EQ(g->windowParams(4)->index(0, 128), g->windowParams(4)->index(0, 0));
}

} // namespace

// Every index function at each side of each of its bounds: the last valid
// value is accepted, the first invalid one refused (a mutation turning a
// `>=` into `>` must fail here).
TEST(RowSpace, IndexBoundsAreExact) {
  auto g = RowSpaceGeometry::create(flashTrunk(), 5, 3, 131, 256, std::nullopt,
                                    100);
  ASSERT_TRUE(g.ok()) << g.error().message;
  int64_t nb = g->numBlocks(), ns = g->numSlots();
  // compressIndex: block in [0, num_blocks), row in [0, block_rows).
  const int64_t csaLayer = 2, hcaLayer = 3; // ratios 4 and 128
  int64_t csaRows = 256 / 4, hcaRows = 256 / 128;
  EXPECT_TRUE(g->compressIndex(csaLayer, nb - 1, csaRows - 1).ok());
  EXPECT_FALSE(g->compressIndex(csaLayer, nb, 0).ok());
  EXPECT_FALSE(g->compressIndex(csaLayer, -1, 0).ok());
  EXPECT_FALSE(g->compressIndex(csaLayer, 0, csaRows).ok());
  EXPECT_FALSE(g->compressIndex(csaLayer, 0, -1).ok());
  EXPECT_TRUE(g->compressIndex(hcaLayer, 0, hcaRows - 1).ok());
  EXPECT_FALSE(g->compressIndex(hcaLayer, 0, hcaRows).ok());
  EXPECT_FALSE(g->compressIndex(0, 0, 0).ok()); // dense: no compressed KV
  // The last block's last row ends before the slots begin.
  int64_t lastRow = *g->layerBaseRow(csaLayer) +
                    *g->compressIndex(csaLayer, nb - 1, csaRows - 1);
  EXPECT_LT(lastRow, nb * g->envelopeRows());
  // physicalSlot: group in [0, num_slots).
  EXPECT_TRUE(g->physicalSlot(ns - 1).ok());
  EXPECT_FALSE(g->physicalSlot(ns).ok());
  EXPECT_FALSE(g->physicalSlot(-1).ok());
  // windowIndex: ring position in [0, ring_slots), slot in the plane.
  int64_t top = *g->physicalSlot(0);
  EXPECT_TRUE(g->windowIndex(0, top, 130).ok());
  EXPECT_FALSE(g->windowIndex(0, top, 131).ok());
  EXPECT_FALSE(g->windowIndex(0, top, -1).ok());
  EXPECT_FALSE(g->windowIndex(0, g->slotPositions(), 0).ok());
  EXPECT_TRUE(g->windowIndex(0, g->slotOrigin(), 0).ok());
  EXPECT_FALSE(g->windowIndex(0, g->slotOrigin() - 1, 0).ok());
  auto row = g->windowIndex(0, top, 130);
  EXPECT_LT(*row + *g->layerBaseRow(0), g->planeRows());
  // layerClass: layer in [0, num_layers).
  EXPECT_TRUE(g->layerClass(int64_t(flashTrunk().size()) - 1).ok());
  EXPECT_FALSE(g->layerClass(int64_t(flashTrunk().size())).ok());
  EXPECT_FALSE(g->layerClass(-1).ok());
}
