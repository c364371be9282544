//===- CacheSaltTest.cpp - Tenant isolation by cache salt -----------------===//
//
// Two tenants send the same prompt. Without salts the second request hits
// the first one's blocks; with different salts it hits nothing (so a hit's
// timing cannot tell one tenant what another asked), and with the same
// salt it hits again.
//
//===----------------------------------------------------------------------===//

#include "poolrt/BlockHash.h"
#include "poolrt/CacheManager.h"

#include <gtest/gtest.h>

using namespace poolrt;

namespace {

std::unique_ptr<CacheManager> plainManager() {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 64;
  return CacheManager::create(c).take();
}

Request prompt(int64_t id, const std::string &salt) {
  Request r;
  r.id = id;
  for (int64_t t = 0; t < 33; ++t)
    r.tokens.push_back(100 + t);
  r.numPromptTokens = 33;
  EXPECT_TRUE(r.setCacheSalt(salt).ok());
  return r;
}

/// Admits `r`, runs its prefill as one forward and publishes its blocks.
int64_t admitAndPublish(CacheManager &m, Request &r) {
  int64_t hit = m.canAllocate(r);
  EXPECT_GE(hit, 0);
  EXPECT_TRUE(m.allocate(r, hit).ok());
  int64_t fresh = r.numTokens() - r.numCachedTokens;
  EXPECT_TRUE(m.hashBlocks(r, fresh).ok());
  r.numCachedTokens = r.numTokens();
  return hit;
}

} // namespace

TEST(CacheSalt, TenantsWithDifferentSaltsNeverShareAHit) {
  auto m = plainManager();
  Request a = prompt(1, "tenant-a");
  EXPECT_EQ(admitAndPublish(*m, a), 0);
  Request b = prompt(2, "tenant-b");
  EXPECT_EQ(m->canAllocate(b), 0); // same tokens, other tenant: no hit
  Request a2 = prompt(3, "tenant-a");
  EXPECT_EQ(m->canAllocate(a2), 8); // same tenant: 8 full blocks (the 9th is partial)
  Request none = prompt(4, "");
  EXPECT_EQ(m->canAllocate(none), 0); // unsalted does not see salted blocks
  EXPECT_TRUE(m->deallocate(a).ok());
}

TEST(CacheSalt, UnsaltedRequestsShareAsBefore) {
  auto m = plainManager();
  Request a = prompt(1, "");
  EXPECT_EQ(admitAndPublish(*m, a), 0);
  Request b = prompt(2, "");
  EXPECT_EQ(m->canAllocate(b), 8);
  Request salted = prompt(3, "t");
  EXPECT_EQ(m->canAllocate(salted), 0);
}

TEST(CacheSalt, TheSaltChangesEveryHashOfTheChain) {
  std::vector<int64_t> t(8, 7);
  BlockHash plain = hashBlock(HashScheme::Xxh3, std::nullopt, t.data(), 8);
  BlockHash salted = hashBlock(HashScheme::Xxh3, saltRoot("x"), t.data(), 8);
  EXPECT_NE(plain, salted);
  EXPECT_NE(hashBlock(HashScheme::Xxh3, plain, t.data(), 8), hashBlock(HashScheme::Xxh3, salted, t.data(), 8));
  EXPECT_FALSE(saltRoot("").has_value());
  EXPECT_NE(*saltRoot("x"), *saltRoot("y"));
}

TEST(CacheSalt, TheSaltCannotChangeAfterAdmission) {
  auto m = plainManager();
  Request a = prompt(1, "t");
  EXPECT_EQ(admitAndPublish(*m, a), 0);
  Status s = a.setCacheSalt("other");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::State);
  EXPECT_EQ(a.cacheSalt, "t");
}
