//===- ManagerVectors.cpp - Cache manager and scheduler vectors -----------===//

#include "Vectors.h"

#include "poolrt/CacheManager.h"
#include "test/Unit/CacheManagerTestAccess.h"

#include <memory>

using namespace conformance;
using namespace poolrt;
using TestAccess = CacheManagerTestAccess;

namespace {

std::unique_ptr<CacheManager> manager(int64_t blockSize, const std::string &transfer,
                                      int64_t interval, int64_t groups = 8,
                                      int64_t blocks = 128) {
  CacheManagerConfig c;
  c.blockSize = blockSize;
  c.numBlocks = blocks;
  c.numGroups = groups;
  c.policy.checkpointIntervalTokens = interval;
  c.policy.hashScheme = HashScheme::Xxh64; // the reference's chain
  c.policy.placeAsReference();
  if (transfer.rfind("fork(", 0) == 0)
    c.transfer = StateTransfer::fork(int64_t(std::stoll(transfer.substr(5)))).value();
  else
    c.transfer = StateTransfer::none();
  auto m = CacheManager::create(c);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.take();
}

Request request(int64_t promptTokens) {
  Request r;
  for (int64_t i = 0; i < promptTokens; ++i)
    r.tokens.push_back(i);
  r.numPromptTokens = promptTokens;
  return r;
}

void runLadder(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  int64_t prompt = *in.getInteger("prompt_tokens");
  for (const json::Value &iv : *in.getArray("intervals")) {
    int64_t interval = i64(iv);
    const json::Object &e = *exp.getObject(std::to_string(interval));
    auto m = manager(*in.getInteger("block_size"), str(*in.get("transfer")), interval);
    Request r = request(prompt);
    EXPECT_EQ(m->interval(), *e.getInteger("snapped_interval")) << interval;
    int64_t limit = m->checkpointLimit(r);
    EXPECT_EQ(limit, *e.getInteger("checkpoint_limit")) << interval;
    std::vector<int64_t> rungs;
    for (int64_t p = m->interval(); m->interval() > 0 && p <= limit; p += m->interval())
      rungs.push_back(p);
    EXPECT_EQ(rungs, intList(*e.get("rungs"))) << interval;
    // Every rung is where the aimed ladder keeps a checkpoint.
    for (int64_t p : rungs)
      EXPECT_FALSE(
          TestAccess::checkpointersAt(*m, r, p, std::nullopt, true).empty())
          << p;
    EXPECT_EQ(TestAccess::checkpointCut(*m, r, 0, 40),
              *e.getInteger("cut_0_40"))
        << interval;
    EXPECT_EQ(TestAccess::checkpointCut(*m, r, 0, 20),
              *e.getInteger("cut_0_20"))
        << interval;
    EXPECT_EQ(TestAccess::checkpointCut(*m, r, limit, limit + 16),
              *e.getInteger("cut_limit_plus16"))
        << interval;
  }
}

void runNoneTransfer(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  auto m = manager(4, "none", *in.getInteger("interval"));
  Request r = request(*in.getInteger("prompt_tokens"));
  EXPECT_EQ(m->checkpointLimit(r), *exp.getInteger("checkpoint_limit"));
  auto at16 = TestAccess::checkpointersAt(*m, r, 16, std::nullopt, true);
  EXPECT_EQ(int64_t(at16.size()), *exp.getInteger("checkpointers_at_16"));
}

/// A second state class that accepts at most `cap` blocks.
struct CapClass final : StateClass {
  int64_t cap;
  explicit CapClass(int64_t c) : cap(c) {}
  bool applies(const Request &) const override { return true; }
  double successorRoom() const override { return 0; }
  int64_t resumableHit(const Request &, int64_t hit, const std::vector<BlockHash> &,
                       bool) const override {
    return std::min(hit, cap);
  }
  Status checkpoint(Request &, int64_t, BlockHash) override { return Status::success(); }
};

void runGatedHit(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  int64_t compressed = *in.getInteger("compressed_hit");
  std::vector<BlockHash> hashes;
  for (int64_t i = 0; i < compressed; ++i)
    hashes.push_back(BlockHash(1000 + i));
  for (const json::Value &capV : *in.getArray("second_class_cap")) {
    auto m = manager(*in.getInteger("hash_block_size"),
                     "fork(" + std::to_string(*in.getInteger("min_fork")) + ")", 0);
    int32_t g = 0;
    for (int64_t boundary : intList(*in.get("checkpoints_at_boundaries")))
      ASSERT_TRUE(m->groups()->index(hashes[size_t(boundary - 1)], GroupId(g++)).ok());
    Request r = request(*in.getInteger("num_tokens"));
    std::unique_ptr<CapClass> second;
    std::string key = "None";
    if (auto cap = capV.getAsInteger()) {
      second = std::make_unique<CapClass>(*cap);
      TestAccess::addStateClass(*m, second.get());
      key = std::to_string(*cap);
    }
    EXPECT_EQ(TestAccess::gatedHit(*m, r, compressed, hashes, false),
              *exp.getInteger(key))
        << key;
  }
}

/// Admit, prefill in chunks cut by the ladder (publishing after each
/// forward), finish: the scheduler's order of calls (spec §12).
struct Run {
  int64_t hit = -1, limit = 0, demand = 0;
  std::vector<int64_t> cuts;
};
Run serve(CacheManager &m, const std::vector<int64_t> &prompt) {
  Run out;
  Request r;
  r.tokens = prompt;
  r.numPromptTokens = int64_t(prompt.size());
  m.completePreviousStateBatch();
  out.hit = m.canAllocate(r);
  out.limit = m.checkpointLimit(r);
  out.demand = r.checkpointDemandPos;
  EXPECT_GE(out.hit, 0);
  EXPECT_TRUE(m.allocate(r, out.hit).ok());
  int64_t end = r.numPromptTokens;
  while (r.numCachedTokens < end) {
    int64_t start = r.numCachedTokens;
    int64_t chunk = m.finalizePrefillChunk(r, start, end - start);
    if (start + chunk < end)
      out.cuts.push_back(start + chunk);
    EXPECT_TRUE(m.hashBlocks(r, chunk).ok());
    r.numCachedTokens += chunk;
    m.completePreviousStateBatch();
  }
  EXPECT_TRUE(m.deallocate(r).ok());
  m.completePreviousStateBatch();
  m.completePreviousStateBatch();
  return out;
}

void runDemandShortPrompt(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  auto m = manager(*in.getInteger("block_size"), str(*in.get("transfer")),
                   *in.getInteger("interval"));
  std::vector<int64_t> prompt = intList(*in.get("prompt"));
  Run first = serve(*m, prompt);
  EXPECT_EQ(first.cuts, intList(*exp.get("first_cuts")));
  Run second = serve(*m, prompt);
  EXPECT_EQ(second.hit, *exp.getInteger("second_hit"));
  EXPECT_EQ(second.limit, *exp.getInteger("second_limit"));
  EXPECT_EQ(second.demand, *exp.getInteger("second_demand"));
  EXPECT_EQ(second.cuts, intList(*exp.get("second_cuts")));
  Run third = serve(*m, prompt);
  EXPECT_EQ(third.hit, *exp.getInteger("third_hit"));
  EXPECT_EQ(third.demand, *exp.getInteger("third_demand"));
  EXPECT_EQ(m->funnel().demandsRecorded, 1);
  EXPECT_EQ(m->funnel().chunksCutForDemand, 1);
  EXPECT_EQ(m->funnel().fates.kept, 1);
}

void runSpacing(const json::Object &in, const json::Value &expV) {
  auto m = manager(*in.getInteger("block_size"),
                   "fork(" + std::to_string(*in.getInteger("successor_room")) + ")",
                   *in.getInteger("interval"));
  int64_t next = *in.getInteger("next_forward_tokens");
  for (const auto &kv : *expV.getAsObject()) {
    long long last, pos;
    char aimed[8] = {0};
    ASSERT_EQ(std::sscanf(kv.first.str().c_str(), "last=%lld,pos=%lld,aimed=%5s",
                          &last, &pos, aimed),
              3);
    Request r = request(64);
    r.lastCheckpointPos = last;
    bool kept = !TestAccess::checkpointersAt(*m, r, pos, next,
                                             std::string(aimed) == "True")
                     .empty();
    EXPECT_EQ(kept, *kv.second.getAsBoolean()) << kv.first.str();
  }
}

void runLastBlockNeverReused(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  auto m = manager(*in.getInteger("block_size"), "none", 0, /*groups=*/0);
  Request cached;
  cached.tokens = intList(*in.get("cached_prompt"));
  cached.numPromptTokens = int64_t(cached.tokens.size());
  ASSERT_EQ(m->canAllocate(cached), 0);
  ASSERT_TRUE(m->allocate(cached, 0).ok());
  ASSERT_TRUE(m->hashBlocks(cached, cached.numPromptTokens).ok());
  ASSERT_TRUE(m->deallocate(cached).ok());
  for (int64_t n : {40, 41, 39}) {
    Request probe = request(n);
    EXPECT_EQ(m->canAllocate(probe), *exp.getInteger("hit_" + std::to_string(n))) << n;
  }
}

void runFinalizeChunk(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  auto m = manager(*in.getInteger("block_size"), str(*in.get("transfer")),
                   *in.getInteger("interval"));
  Request r = request(*in.getInteger("prompt_tokens"));
  EXPECT_EQ(m->checkpointLimit(r), *exp.getInteger("limit"));
  EXPECT_EQ(m->finalizePrefillChunk(r, 0, 40), *exp.getInteger("chunk_0_40"));
  EXPECT_EQ(m->finalizePrefillChunk(r, 0, 20), *exp.getInteger("chunk_0_20"));
  EXPECT_EQ(m->finalizePrefillChunk(r, 24, 16), *exp.getInteger("chunk_24_16"));
  EXPECT_EQ(m->finalizePrefillChunk(r, 0, 11), *exp.getInteger("chunk_0_11"));
}

} // namespace

REGISTER_VECTORS("BlockManager.checkpoint_limit / checkpointers_at / "
                 "checkpoint_cut (+interval snapping)",
                 runLadder);
REGISTER_VECTORS("StateTransfer.none => successor_room inf => no rungs", runNoneTransfer);
REGISTER_VECTORS("BlockManager._gated_hit", runGatedHit);
REGISTER_VECTORS("demand kept below one interval", runDemandShortPrompt);
REGISTER_VECTORS("checkpointers_at aimed (grid) vs unaimed (spacing)", runSpacing);
REGISTER_VECTORS("can_allocate hit counting", runLastBlockNeverReused);
REGISTER_VECTORS("Scheduler._finalize_prefill_chunk -> checkpoint_cut", runFinalizeChunk);

namespace {

void runCopyVsFork(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  int64_t numTokens = *in.getInteger("num_tokens");
  int64_t hbs = *in.getInteger("hash_block_size");
  std::vector<BlockHash> hashes;
  for (int64_t h : intList(*in.get("hashes")))
    hashes.push_back(BlockHash(h));
  Request r;
  for (int64_t i = 0; i < numTokens; ++i)
    r.tokens.push_back(i);
  r.numPromptTokens = numTokens;
  r.state.numTokens = numTokens;

  // Fork: the successor must carry fork_tokens, so a checkpoint too close
  // to the end is passed over.
  auto created = StateGroupPool::create(
      8, StateTransfer::fork(*in.getInteger("fork_tokens")).value(), hbs);
  ASSERT_TRUE(created.ok());
  StateGroupPool pool = created.take();
  int32_t g = 0;
  for (int64_t h : intList(*in.get("checkpoints")))
    ASSERT_TRUE(pool.index(BlockHash(h), GroupId(g++)).ok());
  auto forkHit = pool.resumableHit(r.state, int64_t(hashes.size()), hashes);
  ASSERT_TRUE(forkHit.ok());
  EXPECT_EQ(*forkHit, *exp.getInteger("fork"));

  // Copy: any READY image is resumable, the rightmost wins.
  auto createdBlocks = BlockPool::create(20);
  ASSERT_TRUE(createdBlocks.ok());
  BlockPool blocks = createdBlocks.take();
  auto spec = PagedStateCheckpointSpec::create(10, 25, "layout", 25);
  ASSERT_TRUE(spec.ok());
  PageUnitCheckpointStore store(blocks, spec.value());
  int32_t slot = 0;
  for (int64_t h : intList(*in.get("checkpoints")))
    ASSERT_TRUE(store.beginStore(BlockHash(h), SlotIndex(slot++)).has_value());
  store.completeInflight();
  PagedCheckpointClass copy(store);
  EXPECT_EQ(copy.resumableHit(r, int64_t(hashes.size()), hashes, false),
            *exp.getInteger("copy"));
}

} // namespace

REGISTER_VECTORS("resumable_hit: fork applies the room test, copy does not", runCopyVsFork);
