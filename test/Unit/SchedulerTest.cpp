//===- SchedulerTest.cpp - Prefill chunk sizing (spec 10.1) ---------------===//

#include "poolrt/CacheManager.h"

#include <gtest/gtest.h>

using poolrt::CacheManager;

TEST(Scheduler, WholeRemainderWhenItFits) {
  EXPECT_EQ(CacheManager::chunkedPrefillSize(100, 512, 0, 16), 100);
  EXPECT_EQ(CacheManager::chunkedPrefillSize(512, 512, 7, 16), 512);
}

TEST(Scheduler, AlignsToMaxOfBlockSizeAnd64) {
  // Block 16: alignment 64, not 16.
  EXPECT_EQ(CacheManager::chunkedPrefillSize(1000, 200, 0, 16), 192);
  // Block 256: alignment 256.
  EXPECT_EQ(CacheManager::chunkedPrefillSize(1000, 700, 3, 256), 512);
}

TEST(Scheduler, NoSliverChunks) {
  // Under one aligned unit: defer when the batch has tokens...
  EXPECT_EQ(CacheManager::chunkedPrefillSize(1000, 40, 5, 16), 0);
  // ...but an empty batch must always send something.
  EXPECT_EQ(CacheManager::chunkedPrefillSize(1000, 40, 0, 16), 40);
}
