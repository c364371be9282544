//===- ServableTest.cpp - The one "can the runtime serve this?" rule ------===//
//
// poolrt/Servable.h is the rule both poolc (pool-check-servable) and the
// runtime (cacheManagerConfig) refuse with. These cases drive the shape
// rule directly: which class it refuses at, what it points to, and that a
// servable shape passes.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Servable.h"

#include <gtest/gtest.h>

using namespace poolrt;

namespace {

ServeShapeClass page(const std::string &name, bool window = false) {
  ServeShapeClass c;
  c.name = name;
  c.page = true;
  c.window = window;
  return c;
}

ServeShapeClass state(const std::string &name, std::optional<TransferKind> t,
                      bool slot = false, int64_t perReq = 1) {
  ServeShapeClass c;
  c.name = name;
  c.transfer = t;
  c.slot = slot;
  c.entriesPerReq = perReq;
  return c;
}

ServeShape shape(std::vector<ServeShapeClass> classes, bool rowSpace = false) {
  return ServeShape{"m", rowSpace, std::move(classes)};
}

} // namespace

TEST(Servable, StatelessAndForkingModelsAreServed) {
  EXPECT_FALSE(checkServableShape(shape({page("kv")})));
  EXPECT_FALSE(checkServableShape(
      shape({page("kv"), state("a", TransferKind::Fork), state("b", TransferKind::Fork)})));
  EXPECT_FALSE(checkServableShape(shape({page("kv"), page("swa", true)})));
  EXPECT_FALSE(checkServableShape(
      shape({page("kv"), state("slot", TransferKind::Copy, true)}, /*rowSpace=*/true)));
  // A STATE class without a transfer is not checkpointed and joins no group.
  EXPECT_FALSE(checkServableShape(
      shape({page("kv"), state("a", TransferKind::Fork), state("b", std::nullopt)})));
}

TEST(Servable, NoPageClassIsRefusedAtTheModel) {
  auto r = checkServableShape(shape({state("s", TransferKind::Fork)}));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->subject.empty());
  EXPECT_EQ(r->message.rfind("model 'm' declares no PAGE entry class", 0), 0u);
}

TEST(Servable, ASecondTransferIsRefusedAtItWithANoteAtTheFirst) {
  auto r = checkServableShape(shape(
      {page("kv"), state("a", TransferKind::Fork), state("b", TransferKind::None)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->subject, "b");
  EXPECT_TRUE(r->atTransfer);
  EXPECT_EQ(r->noteClass, "a");
  EXPECT_EQ(r->noteText, "the first STATE class with a transfer");
  EXPECT_EQ(r->message.rfind("STATE class 'b' declares a none transfer, and 'a' a fork one: "
                             "several STATE classes",
                             0),
            0u);
  // In a row space even two forks are refused: the slot is one class.
  auto rs = checkServableShape(shape(
      {page("kv"), state("a", TransferKind::Copy, true), state("b", TransferKind::Fork)},
      true));
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->subject, "b");
  EXPECT_NE(rs->message.find("a row-space model resumes one STATE class"), std::string::npos);
}

TEST(Servable, SlotAndCopyRulesNameTheirClass) {
  auto copy = checkServableShape(shape({page("kv"), state("s", TransferKind::Copy)}));
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->subject, "s");
  EXPECT_NE(copy->message.find("has a copy transfer"), std::string::npos);
  auto fork = checkServableShape(
      shape({page("kv"), state("slot", TransferKind::Fork, true)}, true));
  ASSERT_TRUE(fork);
  EXPECT_NE(fork->message.find("is the row space's slot and has a fork transfer"),
            std::string::npos);
  auto two = checkServableShape(
      shape({page("kv"), state("slot", TransferKind::Copy, true, 2)}, true));
  ASSERT_TRUE(two);
  EXPECT_NE(two->message.find("asks for 2 entries per request"), std::string::npos);
  EXPECT_FALSE(two->atTransfer);
}

TEST(Servable, WindowClassesRunOnlyInStatelessModels) {
  auto r = checkServableShape(
      shape({page("kv"), page("swa", true), state("s", TransferKind::Fork)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->subject, "swa");
  EXPECT_NE(r->message.find("this model has STATE class 's' with a transfer"),
            std::string::npos);
  auto rs = checkServableShape(shape({page("kv"), page("swa", true)}, true));
  ASSERT_TRUE(rs);
  EXPECT_NE(rs->message.find("this model has a row space"), std::string::npos);
}

TEST(Servable, TwoFullPageClassesAreRefused) {
  auto r = checkServableShape(shape({page("kv"), page("other")}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->subject, "other");
}

// The window reserve rule the manifest check and WindowSet::create share:
// a sliding window of 128 tokens at block 16 with no margin keeps a ring
// of ceil(127 / 16) + 1 = 9 blocks, so a reserve must be at least 10.
TEST(Servable, AWindowReserveMustPassItsRing) {
  AttentionPattern sliding{AttentionKind::Sliding, 128};
  auto nine = windowReserveRefusal(sliding, 9, 0, 16);
  ASSERT_TRUE(nine);
  EXPECT_EQ(*nine, "a reserve of 9 blocks per request leaves no room past its "
                   "ring of 9 blocks");
  EXPECT_FALSE(windowReserveRefusal(sliding, 10, 0, 16));
  // A margin of rolled-back tokens widens the ring: 127 + 16 -> 9 + 1.
  EXPECT_TRUE(windowReserveRefusal(sliding, 10, 16, 16));
  EXPECT_TRUE(windowReserveRefusal(AttentionPattern{AttentionKind::Full, 0}, 10, 0, 16));
  EXPECT_TRUE(windowReserveRefusal(AttentionPattern{AttentionKind::Sliding, 0}, 10, 0, 16));
}
