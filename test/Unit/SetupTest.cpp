//===- SetupTest.cpp - Cache manager configuration from a manifest --------===//
//
// The manifest is read by the one reader (readSolvedLayout); these tests
// hand it complete manifests and damaged ones and check the configuration
// or the refusal, which names the member at fault.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Setup.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "test/Unit/TestKinds.h"

using namespace poolrt;
using Json = nlohmann::json;

namespace {

Json pageClass() {
  return Json{{"name", "kv"},          {"pool", "page"},
              {"entries", 100},        {"entry_bytes", 4096},
              {"reserved_bytes", 409600}, {"entries_per_req", 0},
              {"extra_entries", 0},    {"request_groups", 0},
              {"bytes_source", "declared"},
              {"transfer", nullptr},   {"region_offset", 0},
              {"needs_rebase", false}};
}

Json forkClass() {
  return Json{{"name", "state"},
              {"pool", "state"},
              {"entries", 12},
              {"entry_bytes", 8192},
              {"reserved_bytes", 12 * 8192},
              {"entries_per_req", 3},
              {"extra_entries", 0},
              {"request_groups", 4},
              {"bytes_source", "declared"},
              {"transfer", {{"kind", "fork"}, {"tokens", 1}}},
              {"region_offset", 409600},
              {"needs_rebase", false}};
}

/// A complete manifest of a fork-transfer model without kernels.
Json forkManifest() {
  Json layout = {
      {"schema", "poolc-report/1"},
      {"model", "m"},
      {"source", "m.yaml"},
      {"inputs",
       {{"budget_bytes", 1 << 20},
        {"max_num_seqs", 4},
        {"pp_min_blocks", nullptr},
        {"params", Json::object()}}},
      {"geometry",
       {{"block_size", 16},
        {"hash_block_size", 16},
        {"sliding_window", 0},
        {"spec_depth", 0},
        {"num_layers", 0},
        {"layer_ratios", Json::array()},
        {"planes", Json::array()}}},
      {"entry_classes", {pageClass(), forkClass()}},
      {"arenas", Json::array()},
      {"paged_class", "kv"},
      {"paged_entries", 100},
      {"total_reserved_bytes", 409600 + 12 * 8192},
      {"unreserved_bytes", 0},
      {"allocation_bytes", 409600 + 12 * 8192},
      {"allocation_over_budget_bytes", 0},
      {"row_space", nullptr}};
  return Json{{"format", "poolpack-manifest/1"},
              {"model", "m"},
              {"fingerprint", "0x0123456789abcdef"},
              {"block_threads", 256},
              {"targets", Json::array()},
              {"kernels", Json::array()},
              {"header_section", "header"},
              {"layout", layout}};
}

/// A gather kernel of the PAGE class: block ids in [0, 100) of `stride`
/// bytes from `srcOff` in the arena to a staging item of 4096 bytes.
Json gatherKernel(int64_t srcOff, int64_t stride = 4096) {
  Json seg = {{"bytes", 4096},     {"dst_id", -1},         {"dst_off", 0},
              {"dst_stride", 4096}, {"src_id", 0},          {"src_off", srcOff},
              {"src_stride", stride}, {"what", "block"}};
  return Json{{"name", "pool_block_gather_kv"},
              {"kind", "block_gather"},
              {"entity", "block"},
              {"ids_per_item", 1},
              {"id_range", {0, 100}},
              {"id_tuple",
               {{{"entity", "block"}, {"id_range", {0, 100}}, {"access", "read"}}}},
              {"item_bytes", 4096},
              {"staging_stride", 4096},
              {"vec_bytes", 16},
              {"rebase", false},
              {"src", {{"space", "arena"}, {"id", "ids[i]"}}},
              {"dst", {{"space", "staging"}, {"id", "i"}}},
              {"segments", {seg}}};
}

Artifact withManifest(const std::string &text) {
  Artifact a;
  a.sections.push_back({"manifest", text});
  a.sections.push_back({"header", "// header"});
  return a;
}

std::string errorOf(const Json &manifest) {
  auto c = cacheManagerConfig(withManifest(manifest.dump()));
  return c.ok() ? std::string("accepted") : c.error().message;
}

} // namespace

TEST(Setup, CountsComeFromTheManifest) {
  auto c = cacheManagerConfig(withManifest(forkManifest().dump()),
                              CachePolicy{64, false});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->blockSize, 16);
  EXPECT_EQ(c->numBlocks, 100);
  EXPECT_EQ(c->numGroups, 4); // 12 entries, 3 per request
  EXPECT_TRUE(c->transfer.forks());
  EXPECT_EQ(c->transfer.forkTokens(), 1);
  EXPECT_EQ(c->policy.checkpointIntervalTokens, 64);
  EXPECT_FALSE(c->policy.prefixCaching);
  EXPECT_FALSE(c->boundary.has_value());
  EXPECT_TRUE(CacheManager::create(*c).ok());
}

TEST(Setup, MalformedManifestsAreErrorsNotExceptions) {
  auto edit = [](auto f) {
    Json m = forkManifest();
    f(m);
    return errorOf(m);
  };
  EXPECT_NE(cacheManagerConfig(withManifest("5")).error().message.find(
                "artifact manifest: not a JSON object"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["layout"]["geometry"]["block_size"] = "16"; })
                .find("layout.geometry.block_size: expected an integer"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["layout"]["entry_classes"] = Json::object(); })
                .find("layout.entry_classes: expected a list"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["layout"]["entry_classes"][0]["pool"] = 7; })
                .find("layout.entry_classes[0].pool: expected a string"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"] = Json::array({forkClass()});
            }).find("declares no PAGE entry class"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["geometry"]["hash_block_size"] = 32;
            }).find("decode-context"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["geometry"]["hash_block_size"] = 24;
            }).find("hash_block_size: is not a multiple of block_size"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"][1]["transfer"]["kind"] = "teleport";
            }).find("transfer.kind: 'teleport' is unknown"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"][1]["transfer"]["tokens"] = "1";
            }).find("entry_classes[1].transfer.tokens: expected an integer"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"][1]["transfer"].erase("tokens");
            }).find("entry_classes[1].transfer.tokens: missing"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["layout"]["entry_classes"][0]["transfer"] = 3; })
                .find("entry_classes[0].transfer: expected an object or null"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["layout"]["row_space"] = Json::array({1}); })
                .find("layout.row_space: expected an object"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["geometry"]["hash_block_size"] = "x";
            }).find("hash_block_size: expected an integer"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"][0]["entries"] = -5;
            }).find("entry_classes[0].entries: -5 is below 0"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"][0]["entries"] = 101;
            }).find("reserved_bytes: is not entries x entry_bytes"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["allocation_bytes"] = uint64_t(1) << 63;
            }).find("allocation_bytes: passes the signed 64-bit range"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"][1]["request_groups"] = 5;
            }).find("request_groups: holds more than the class's entries"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) {
              m["layout"]["entry_classes"][0]["request_groups"] = 1;
            }).find("entry_classes[0].request_groups"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["format"] = "poolpack-manifest/2"; })
                .find("format 'poolpack-manifest/2'"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["fingerprint"] = "abc"; })
                .find("fingerprint: expected 0x and 16"),
            std::string::npos);
  EXPECT_NE(edit([](Json &m) { m["model"] = "other"; })
                .find("'other' is not the layout's 'm'"),
            std::string::npos);
  Artifact none;
  EXPECT_ERROR_KIND(cacheManagerConfig(none), InvalidArgument);
}

TEST(Setup, DeepNestingAndNulBytesAreRefusedBeforeParsing) {
  std::string deep(50000, '[');
  deep += std::string(50000, ']');
  auto c = cacheManagerConfig(withManifest(deep));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(c.error().message.find("nested deeper than 64"), std::string::npos);
  std::string withNul = forkManifest().dump();
  withNul.push_back('\0');
  c = cacheManagerConfig(withManifest(withNul));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(c.error().message.find("NUL"), std::string::npos);
}

TEST(Setup, MissingSectionsNamedByTheManifestAreRefused) {
  Json m = forkManifest();
  m["targets"] = Json::array(
      {{{"target", "host"}, {"section", "code/host"}, {"format", "llvm-ir"},
        {"bytes", 3}}});
  auto c = cacheManagerConfig(withManifest(m.dump()));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(c.error().message.find("missing section 'code/host'"),
            std::string::npos);
  Artifact a = withManifest(m.dump());
  a.sections.push_back({"code/host", "abcd"});
  c = cacheManagerConfig(a);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(c.error().message.find("says 3 bytes"), std::string::npos);
  a.sections.back().data = "abc";
  EXPECT_TRUE(cacheManagerConfig(a).ok());
}

// The arena of forkManifest() holds allocation_bytes = 409600 + 12 x 8192 =
// 507904 bytes. A segment whose last id's last byte is the arena's last
// byte is in bounds; one byte further is refused, naming the segment.
TEST(Setup, KernelSegmentsMayEndAtTheArenaEndButNotPastIt) {
  const int64_t arena = 409600 + 12 * 8192;
  const int64_t lastFit = arena - 99 * 4096 - 4096; // 99 x stride + off + bytes
  Json m = forkManifest();
  m["kernels"] = Json::array({gatherKernel(lastFit)});
  auto L = parseManifest(m.dump());
  ASSERT_TRUE(L.ok()) << L.error().message;
  ASSERT_EQ(L->kernels.size(), 1u);
  EXPECT_EQ(L->kernels[0].segments[0].srcOff, lastFit);
  EXPECT_EQ(L->kernels[0].idMax, 100);

  m["kernels"] = Json::array({gatherKernel(lastFit + 1)});
  L = parseManifest(m.dump());
  ASSERT_FALSE(L.ok());
  EXPECT_EQ(L.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(L.error().message.find(
                "kernels[0] ('pool_block_gather_kv').segments[0]: src_id reaches "
                "past the arena (" +
                std::to_string(arena + 1) + " > " + std::to_string(arena) +
                " bytes)"),
            std::string::npos)
      << L.error().message;

  // The same through the stride: one byte more per id moves the last id's
  // end 99 bytes further.
  m["kernels"] = Json::array({gatherKernel(lastFit - 99, 4097)});
  L = parseManifest(m.dump());
  EXPECT_TRUE(L.ok()) << L.error().message;
  m["kernels"] = Json::array({gatherKernel(lastFit - 98, 4097)});
  L = parseManifest(m.dump());
  ASSERT_FALSE(L.ok());
  EXPECT_NE(L.error().message.find("reaches past the arena (" +
                                   std::to_string(arena + 1) + " > "),
            std::string::npos)
      << L.error().message;
}

// A member's minimum is its smallest accepted value: one below it is refused
// with the member named, the minimum itself is not.
TEST(Setup, IntegersOneBelowTheirMinimumAreRefused) {
  Json m = forkManifest();
  m["layout"]["entry_classes"][0]["entries"] = -1;
  EXPECT_NE(errorOf(m).find("layout.entry_classes[0].entries: -1 is below 0"),
            std::string::npos)
      << errorOf(m);
  m = forkManifest();
  m["block_threads"] = 0;
  EXPECT_NE(errorOf(m).find("block_threads: 0 is below 1"), std::string::npos)
      << errorOf(m);
  m["block_threads"] = 1;
  EXPECT_EQ(errorOf(m), "accepted");

  m = forkManifest();
  Json k = gatherKernel(0);
  k["segments"][0]["src_off"] = -1;
  m["kernels"] = Json::array({k});
  auto L = parseManifest(m.dump());
  ASSERT_FALSE(L.ok());
  EXPECT_NE(L.error().message.find("segments[0].src_off: -1 is below 0"),
            std::string::npos)
      << L.error().message;
  k = gatherKernel(0);
  k["id_range"] = {0, 0};
  m["kernels"] = Json::array({k});
  L = parseManifest(m.dump());
  ASSERT_FALSE(L.ok());
  EXPECT_NE(L.error().message.find("id_range[1]: 0 is below 1"),
            std::string::npos)
      << L.error().message;
}

namespace {

/// forkManifest with a second fork class "ssm" (room `tokens`, kind
/// `kind`): 10 entries of 4096 B, 2 per request, 5 request groups, after
/// the first class's region.
Json twoClassManifest(const std::string &kind = "fork", int64_t tokens = 3) {
  Json m = forkManifest();
  Json &layout = m["layout"];
  Json ssm = forkClass();
  ssm["name"] = "ssm";
  ssm["entries"] = 10;
  ssm["entry_bytes"] = 4096;
  ssm["reserved_bytes"] = 10 * 4096;
  ssm["entries_per_req"] = 2;
  ssm["extra_entries"] = 2;
  ssm["request_groups"] = 5;
  ssm["region_offset"] = 409600 + 12 * 8192;
  if (kind == "fork")
    ssm["transfer"] = {{"kind", "fork"}, {"tokens", tokens}};
  else if (kind == "copy")
    ssm["transfer"] = {{"kind", "copy"}, {"layout_id", "x"}};
  else
    ssm["transfer"] = {{"kind", "none"}};
  layout["entry_classes"].push_back(ssm);
  int64_t total = 409600 + 12 * 8192 + 10 * 4096;
  layout["total_reserved_bytes"] = total;
  layout["allocation_bytes"] = total;
  return m;
}

} // namespace

// specs/state-classes.md: several fork classes are one request group that
// forks with the largest room and has the fewest class's groups.
TEST(Setup, SeveralForkClassesShareOneGroup) {
  for (int64_t room : {3, 1}) {
    auto c = cacheManagerConfig(withManifest(twoClassManifest("fork", room).dump()));
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_TRUE(c->transfer.forks());
    EXPECT_EQ(c->transfer.forkTokens(), std::max<int64_t>(room, 1)) << room;
    EXPECT_EQ(c->numGroups, 4); // min(state: 4, ssm: 5)
    EXPECT_TRUE(CacheManager::create(*c).ok());
  }
  auto layout = readSolvedLayout(withManifest(twoClassManifest().dump()));
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  ASSERT_EQ(layout->groupClasses().size(), 2u);
  EXPECT_EQ(layout->groupClasses()[1]->name, "ssm");
  EXPECT_EQ(layout->stateGroupCount(), 4);
}

// The runtime refuses with the rule, and the words, poolc refuses with
// (poolrt/Servable.h; test/Tools/runnable.test has poolc's side).
TEST(Setup, ACopyOrNoneBesideAForkIsRefused) {
  std::string copy = errorOf(twoClassManifest("copy"));
  EXPECT_NE(copy.find("artifact manifest: STATE class 'ssm' declares a copy "
                      "transfer, and 'state' a fork one: several STATE classes "
                      "share a request's state group only when every one forks"),
            std::string::npos) << copy;
  std::string none = errorOf(twoClassManifest("none"));
  EXPECT_NE(none.find("STATE class 'ssm' declares a none transfer, and 'state' "
                      "a fork one"),
            std::string::npos) << none;
}

// An artifact (one with kernels) must carry every class's group copy: the
// engine forks each class's entries with its own.
TEST(Setup, EveryForkClassNeedsItsGroupCopyKernel) {
  Json m = twoClassManifest();
  m["kernels"] = Json::array({gatherKernel(0)});
  std::string e = errorOf(m);
  EXPECT_NE(e.find("STATE class 'state' forks state groups, but the artifact has "
                   "no group_copy kernel for it (pool_group_copy_state)"),
            std::string::npos) << e;
}
