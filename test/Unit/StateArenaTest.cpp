//===- StateArenaTest.cpp - State arena arithmetic ------------------------===//

#include "poolrt/Runs.h"
#include "poolrt/StateArena.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include "test/Unit/TestKinds.h"

using namespace poolrt;

namespace {

StateField f32(const char *name, int64_t layers, std::vector<int64_t> shape,
               bool ckpt = true, int64_t align = 0, double fill = 0.0) {
  return StateField::make(name, layers, std::move(shape), DType::F32, fill,
                          align, ckpt)
      .value();
}

TEST(StateArena, DTypesAndAliases) {
  EXPECT_EQ(parseDType("float32"), DType::F32);
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_EQ(parseDType("fp8"), DType::FP8E4M3);
  EXPECT_EQ(dtypeSize(DType::BF16), 2);
  EXPECT_EQ(dtypeSize(DType::FP8E5M2), 1);
  EXPECT_FALSE(parseDType("float128").has_value());
  EXPECT_FALSE(parseDType("").has_value());
}

TEST(StateArena, FillMustBeRepresentable) {
  EXPECT_TRUE(fillRepresentable(DType::BF16, -INFINITY));
  EXPECT_FALSE(fillRepresentable(DType::BF16, 0.1));
  EXPECT_TRUE(fillRepresentable(DType::F16, 1.5));
  EXPECT_FALSE(fillRepresentable(DType::F16, 1e6));
  EXPECT_FALSE(fillRepresentable(DType::FP8E4M3, -INFINITY));
  EXPECT_TRUE(fillRepresentable(DType::FP8E4M3, 0.0));
  EXPECT_FALSE(fillRepresentable(DType::I8, 200));
  EXPECT_FALSE(fillRepresentable(DType::F32, NAN));
  EXPECT_ERROR_KIND(StateField::make("x", 1, {4}, DType::BF16, 0.1), InvalidArgument);
}

TEST(StateArena, FieldValidation) {
  auto a = StateField::make("a", 1, {4}, DType::F32, 0, 100);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(a.error().message.find("alignment 100 must be a multiple of 256"),
            std::string::npos);
  EXPECT_ERROR_KIND(StateField::make("a", -1, {4}, DType::F32), InvalidArgument);
  EXPECT_ERROR_KIND(StateField::make("a", 1, {-4}, DType::F32), InvalidArgument);
  // Sizes that would wrap 64 bits are refused, not wrapped.
  auto huge = StateField::make("h", 1 << 20, {1 << 20, 1 << 20, 1 << 10},
                               DType::F32);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(huge.error().message.find("overflows"), std::string::npos);
}

TEST(StateArena, PerFieldAlignment) {
  // A field with align 1024 starts on a 1024 boundary even after 12 bytes.
  std::vector<StateField> fields{f32("a", 1, {3}), f32("w", 1, {4}, true, 1024)};
  auto ext = fieldExtents(fields);
  ASSERT_TRUE(ext.ok());
  EXPECT_EQ((*ext)[1].begin, 1024);
  EXPECT_EQ(*entryBytesFor(fields), 1280);
  // The arena's stride must then be a multiple of 1024.
  EXPECT_ERROR_KIND(StateArenaLayout::create(fields, 2, 1280), InvalidArgument);
  EXPECT_TRUE(StateArenaLayout::create(fields, 2, 2048).ok());
  EXPECT_FALSE(StateArenaLayout::create(fields, 2, std::nullopt, std::nullopt,
                                        256).ok());
}

TEST(StateArena, FillTouchesOnlyLiveEntries) {
  std::vector<StateField> fields{
      f32("kv", 2, {4}), f32("score", 2, {4}, true, 0, -INFINITY),
      StateField::make("h", 1, {8}, DType::BF16, -INFINITY).value()};
  auto arena = StateArenaLayout::create(fields, 4, std::nullopt, 1);
  ASSERT_TRUE(arena.ok());
  std::vector<uint8_t> buf(arena->totalBytes(), 0xAB);
  arena->fillLive(buf.data());
  int64_t score = *arena->fieldOffset("score");
  int64_t h = *arena->fieldOffset("h");
  for (int64_t e = 0; e < 4; ++e) {
    uint8_t *entry = buf.data() + e * arena->slotStride();
    float v;
    std::memcpy(&v, entry + score, 4);
    uint16_t bf;
    std::memcpy(&bf, entry + h + 14, 2);
    if (e == 3) {
      EXPECT_TRUE(std::isinf(v) && v < 0);
      EXPECT_EQ(bf, 0xff80); // bf16 -inf
      float kv;
      std::memcpy(&kv, entry, 4);
      EXPECT_EQ(kv, 0.0f);
    } else {
      EXPECT_EQ(entry[score], 0xAB) << "entry " << e << " was touched";
    }
  }
  EXPECT_EQ(arena->view("missing").error().kind, ErrorKind::Lookup);
}

TEST(StateArena, RegionsAndRuns) {
  auto r = planRegions({1, 0, 300});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->offsets, (std::vector<int64_t>{0, 256, 256}));
  EXPECT_EQ(r->total, 768);
  EXPECT_ERROR_KIND(planRegions({-1}), InvalidArgument);
  EXPECT_ERROR_KIND(planRegions({INT64_MAX, 1}), InvalidArgument);
  auto m = mergeAbutting({{0, 4}, {4, 0}, {4, 4}, {10, 1}});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->size(), 2u);
  EXPECT_ERROR_KIND(mergeAbutting({{INT64_MAX, 2}}), InvalidArgument);
}

TEST(StateArena, PlaneSplitPrefersFewestRowsThenLowestCode) {
  // Two equal fields over two equal planes: rows 1 either way after the
  // split; the first assignment with the fewest rows (field 0 -> plane 1,
  // field 1 -> plane 0, code 1) wins over later equal ones.
  std::vector<StateField> fields{f32("a", 1, {64}), f32("b", 1, {64})};
  auto split = planFieldPlanes(fields, {256, 256});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->rows, 1);
  EXPECT_EQ(split->groups[0], (std::vector<size_t>{1}));
  EXPECT_EQ(split->groups[1], (std::vector<size_t>{0}));
  EXPECT_ERROR_KIND(planFieldPlanes(fields, {0}), InvalidArgument);
}

} // namespace
