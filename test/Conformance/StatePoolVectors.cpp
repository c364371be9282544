//===- StatePoolVectors.cpp - StateGroupPool and StateTransfer vectors ----===//
//
// The sgp_* scenarios replay `inputs.ops` on a fresh pool and compare every
// op's return with `expected.results[i]` exactly (null for void ops). Pseudo
// ops as in shared/spec/README.md: `index h g` = index(h, g), `drain` = pop
// until empty, `state` = {num_groups, num_free, hash_to_group, group_hash},
// `fates` = the checkpoint counters, `resumable_hit` takes (num_tokens,
// hit_blocks, hashes) for a request that has per-request state.
//
//===----------------------------------------------------------------------===//

#include "Vectors.h"

#include "poolrt/StateGroupPool.h"
#include "poolrt/StateTransfer.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace conformance;
using namespace poolrt;

namespace {

json::Value groupValue(GroupId g) { return int64_t(g.value); }

json::Value hashValue(std::optional<BlockHash> h) {
  return h ? json::Value(int64_t(*h)) : json::Value(int64_t(-1));
}

json::Value snapshot(const StateGroupPool &pool) {
  json::Object index;
  for (const auto &[h, g] : pool.indexEntries())
    index[std::to_string(h)] = groupValue(g);
  json::Array hashes;
  for (int32_t g = 0; g < pool.slotCount(); ++g)
    hashes.push_back(hashValue(pool.groupHash(GroupId(g))));
  return json::Object{{"num_groups", int64_t(pool.numGroups())},
                      {"num_free", int64_t(pool.numFree())},
                      {"hash_to_group", std::move(index)},
                      {"group_hash", std::move(hashes)}};
}

json::Value fatesValue(const CheckpointFates &f) {
  return json::Object{{"checkpoints_kept", f.kept},
                      {"checkpoints_dropped", f.dropped},
                      {"checkpoints_evicted", f.evicted},
                      {"checkpoints_orphaned", f.orphaned}};
}

BlockHash hashArg(const json::Value &v) { return BlockHash(i64(v)); }
GroupId groupArg(const json::Value &v) { return GroupId(int32_t(i64(v))); }

// Runs one op; a failing Status is a test failure (no vector expects one).
json::Value applyOp(StateGroupPool &pool, const json::Array &op) {
  std::string name = str(op[0]);
  auto check = [&](const Status &s) -> json::Value {
    EXPECT_TRUE(s.ok()) << name << ": " << s.error().message;
    return nullptr;
  };
  if (name == "pop") {
    auto g = pool.pop();
    EXPECT_TRUE(g.ok()) << g.error().message;
    return g.ok() ? groupValue(*g) : json::Value(nullptr);
  }
  if (name == "drain") {
    json::Array out;
    while (pool.hasFree())
      out.push_back(groupValue(pool.pop().value()));
    return std::move(out);
  }
  if (name == "claim")
    return check(pool.claim(groupArg(op[1])));
  if (name == "release")
    return check(pool.release(groupArg(op[1])));
  if (name == "index")
    return check(pool.index(hashArg(op[1]), groupArg(op[2])));
  if (name == "invalidate")
    return check(pool.invalidate(groupArg(op[1])));
  if (name == "unindex") {
    pool.unindex(hashArg(op[1]));
    return nullptr;
  }
  if (name == "lookup_group")
    return groupValue(pool.lookupGroup(hashArg(op[1])));
  if (name == "pin")
    return check(pool.pin(groupArg(op[1])));
  if (name == "release_pins") {
    pool.releasePins();
    return nullptr;
  }
  if (name == "is_pinned")
    return pool.isPinned(groupArg(op[1]));
  if (name == "is_free")
    return pool.isFree(groupArg(op[1]));
  if (name == "num_free")
    return int64_t(pool.numFree());
  if (name == "extend")
    return check(pool.extend(i64(op[1])));
  if (name == "retire_top") {
    auto r = pool.retireTop();
    if (!r)
      return nullptr;
    return json::Object{{"retired", groupValue(r->retired)},
                        {"relocated_to", groupValue(r->relocatedTo)},
                        {"held_checkpoint", r->heldCheckpoint}};
  }
  if (name == "resumable_hit") {
    StateHolder seq;
    seq.numTokens = i64(op[1]);
    std::vector<BlockHash> hashes;
    for (int64_t h : intList(op[3]))
      hashes.push_back(BlockHash(h));
    auto hit = pool.resumableHit(seq, i64(op[2]), hashes);
    EXPECT_TRUE(hit.ok()) << hit.error().message;
    return hit.ok() ? json::Value(*hit) : json::Value(nullptr);
  }
  if (name == "state")
    return snapshot(pool);
  if (name == "fates")
    return fatesValue(pool.fates());
  ADD_FAILURE() << "unknown op '" << name << "'";
  return nullptr;
}

void runStateGroupPool(const json::Object &in, const json::Value &expV) {
  const json::Object &init = *in.getObject("init");
  StateTransfer transfer = StateTransfer::none();
  if (const json::Array *t = init.getArray("transfer")) {
    auto made = StateTransfer::make(str((*t)[0]), i64((*t)[1]), std::nullopt);
    ASSERT_TRUE(made.ok()) << made.error().message;
    transfer = made.value();
  }
  auto created =
      StateGroupPool::create(*init.getInteger("num_groups"), transfer,
                             init.getInteger("hash_block_size").value_or(1));
  ASSERT_TRUE(created.ok()) << created.error().message;
  StateGroupPool pool = created.take();

  const json::Array &ops = *in.getArray("ops");
  const json::Array &results = *expV.getAsObject()->getArray("results");
  ASSERT_EQ(ops.size(), results.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const json::Array &op = *ops[i].getAsArray();
    json::Value got = applyOp(pool, op);
    EXPECT_EQ(got, results[i])
        << "op " << i << " " << render(ops[i]) << ": got " << render(got)
        << ", expected " << render(results[i]);
    std::string why;
    EXPECT_TRUE(pool.invariantsHold(&why)) << "after op " << i << ": " << why;
  }
}

// {"raises": ...} with the reference's exception class; TypeError is an
// invalid argument here (C++ has no separate type error at run time).
void expectTransferError(const Error &e, const json::Object &exp) {
  std::string raises = str(*exp.get("raises"));
  if (raises == "TypeError") {
    EXPECT_EQ(e.kind, ErrorKind::InvalidArgument) << e.message;
    EXPECT_EQ(e.message, str(*exp.get("message")));
    return;
  }
  expectError(e, exp, /*exactMessage=*/true);
}

void runSuccessorRoom(const json::Object &in, const json::Value &expV) {
  const json::Array &cases = *in.getArray("cases");
  const json::Array &exp = *expV.getAsArray();
  ASSERT_EQ(cases.size(), exp.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string c = str(cases[i]);
    Result<StateTransfer> t = Error::invalid("unhandled case");
    if (c == "none()")
      t = StateTransfer::none();
    else if (c == "fork(7)")
      t = StateTransfer::fork(7);
    else if (c == "copy('x')")
      t = StateTransfer::copy("x");
    else if (c == "fork(0)")
      t = StateTransfer::fork(0);
    else if (c == "copy with tokens")
      t = StateTransfer::make("copy", 1, std::string("x"));
    else if (c == "copy('')")
      t = StateTransfer::copy("");
    else if (c == "kind 'bogus'")
      t = StateTransfer::make("bogus", 0, std::nullopt);
    else if (c == "fork(True)")
      // fork(bool) does not compile; a boolean arrives over the wire.
      t = StateTransfer::fromWire(
          R"({"kind": "fork", "fork_tokens": true, "paged_layout_id": null})");
    else
      ADD_FAILURE() << "unknown case '" << c << "'";
    if (const json::Object *err = exp[i].getAsObject()) {
      ASSERT_FALSE(t.ok()) << c;
      expectTransferError(t.error(), *err);
      continue;
    }
    ASSERT_TRUE(t.ok()) << c << ": " << t.error().message;
    double want = number(exp[i]);
    if (std::isinf(want))
      EXPECT_TRUE(std::isinf(t->successorRoom()) && t->successorRoom() > 0)
          << c;
    else
      EXPECT_EQ(t->successorRoom(), want) << c;
    // Every accepted value survives the wire unchanged.
    auto back = StateTransfer::fromWire(t->toWire());
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back.value(), t.value()) << t->toWire();
  }
}

void runGroupPoolRejectsCopy(const json::Object &in, const json::Value &expV) {
  // "copy('test-layout')": the layout id between the quotes.
  std::string spec = str(*in.get("transfer"));
  size_t open = spec.find('\''), close = spec.rfind('\'');
  ASSERT_TRUE(spec.rfind("copy(", 0) == 0 && open != std::string::npos &&
              close > open)
      << spec;
  auto transfer = StateTransfer::copy(spec.substr(open + 1, close - open - 1));
  ASSERT_TRUE(transfer.ok()) << transfer.error().message;
  auto pool = StateGroupPool::create(4, transfer.value());
  ASSERT_FALSE(pool.ok());
  expectError(pool.error(), *expV.getAsObject(), /*exactMessage=*/true);
}

} // namespace

REGISTER_VECTORS("StateGroupPool", runStateGroupPool);
REGISTER_VECTORS("StateTransfer.successor_room / validation", runSuccessorRoom);
REGISTER_VECTORS("StateGroupPool(transfer=copy)", runGroupPoolRejectsCopy);
