//===- SubPoolTest.cpp - Pool sizing arithmetic ---------------------------===//

#include "poolrt/SubPool.h"

#include <gtest/gtest.h>
#include "test/Unit/TestKinds.h"

using namespace poolrt;

namespace {

SubPoolSpec page(int64_t bytes, const char *name = "kv") {
  return SubPoolSpec::make(Pool::Page, name, bytes).value();
}
SubPoolSpec state(const char *name, int64_t bytes, int64_t perReq,
                  int64_t extra = 0) {
  return SubPoolSpec::make(Pool::State, name, bytes, perReq, extra).value();
}

TEST(SubPool, ValidatesAtConstruction) {
  // Reference rules.
  auto s = SubPoolSpec::make(Pool::State, "s", 10, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(s.error().message, "s: STATE entries need entries_per_req >= 1");
  auto p = SubPoolSpec::make(Pool::Page, "p", 10, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(p.error().message, "p: PAGE entries are sized from the remainder");
  // Q5: what the reference accepts and later divides by.
  EXPECT_ERROR_KIND(SubPoolSpec::make(Pool::Page, "kv", 0), InvalidArgument);
  EXPECT_ERROR_KIND(SubPoolSpec::make(Pool::Page, "kv", -5), InvalidArgument);
  EXPECT_ERROR_KIND(SubPoolSpec::make(Pool::State, "s", 10, 1, -1), InvalidArgument);
  EXPECT_ERROR_KIND(SubPoolSpec::make(Pool::State, "", 10, 1), InvalidArgument);
}

TEST(SubPool, LargeBudgetDoesNotOverflow) {
  // 2^40 bytes of budget, 20,000,000-byte entries.
  const int64_t budget = int64_t(1) << 40;
  auto plan = planPools({page(20'000'000), state("state", 20'000'000, 1)},
                        budget, 256);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->find("state")->reservedBytes, 5'120'000'000);
  EXPECT_EQ(plan->pagedEntries(), (budget - 5'120'000'000) / 20'000'000);
  EXPECT_EQ(plan->pagedEntries(), 54'719);
  EXPECT_LE(plan->totalReservedBytes(), budget);
}

TEST(SubPool, StateReservationOverflowIsAnError) {
  auto plan = planPools({state("s", int64_t(1) << 40, 1)}, 1000,
                        int64_t(1) << 30);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(plan.error().message.find("overflows"), std::string::npos);
  auto merged = mergeSpecs({page(INT64_MAX), page(1)});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(merged.error().message.find("overflows"), std::string::npos);
}

TEST(SubPool, ExactFitIsAPlanWithZeroPages) {
  // Quirk Q3: the reference raises here; one byte more gives 0 PAGE entries.
  auto exact = planPools({page(1000), state("s", 500, 2)}, 8000, 8);
  ASSERT_TRUE(exact.ok()) << exact.error().message;
  EXPECT_EQ(exact->pagedEntries(), 0);
  EXPECT_EQ(exact->find("s")->entries, 16);
  auto under = planPools({page(1000), state("s", 500, 2)}, 7999, 8);
  ASSERT_FALSE(under.ok());
  EXPECT_EQ(under.error().kind, ErrorKind::InsufficientBudget);
  EXPECT_EQ(under.error().reservedBytes, 8000);
  EXPECT_EQ(under.error().availableBytes, 7999);
  EXPECT_EQ(under.error().entries, 16);
}

TEST(SubPool, StructureIsCheckedBeforeTheBudget) {
  // Quirk Q4: two PAGE classes is reported even when the budget is short.
  auto plan = planPools({page(10, "kv"), page(10, "other"), state("s", 100, 1)},
                        1, 8);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(plan.error().message, "more than one PAGE entry class: ['kv', 'other']");
}

TEST(SubPool, NegativeBudgetWithoutStateGivesZeroPages) {
  auto plan = planPools({page(10)}, -100, 8);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pagedEntries(), 0);
  EXPECT_EQ(plan->totalReservedBytes(), 0);
}

TEST(SubPool, StateCountsDoNotDependOnTheBudget) {
  for (int64_t budget : {100'000, 1'000'000, 10'000'000}) {
    auto plan = planPools({page(100), state("w", 10, 3, 64)}, budget, 8);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->find("w")->entries, 88);
    for (const PlannedClass &c : plan->classes())
      EXPECT_EQ(c.reservedBytes, c.entries * c.entryBytes);
    EXPECT_LE(plan->totalReservedBytes(), budget);
  }
}

TEST(SubPool, WithPagedEntries) {
  auto plan = planPools({page(100), state("s", 10, 1)}, 10'000, 8);
  ASSERT_TRUE(plan.ok());
  auto lower = plan->withPagedEntries(7);
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(lower->pagedEntries(), 7);
  EXPECT_EQ(lower->find("kv")->reservedBytes, 700);
  EXPECT_EQ(lower->find("s")->entries, 8);
  EXPECT_ERROR_KIND(plan->withPagedEntries(-1), InvalidArgument);
  EXPECT_FALSE(plan->withPagedEntries(INT64_MAX).ok()); // bytes overflow
  EXPECT_ERROR_KIND(planPools({state("s", 10, 1)}, 100, 1)->withPagedEntries(1), InvalidArgument);
}

TEST(SubPool, MergeKeepsFirstOrderAndNamesBothOnClash) {
  std::vector<size_t> first;
  auto merged = mergeSpecs({state("a", 1, 1), page(5), state("a", 2, 1), page(7)},
                           &first);
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->size(), 2u);
  EXPECT_EQ((*merged)[0].name, "a");
  EXPECT_EQ((*merged)[0].entryBytes, 3);
  EXPECT_EQ((*merged)[1].entryBytes, 12);
  EXPECT_EQ(first, (std::vector<size_t>{0, 1}));
  std::pair<size_t, size_t> clash;
  auto bad = mergeSpecs({state("a", 1, 1), page(5), state("a", 1, 2)}, nullptr,
                        &clash);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(clash, (std::pair<size_t, size_t>{0, 2}));
}

TEST(SubPool, NegativeMaxNumSeqsIsRejected) {
  EXPECT_ERROR_KIND(planPools({page(10)}, 100, -1), InvalidArgument);
}

} // namespace
