//===- BlockHashTest.cpp - The two prefix-hash chains ---------------------===//
//
// The default chain is XXH3-64 of a block's ids (int64 LE) seeded with the
// parent's hash; the reference's is XXH64 over the parent's bytes and the
// ids (the conformance vectors check that one). A cache publishes and looks
// up under its policy's scheme.
//
//===----------------------------------------------------------------------===//

#include "poolrt/BlockHash.h"
#include "poolrt/CacheManager.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

using namespace poolrt;

namespace {

std::vector<int64_t> ids(size_t n, int64_t from) {
  std::vector<int64_t> t(n);
  for (size_t i = 0; i < n; ++i)
    t[i] = from + int64_t(i) * 7919 - (i % 3 == 0 ? int64_t(1) << 33 : 0);
  return t;
}

/// The ids as int64 little-endian bytes, whatever the host's order.
std::vector<unsigned char> leBytes(const int64_t *t, size_t n) {
  std::vector<unsigned char> b(8 * n);
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < 8; ++k)
      b[8 * i + size_t(k)] = (unsigned char)(uint64_t(t[i]) >> (8 * k));
  return b;
}

TEST(BlockHash, DefaultLinkIsSeededXxh3OfTheIds) {
  for (size_t n : {size_t(0), size_t(1), size_t(16), size_t(100), size_t(300)}) {
    std::vector<int64_t> t = ids(n, 5);
    std::vector<unsigned char> b = leBytes(t.data(), n);
    EXPECT_EQ(hashBlock(HashScheme::Xxh3, std::nullopt, t.data(), n),
              XXH3_64bits_withSeed(b.data(), b.size(), 0))
        << n;
    BlockHash parent = 0x9e3779b97f4a7c15ull;
    EXPECT_EQ(hashBlock(HashScheme::Xxh3, parent, t.data(), n),
              XXH3_64bits_withSeed(b.data(), b.size(), parent))
        << n;
  }
}

TEST(BlockHash, ReferenceLinkIsXxh64OverParentAndIds) {
  for (size_t n : {size_t(0), size_t(4), size_t(64), size_t(65), size_t(300)}) {
    std::vector<int64_t> t = ids(n, 11);
    std::vector<unsigned char> b = leBytes(t.data(), n);
    EXPECT_EQ(hashBlock(HashScheme::Xxh64, std::nullopt, t.data(), n),
              XXH64(b.data(), b.size(), 0))
        << n;
    BlockHash parent = 0x0123456789abcdefull;
    std::vector<unsigned char> withParent = leBytes(reinterpret_cast<const int64_t *>(&parent), 1);
    withParent.insert(withParent.end(), b.begin(), b.end());
    EXPECT_EQ(hashBlock(HashScheme::Xxh64, parent, t.data(), n),
              XXH64(withParent.data(), withParent.size(), 0))
        << n;
  }
}

TEST(BlockHash, SchemesDisagreeAndNamesRoundTrip) {
  std::vector<int64_t> t = ids(16, 1);
  EXPECT_NE(hashBlock(HashScheme::Xxh3, std::nullopt, t.data(), 16),
            hashBlock(HashScheme::Xxh64, std::nullopt, t.data(), 16));
  for (HashScheme s : {HashScheme::Xxh3, HashScheme::Xxh64})
    EXPECT_EQ(parseHashScheme(hashSchemeName(s)), s);
  EXPECT_FALSE(parseHashScheme("XXH3").has_value());
  EXPECT_FALSE(parseHashScheme("").has_value());
}

std::unique_ptr<CacheManager> manager(HashScheme s) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 32;
  c.policy.hashScheme = s;
  return CacheManager::create(c).take();
}

TEST(BlockHash, ACachePublishesAndHitsUnderItsScheme) {
  for (HashScheme s : {HashScheme::Xxh3, HashScheme::Xxh64}) {
    auto m = manager(s);
    EXPECT_EQ(m->hashScheme(), s);
    Request r;
    r.id = 1;
    r.tokens = ids(21, 40);
    r.numPromptTokens = 21;
    // Admission hashes the candidates before any publish.
    EXPECT_EQ(m->canAllocate(r), 0);
    std::vector<BlockHash> expect(5);
    hashBlocks(s, std::nullopt, r.tokens.data(), 4, 5, expect.data());
    EXPECT_EQ(m->prefixHashes(r, 5), expect);
    ASSERT_TRUE(m->allocate(r, 0).ok());
    ASSERT_TRUE(m->hashBlocks(r, 21).ok());
    // What the cache published is the scheme's chain, block by block.
    for (size_t b = 0; b < 5; ++b)
      EXPECT_EQ(m->blocks().hash(r.blockTable[b]), expect[b]) << b;
    ASSERT_TRUE(m->deallocate(r).ok());
    Request again;
    again.id = 2;
    again.tokens = r.tokens;
    again.numPromptTokens = 21;
    EXPECT_EQ(m->canAllocate(again), 5);
  }
}

TEST(BlockHash, AnUnknownSchemeIsRefused) {
  CacheManagerConfig c;
  c.blockSize = 4;
  c.numBlocks = 8;
  uint8_t bogus = 9;
  std::memcpy(&c.policy.hashScheme, &bogus, 1);
  auto m = CacheManager::create(c);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("hash scheme 9"), std::string::npos) << m.error().message;
}

} // namespace
