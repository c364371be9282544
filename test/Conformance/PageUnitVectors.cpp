//===- PageUnitVectors.cpp - PAGE-unit checkpoint image vectors (pu_*) ----===//
//
// The pu_* vectors describe the reference tests' scenarios in prose plus
// their observed values; each handler replays the scenario of its source
// test (tests/test_page_unit_checkpoint.py) against PageUnitCheckpointStore
// over a BlockPool and compares every recorded value.
//
//===----------------------------------------------------------------------===//

#include "Vectors.h"

#include "poolrt/PageUnitStore.h"

#include <algorithm>

using namespace conformance;
using namespace poolrt;

namespace {

std::vector<int64_t> idsOf(const std::vector<BlockId> &ids) {
  std::vector<int64_t> out;
  for (BlockId b : ids)
    out.push_back(b.value);
  return out;
}

void runSpecErrors(const json::Object &in, const json::Value &expV) {
  const json::Array &cases = *in.getArray("cases");
  const json::Array &exp = *expV.getAsArray();
  ASSERT_EQ(cases.size(), exp.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string c = str(cases[i]);
    std::optional<Result<PagedStateCheckpointSpec>> r;
    if (c == "image>slot")
      r = PagedStateCheckpointSpec::create(10, 25, "layout-v1", 26);
    else if (c == "page_unit_bytes=0")
      r = PagedStateCheckpointSpec::create(0, 25, "layout-v1", 25);
    else if (c == "layout ''")
      r = PagedStateCheckpointSpec::create(10, 25, "", 25);
    else
      ADD_FAILURE() << "unknown case '" << c << "'";
    ASSERT_TRUE(r.has_value());
    ASSERT_FALSE(r->ok()) << c;
    expectError(r->error(), *exp[i].getAsObject(), /*exactMessage=*/true);
  }
  // The other rejections of the source test, and the unit pricing.
  EXPECT_FALSE(PagedStateCheckpointSpec::create(10, -1, "layout-v1", 25).ok());
  EXPECT_FALSE(PagedStateCheckpointSpec::create(10, 25, "layout-v1", 0).ok());
  EXPECT_EQ(PagedStateCheckpointSpec::create(10, 25, "layout-v1", 25)
                ->unitsPerCheckpoint(),
            3);
  EXPECT_EQ(PagedStateCheckpointSpec::create(10, 25, "layout-v1", 11)
                ->unitsPerCheckpoint(),
            2);
}

PagedStateCheckpointSpec specOf(const json::Object &s) {
  auto spec = PagedStateCheckpointSpec::create(
      *s.getInteger("page_unit_bytes"), *s.getInteger("slot_bytes"),
      "layout-v1", *s.getInteger("image_bytes"));
  EXPECT_TRUE(spec.ok());
  return spec.take();
}

// test_copying_is_not_hash_visible_and_ready_is /
// test_multiple_restore_readers_pin_the_whole_record.
void runLifecycle(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  BlockPool pool = BlockPool::create(*in.getInteger("pool_blocks")).take();
  PageUnitCheckpointStore store(pool, specOf(*in.getObject("spec")));

  auto op = store.beginStore(101, SlotIndex(3));
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(idsOf(op->unitIds), intList(*exp.get("begin_store_units")));
  EXPECT_EQ(op->imageBytes, 25);
  EXPECT_EQ(op->srcSlot, SlotIndex(3));
  EXPECT_EQ(op->layoutId, "layout-v1");
  EXPECT_EQ(store.lookup(101).value, *exp.getInteger("lookup_while_copying"));
  EXPECT_EQ(pool.numFree(), *exp.getInteger("num_free_after_store"));
  EXPECT_EQ(store.beginStore(101, SlotIndex(5)).has_value(),
            *exp.getBoolean("dup_store_while_pending"));
  EXPECT_TRUE(store.checkInvariants().ok());

  store.completeInflight();
  CheckpointId id = store.lookup(101);
  EXPECT_EQ(id.value, *exp.getInteger("lookup_after_complete"));
  ASSERT_TRUE(store.record(id).has_value());
  EXPECT_EQ(store.record(id)->state, CheckpointState::Ready);

  EXPECT_TRUE(store.beginRestore(101, SlotIndex(4)).has_value());
  EXPECT_TRUE(store.beginRestore(101, SlotIndex(8)).has_value());
  EXPECT_EQ(store.record(id)->pinCount, *exp.getInteger("pin_count_2_readers"));

  EXPECT_EQ(store.unindex(101), *exp.getBoolean("unindex_returns"));
  EXPECT_EQ(store.lookup(101), kNoCheckpoint);
  ASSERT_TRUE(store.record(id).has_value());
  EXPECT_EQ(checkpointStateName(store.record(id)->state),
            str(*exp.get("state_after_unindex")));
  EXPECT_EQ(pool.numFree(), *exp.getInteger("num_free_while_pinned"));
  EXPECT_TRUE(store.checkInvariants().ok());

  std::vector<int64_t> slots;
  for (const CheckpointRestoreOp &r : store.takeRestoreOps())
    slots.push_back(r.dstSlot.value);
  std::sort(slots.begin(), slots.end()); // the test compares a set
  EXPECT_EQ(slots, intList(*exp.get("restores_taken")));

  store.completeInflight();
  EXPECT_EQ(!store.record(id).has_value(), *exp.getBoolean("record_released"));
  EXPECT_EQ(pool.numFree(), *exp.getInteger("num_free_end"));
  EXPECT_TRUE(store.checkInvariants().ok());
  EXPECT_TRUE(store.health().ok());
}

// test_lru_eviction_releases_one_complete_image.
void runLruEvict(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  BlockPool pool = BlockPool::create(*in.getInteger("pool_blocks")).take();
  auto spec = PagedStateCheckpointSpec::create(10, 25, "layout-v1", 25);
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(spec->unitsPerCheckpoint(), *in.getInteger("units_per_checkpoint"));
  PageUnitCheckpointStore store(pool, spec.take());

  auto ready = [&](BlockHash h, int32_t slot) {
    EXPECT_TRUE(store.beginStore(h, SlotIndex(slot)).has_value());
    store.completeInflight();
    CheckpointId id = store.lookup(h);
    EXPECT_TRUE(id.valid());
    return id;
  };
  CheckpointId first = ready(101, 0);
  CheckpointId second = ready(202, 1);
  EXPECT_EQ(pool.numFree(), *exp.getInteger("num_free_before"));

  auto third = store.beginStore(303, SlotIndex(2));
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(idsOf(third->unitIds), intList(*exp.get("third_units")));
  EXPECT_EQ(store.lookup(101).value, *exp.getInteger("lookup_101"));
  EXPECT_EQ(store.lookup(202) == second, *exp.getBoolean("lookup_202_ready"));
  EXPECT_FALSE(store.record(first).has_value());
  EXPECT_EQ(store.evictions(), *exp.getInteger("evictions"));
  EXPECT_EQ(pool.numFree(), *exp.getInteger("num_free_after"));
  EXPECT_TRUE(store.checkInvariants().ok());
}

} // namespace

REGISTER_VECTORS("PagedStateCheckpointSpec validation", runSpecErrors);
REGISTER_VECTORS("PageUnitCheckpointStore lifecycle (COPYING->READY, restore "
                 "pins, EVICTING)",
                 runLifecycle);
REGISTER_VECTORS("PageUnitCheckpointStore.ensure_free_units / LRU eviction",
                 runLruEvict);
