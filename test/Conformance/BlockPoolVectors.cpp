//===- BlockPoolVectors.cpp - BlockPool scenario vectors (bp_*) -----------===//
//
// Each bp_* vector is a list of [method, *args] applied to a fresh pool;
// results are compared exactly, as is the list of hashes handed to on_evict.
// Pseudo-ops (spec/README.md): "published b h" = allocate(b); publish(b, h,
// [h]); free(b). "drain" pops until empty. "state" is the counters, "block b"
// one block's {ref_count, hash, token_ids}. After every op the pool's
// invariants are checked too.
//
//===----------------------------------------------------------------------===//

#include "Vectors.h"

#include "poolrt/BlockPool.h"

#include "llvm/Support/raw_ostream.h"

using namespace conformance;
using namespace poolrt;

namespace {


json::Value errorValue(const Error &e) {
  return json::Object{{"raises", errorKindName(e.kind)},
                      {"message", e.message}};
}

int64_t hashOut(BlockHash h) { return h == kNoHash ? -1 : int64_t(h); }
BlockHash hashIn(const json::Value &v) {
  int64_t h = i64(v);
  return h == -1 ? kNoHash : BlockHash(h);
}

json::Value blockSummary(const BlockPool &pool, BlockId b) {
  return json::Object{{"block_id", b.value},
                      {"ref_count", *pool.refCount(b)},
                      {"hash", hashOut(pool.hash(b))}};
}

json::Value statusValue(const Status &st) {
  return st.ok() ? json::Value(nullptr) : errorValue(st.error());
}

json::Value runOp(BlockPool &pool, const json::Array &op) {
  std::string name = str(op[0]);
  auto arg = [&](size_t i) { return i64(op[i]); };
  auto block = [&](size_t i) { return BlockId(int32_t(arg(i))); };
  if (name == "pop") {
    auto b = pool.pop();
    return b.ok() ? json::Value(b->value) : errorValue(b.error());
  }
  if (name == "drain") {
    json::Array ids;
    while (pool.hasFree(1))
      ids.push_back(pool.takeFree().value);
    return std::move(ids);
  }
  if (name == "published") {
    BlockId b = block(1);
    BlockHash h = hashIn(op[2]);
    int32_t token = int32_t(arg(2));
    Status st = pool.allocate(b);
    if (st.ok())
      st = pool.publish(b, h, &token, 1);
    if (st.ok())
      st = pool.free(b);
    return statusValue(st);
  }
  if (name == "lookup")
    return pool.lookup(hashIn(op[1])).value;
  if (name == "allocate" || name == "claim") {
    BlockId b = block(1);
    Status st = name == "allocate" ? pool.allocate(b) : pool.claim(b);
    return st.ok() ? blockSummary(pool, b) : errorValue(st.error());
  }
  if (name == "free")
    return statusValue(pool.free(block(1)));
  if (name == "publish") {
    std::vector<int32_t> tokens;
    if (op.size() > 3)
      for (int64_t t : intList(op[3]))
        tokens.push_back(int32_t(t));
    return statusValue(
        pool.publish(block(1), hashIn(op[2]), tokens.data(), tokens.size()));
  }
  if (name == "retire_top") {
    auto r = pool.retireTop();
    if (!r)
      return nullptr;
    return json::Object{{"retired", r->retired.value},
                        {"moved_to", r->movedTo.value}};
  }
  if (name == "extend") {
    auto n = pool.extend(arg(1));
    return n.ok() ? json::Value(*n) : errorValue(n.error());
  }
  if (name == "state")
    return json::Object{{"num_blocks", pool.numBlocks()},
                        {"num_free", pool.numFree()},
                        {"num_used", pool.numUsed()},
                        {"num_indexed", pool.numIndexed()}};
  if (name == "block") {
    BlockId b = block(1);
    json::Array tokens;
    for (int32_t t : pool.tokenIds(b))
      tokens.push_back(t);
    return json::Object{{"ref_count", *pool.refCount(b)},
                        {"hash", hashOut(pool.hash(b))},
                        {"token_ids", std::move(tokens)}};
  }
  if (name == "is_used")
    return pool.isUsed(block(1));
  if (name == "has_free")
    return pool.hasFree(arg(1));
  if (name == "clear_index") {
    pool.clearIndex();
    return nullptr;
  }
  ADD_FAILURE() << "unknown BlockPool op '" << name << "'";
  return nullptr;
}

void runBlockPool(const json::Object &in, const json::Value &expV) {
  const json::Object &init = *in.getObject("init");
  const json::Object &exp = *expV.getAsObject();
  std::vector<BlockHash> evicted;
  std::optional<int64_t> maxBlocks;
  if (auto m = init.getInteger("max_blocks"))
    maxBlocks = *m;
  auto made = BlockPool::create(*init.getInteger("num_blocks"), maxBlocks,
                                [&](BlockHash h) { evicted.push_back(h); });
  ASSERT_TRUE(made.ok()) << made.error().message;
  BlockPool pool = made.take();
  const json::Array &ops = *in.getArray("ops");
  const json::Array &results = *exp.getArray("results");
  ASSERT_EQ(ops.size(), results.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const json::Array &op = *ops[i].getAsArray();
    json::Value got = runOp(pool, op);
    EXPECT_TRUE(got == results[i])
        << "op " << i << " " << render(ops[i]) << ": got " << render(got)
        << ", want " << render(results[i]);
    Status inv = pool.checkInvariants();
    ASSERT_TRUE(inv.ok()) << "after op " << i << ": " << inv.error().message;
  }
  std::vector<int64_t> got;
  for (BlockHash h : evicted)
    got.push_back(hashOut(h));
  EXPECT_EQ(got, intList(*exp.get("on_evict_hashes")));
}

std::vector<int64_t> idsOf(const std::vector<BlockId> &ids) {
  std::vector<int64_t> out;
  for (BlockId b : ids)
    out.push_back(b.value);
  return out;
}

// bp_raw_units_full: the three scenarios of the inputs' "scenario" text.
void runRawUnits(const json::Object &, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  const UnitOwner owner{"checkpoint", 1};
  {
    // 8 blocks all allocated; free 0,2,5,7; reserve 4; release reversed
    // (refused, nothing released) then in order.
    BlockPool pool = BlockPool::create(8).take();
    for (int32_t b = 0; b < 8; ++b)
      ASSERT_TRUE(pool.allocate(BlockId(b)).ok());
    for (int32_t b : {0, 2, 5, 7})
      ASSERT_TRUE(pool.free(BlockId(b)).ok());
    auto units = pool.reserveUnits(4, owner);
    ASSERT_TRUE(units.ok() && units->has_value());
    EXPECT_EQ(idsOf(**units), intList(*exp.get("units")));
    EXPECT_EQ(pool.numFree(), 0);
    std::vector<BlockId> reversed(units->value().rbegin(),
                                  units->value().rend());
    Status st = pool.releaseUnits(reversed, owner);
    ASSERT_FALSE(st.ok());
    expectError(st.error(), *exp.getObject("release_reversed"),
                /*exactMessage=*/true);
    EXPECT_EQ(pool.numFree(), 0) << "a refused release released something";
    ASSERT_TRUE(pool.releaseUnits(**units, owner).ok());
    EXPECT_EQ(pool.numFree(), *exp.getInteger("num_free_after_release"));
    EXPECT_TRUE(pool.invariantsHold());
  }
  {
    // 3 blocks, allocate 0,1, reserve 1 -> [2]; the raw top cannot retire,
    // and a raw unit cannot be freed as a block.
    BlockPool pool = BlockPool::create(3).take();
    ASSERT_TRUE(pool.allocate(BlockId(0)).ok());
    ASSERT_TRUE(pool.allocate(BlockId(1)).ok());
    auto units = pool.reserveUnits(1, owner);
    ASSERT_TRUE(units.ok() && units->has_value());
    EXPECT_EQ(idsOf(**units), intList(*exp.get("second_units")));
    EXPECT_FALSE(pool.retireTop().has_value());
    EXPECT_TRUE(exp.get("retire_top_on_raw")->getAsNull().has_value());
    EXPECT_EQ(pool.numBlocks(), *exp.getInteger("second_num_blocks"));
    Status st = pool.free(BlockId(2));
    ASSERT_FALSE(st.ok());
    expectError(st.error(), *exp.getObject("free_raw_unit"),
                /*exactMessage=*/true);
    EXPECT_EQ(pool.state(BlockId(2)), BlockState::RawUnit);
    EXPECT_TRUE(pool.invariantsHold());
  }
  {
    // 2 blocks, 1 taken, reserve 2: refused atomically.
    BlockPool pool = BlockPool::create(2).take();
    ASSERT_TRUE(pool.allocate(BlockId(0)).ok());
    auto units = pool.reserveUnits(2, owner);
    ASSERT_TRUE(units.ok());
    EXPECT_FALSE(units->has_value());
    EXPECT_TRUE(exp.get("third_reserve")->getAsNull().has_value());
    EXPECT_EQ(pool.numFree(), *exp.getInteger("third_num_free"));
    EXPECT_TRUE(pool.invariantsHold());
  }
}

} // namespace

REGISTER_VECTORS("BlockPool", runBlockPool);
REGISTER_VECTORS("BlockPool.reserve_units/release_units", runRawUnits);
