// The shared small parts under poolrt/detail: typed ids, the intrusive LRU,
// and the vendor backends' clean failure when their runtime is absent.

#include "poolrt/BlockPool.h"
#include "poolrt/Device.h"
#include "poolrt/PageUnitStore.h"
#include "poolrt/StateGroupPool.h"
#include "poolrt/detail/IntrusiveLru.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <type_traits>
#include <vector>

using namespace poolrt;

// Kinds of id do not mix, and none is made from a bare integer implicitly.
static_assert(!std::is_same_v<BlockId, GroupId>);
static_assert(!std::is_same_v<BlockId, SlotIndex>);
static_assert(!std::is_convertible_v<BlockId, GroupId>);
static_assert(!std::is_convertible_v<GroupId, BlockId>);
static_assert(!std::is_convertible_v<int32_t, BlockId>);
static_assert(std::is_same_v<decltype(CheckpointId{}.value), int64_t>);
static_assert(std::is_same_v<decltype(BlockId{}.value), int32_t>);
static_assert(sizeof(BlockId) == 4 && sizeof(CheckpointId) == 8);
static_assert(std::is_trivially_copyable_v<BlockId>);
static_assert(!kNoBlock.valid() && kNoBlock.value == -1);
static_assert(!kNoGroup.valid() && !kNoCheckpoint.valid());
static_assert(BlockId(3) == BlockId(3) && BlockId(3) != BlockId(4));
static_assert(GroupId(1) < GroupId(2) && SlotIndex(0) != SlotIndex());

namespace {

std::vector<int32_t> order(const detail::IntrusiveLru &l) {
  std::vector<int32_t> out;
  for (int32_t i = l.front(); i != detail::IntrusiveLru::kNil; i = l.next(i))
    out.push_back(i);
  return out;
}

TEST(IntrusiveLru, OrderUnlinkAndMembership) {
  detail::IntrusiveLru l(6);
  EXPECT_TRUE(l.empty());
  for (int32_t i : {4, 0, 2, 5})
    l.pushBack(i);
  EXPECT_EQ(order(l), (std::vector<int32_t>{4, 0, 2, 5}));
  EXPECT_EQ(l.back(), 5);
  EXPECT_TRUE(l.contains(4) && l.contains(2) && !l.contains(1));
  l.unlink(0); // middle
  l.unlink(4); // front
  l.unlink(5); // back
  EXPECT_EQ(order(l), (std::vector<int32_t>{2}));
  EXPECT_FALSE(l.contains(0) || l.contains(4) || l.contains(5));
  l.pushBack(4); // re-queued at the tail
  EXPECT_EQ(order(l), (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(l.prev(4), 2);
  l.reserveIds(9);
  l.pushBack(8);
  EXPECT_EQ(order(l), (std::vector<int32_t>{2, 4, 8}));
  l.clear();
  EXPECT_TRUE(l.empty());
  EXPECT_FALSE(l.contains(2) || l.contains(8));
}

TEST(IntrusiveLru, MoveToBackRequeuesAMemberAtTheTail) {
  detail::IntrusiveLru l(5);
  for (int32_t i : {3, 1, 4, 0})
    l.pushBack(i);
  l.moveToBack(3); // the front
  EXPECT_EQ(order(l), (std::vector<int32_t>{1, 4, 0, 3}));
  l.moveToBack(4); // the middle
  EXPECT_EQ(order(l), (std::vector<int32_t>{1, 0, 3, 4}));
  l.moveToBack(4); // already the back: nothing moves
  EXPECT_EQ(order(l), (std::vector<int32_t>{1, 0, 3, 4}));
  EXPECT_EQ(l.front(), 1);
  EXPECT_EQ(l.back(), 4);
  EXPECT_EQ(l.prev(4), 3);
  EXPECT_EQ(l.next(0), 3);
  EXPECT_EQ(l.prev(1), detail::IntrusiveLru::kNil);
}

// A backend whose vendor runtime is missing is an error that names it.
TEST(VendorDevice, AbsentRuntimeIsACleanError) {
  if (void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(lib);
  } else {
    auto d = openDevice("cuda");
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().kind, ErrorKind::State);
    EXPECT_NE(d.error().message.find("cuda backend absent: libcuda.so.1 not found"),
              std::string::npos)
        << d.error().message;
  }
  bool hip = false;
  for (const char *n : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7"})
    if (void *lib = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
      dlclose(lib);
      hip = true;
    }
  if (!hip) {
    auto d = openDevice("hip");
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().kind, ErrorKind::State);
    EXPECT_EQ(d.error().message, "hip backend absent: libamdhip64.so not found");
  }
}

} // namespace
