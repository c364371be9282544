//===- SetupTest.cpp - Cache manager configuration from a manifest --------===//

#include "poolrt/Setup.h"

#include <gtest/gtest.h>

using namespace poolrt;

namespace {

Artifact withManifest(const std::string &layout) {
  Artifact a;
  a.sections.push_back({"manifest", "{\"format\": \"poolpack-manifest/1\", "
                                    "\"kernels\": [], \"layout\": " +
                                        layout + "}"});
  return a;
}

const char *kForkLayout = R"({
  "geometry": {"block_size": 16, "hash_block_size": 16},
  "entry_classes": [
    {"name": "kv", "pool": "page", "entries": 100, "entry_bytes": 4096, "transfer": null},
    {"name": "state", "pool": "state", "entries": 12, "entries_per_req": 3,
     "entry_bytes": 8192, "transfer": {"kind": "fork", "tokens": 1}}]})";

std::string errorOf(const std::string &layout) {
  auto c = cacheManagerConfig(withManifest(layout));
  return c.ok() ? std::string("accepted") : c.error().message;
}

} // namespace

TEST(Setup, CountsComeFromTheManifest) {
  auto c = cacheManagerConfig(withManifest(kForkLayout), CachePolicy{64, false});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->blockSize, 16);
  EXPECT_EQ(c->numBlocks, 100);
  EXPECT_EQ(c->numGroups, 4); // 12 entries, 3 per request
  EXPECT_TRUE(c->transfer.forks());
  EXPECT_EQ(c->transfer.forkTokens(), 1);
  EXPECT_EQ(c->checkpointIntervalTokens, 64);
  EXPECT_FALSE(c->prefixCaching);
  EXPECT_FALSE(c->boundary.has_value());
  EXPECT_TRUE(CacheManager::create(*c).ok());
}

TEST(Setup, MalformedManifestsAreErrorsNotExceptions) {
  // Wrong JSON types where nlohmann would throw.
  EXPECT_NE(errorOf("5").find("artifact manifest"), std::string::npos);
  EXPECT_NE(errorOf(R"({"geometry": {"block_size": "16"}, "entry_classes": []})")
                .find("block_size"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"geometry": {"block_size": 16}, "entry_classes": {}})")
                .find("entry_classes"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"geometry": {"block_size": 16},
                       "entry_classes": [{"name": "kv", "pool": 7}]})"),
            "accepted");
  EXPECT_NE(errorOf(R"({"geometry": {"block_size": 16}, "entry_classes": []})")
                .find("no PAGE class"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"geometry": {"block_size": 16, "hash_block_size": 32},
                       "entry_classes": []})")
                .find("decode-context"),
            std::string::npos);
  std::string unknown = kForkLayout;
  unknown.replace(unknown.find("\"fork\""), 6, "\"teleport\"");
  EXPECT_NE(errorOf(unknown).find("'teleport' is unknown"), std::string::npos);
  std::string noTokens = kForkLayout;
  noTokens.replace(noTokens.find("\"tokens\": 1"), 11, "\"tokens\": \"1\"");
  EXPECT_NE(errorOf(noTokens).find("fork without tokens"), std::string::npos);
  std::string badTransfer = kForkLayout;
  badTransfer.replace(badTransfer.find("\"transfer\": null"), 16, "\"transfer\": 3");
  EXPECT_NE(errorOf(badTransfer).find("neither an object nor null"), std::string::npos);
  std::string badRowSpace = kForkLayout;
  badRowSpace.replace(badRowSpace.rfind('}'), 1, ", \"row_space\": [1]}");
  EXPECT_NE(errorOf(badRowSpace).find("row_space is neither"), std::string::npos);
  EXPECT_NE(errorOf(R"({"geometry": {"block_size": 16, "hash_block_size": "x"},
                       "entry_classes": []})")
                .find("hash_block_size is not an integer"),
            std::string::npos);
  Artifact none;
  EXPECT_FALSE(cacheManagerConfig(none).ok());
}
