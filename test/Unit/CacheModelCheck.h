//===- CacheModelCheck.h - A randomized model check of CacheManager -*- C++
//-*-===//
//
// Drives a poolrt::CacheManager through random scheduler-like sequences
// (admissions with prefix hits, chunked prefills, decodes with speculative
// commits, state maintenance, boundary moves, preemptions, frees) and checks
// it after every operation against a plain reference model kept here:
//   * the bytes every block holds (the tokens the test's "forwards" wrote,
//     or a checkpoint image's (record, piece)), so a prefix hit, a published
//     block and a moved block can be compared with what was really written;
//   * who holds which block, so ref counts, states and the free / held /
//     raw-unit accounting can be compared with the pool's;
//   * the state each group holds (a digest of the token prefix the last
//     forward wrote there), so every checkpoint the manager keeps, and every
//     state a forward reads, can be compared with the prefix it claims.
// Shared by test/Unit/CacheModelCheckTest.cpp and bench/model_check.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef POOLC_TEST_CACHEMODELCHECK_H
#define POOLC_TEST_CACHEMODELCHECK_H

#include "poolrt/CacheManager.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace poolc_model {

/// A block's reference count, or -1 where the pool refuses the id (the
/// checks compare it with what the model expects, so a refusal fails them).
inline int32_t refCountOr(const poolrt::BlockPool &pool, poolrt::BlockId id) {
  auto r = pool.refCount(id);
  return r.ok() ? *r : -1;
}

using namespace poolrt;

enum class ModelConfig { PlainKv, ForkGdn, PagedRowSpace };

inline const char *configName(ModelConfig c) {
  switch (c) {
  case ModelConfig::PlainKv:
    return "plain-kv";
  case ModelConfig::ForkGdn:
    return "fork-gdn";
  case ModelConfig::PagedRowSpace:
    return "paged-row-space";
  }
  return "?";
}

struct OpCounts {
  int64_t admits = 0, refusals = 0, hits = 0, hitBlocks = 0, forwards = 0,
          chunks = 0, decodes = 0, specCommits = 0, preemptions = 0, frees = 0,
          boundaryMoves = 0, boundaryRefused = 0, stores = 0, restores = 0,
          forkCheckpoints = 0, decodeAppendPreempts = 0;
  std::string str() const {
    std::ostringstream o;
    o << "admits=" << admits << " refusals=" << refusals << " hits=" << hits
      << " hitBlocks=" << hitBlocks << " forwards=" << forwards
      << " chunks=" << chunks << " decodes=" << decodes
      << " specCommits=" << specCommits << " preemptions=" << preemptions
      << " frees=" << frees << " boundaryMoves=" << boundaryMoves
      << " boundaryRefused=" << boundaryRefused << " stores=" << stores
      << " restores=" << restores << " forkCheckpoints=" << forkCheckpoints
      << " appendPreempts=" << decodeAppendPreempts;
    return o.str();
  }
};

struct Outcome {
  bool ok = true;
  std::string report; // seed, step, what failed, the last operations
  int64_t steps = 0;
  OpCounts counts;
};

namespace detail {

constexpr int64_t kBlockSize = 4;
constexpr int64_t kInterval = 16;

struct Digest {
  uint64_t d = 0;
  int64_t len = -1; // -1: nothing known
  bool operator==(const Digest &o) const { return d == o.d && len == o.len; }
  bool operator!=(const Digest &o) const { return !(*this == o); }
};

/// The reference model's view of one request.
struct Req {
  Request r;
  enum Phase { Waiting, Prefill, Decode } phase = Waiting;
  std::vector<BlockId> table; // the model's copy of the block table
  GroupId group, forkSource;  // the model's copy of the state fields
  std::vector<uint64_t> prefix{1469598103934665603ull}; // digest of k tokens
  std::vector<BlockHash> chain; // expected chained hashes of full blocks
  int64_t decodeLeft = 0;
  bool spec = false;
  int64_t plannedChunk = 0; // this pass
  bool inBatch = false;

  Digest digestAt(int64_t len) const {
    return Digest{prefix[size_t(len)], len};
  }
  void appendToken(int64_t t) {
    r.tokens.push_back(t);
    prefix.push_back((prefix.back() ^ uint64_t(t)) * 1099511628211ull);
  }
  BlockHash chainAt(int64_t i) {
    while (int64_t(chain.size()) <= i) {
      size_t k = chain.size();
      std::optional<BlockHash> parent;
      if (k > 0)
        parent = chain.back();
      chain.push_back(hashBlock(HashScheme::Xxh3, parent, r.tokens.data() + k * kBlockSize,
                                size_t(kBlockSize)));
    }
    return chain[size_t(i)];
  }
};

class Checker {
public:
  Checker(ModelConfig cfg, uint64_t seed) : cfg(cfg), seed(seed), rng(seed) {}

  Outcome run(int64_t ops) {
    Outcome out;
    if (!setUp(out))
      return out;
    for (step = 0; step < ops && ok; ++step) {
      doOneOp();
      if (ok)
        checkAll();
      if (ok && step % 4096 == 4095)
        prune();
    }
    out.ok = ok;
    out.steps = step;
    out.counts = counts;
    if (!ok) {
      std::ostringstream o;
      o << "model check FAILED: config " << configName(cfg) << " seed " << seed
        << " step " << (step - 1) << ": " << failure << "\nlast operations:\n";
      for (const std::string &l : log)
        o << "  " << l << "\n";
      out.report = o.str();
    }
    return out;
  }

private:
  ModelConfig cfg;
  uint64_t seed;
  std::mt19937_64 rng;
  int64_t step = 0;
  bool ok = true;
  std::string failure;
  std::deque<std::string> log;
  OpCounts counts;

  std::unique_ptr<CacheManager> m;
  std::vector<std::unique_ptr<Req>> reqs; // live or waiting
  int64_t nextReqId = 1;
  std::vector<std::vector<int64_t>> families;

  // Per block id (up to maxBlocks).
  std::vector<std::vector<int64_t>> bytes; // KV tokens written
  std::vector<BlockHash> pubHash;          // name the test saw published
  std::vector<std::pair<int64_t, int32_t>> unitOf; // (record, piece) or (-1,0)
  // Per group id.
  std::vector<Digest> groupState;
  // Checkpoint records: id -> state the image holds, units.
  std::unordered_map<int64_t, Digest> recState;
  std::unordered_map<int64_t, std::vector<BlockId>> recUnits;
  int64_t nextRecordId = 0;
  // Chained hash -> digest of the prefix it names.
  std::unordered_map<BlockHash, Digest> hashPrefix;
  int64_t modelAdmissions = 0;
  CacheFunnel lastFunnel;
  CacheStats lastStats;

  template <typename... T> void note(const T &...parts) {
    std::ostringstream o;
    o << "#" << step << " ";
    (o << ... << parts);
    log.push_back(o.str());
    if (log.size() > 20)
      log.pop_front();
  }
  template <typename... T> bool fail(const T &...parts) {
    if (!ok)
      return false;
    std::ostringstream o;
    (o << ... << parts);
    failure = o.str();
    ok = false;
    return false;
  }
#define MC_EXPECT(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond))                                                               \
      return (void)fail(#cond, ": ", __VA_ARGS__);                             \
  } while (0)

  uint64_t pick(uint64_t n) { return n ? rng() % n : 0; }
  bool chance(int percent) { return int(rng() % 100) < percent; }
  bool stateful() const { return cfg != ModelConfig::PlainKv; }

  bool setUp(Outcome &out) {
    CacheManagerConfig c;
    c.blockSize = kBlockSize;
    c.policy.checkpointIntervalTokens = kInterval;
    if (cfg == ModelConfig::PlainKv) {
      c.numBlocks = 96;
    } else if (cfg == ModelConfig::ForkGdn) {
      c.numBlocks = 128;
      c.numGroups = 12;
      c.transfer = StateTransfer::fork(1).value();
    } else {
      PoolBoundaryGeometry g;
      g.envelopeRows = 1;
      g.slotRows = 8;
      g.planeRows = 8 * 24; // 24 slot positions
      g.slotPositions = 24;
      g.maxBlocks = 8 * 24;
      c.boundary = g;
      c.numGroups = 8;
      c.numBlocks = g.blocksFor(8); // 128
      c.pagedCheckpoints =
          PagedStateCheckpointSpec::create(100, 400, "model-check", 200)
              .value();
    }
    auto made = CacheManager::create(c);
    if (!made.ok()) {
      out.ok = false;
      out.report = "cannot create the cache manager: " + made.error().message;
      return false;
    }
    m = made.take();
    size_t maxBlocks = size_t(m->blocks().maxBlocks());
    bytes.assign(maxBlocks, {});
    pubHash.assign(maxBlocks, kNoHash);
    unitOf.assign(maxBlocks, {-1, 0});
    groupState.assign(64, Digest{});
    for (int f = 0; f < 5; ++f) {
      std::vector<int64_t> fam;
      int64_t len = 24 + int64_t(pick(72));
      for (int64_t i = 0; i < len; ++i)
        fam.push_back(int64_t(pick(50000)));
      families.push_back(fam);
    }
    return true;
  }

  //===--- operations -----------------------------------------------------===//

  void doOneOp() {
    int roll = int(pick(100));
    if (roll < 30)
      opAdmit();
    else if (roll < 75)
      opForward();
    else if (roll < 82)
      opPreempt();
    else if (roll < 90)
      opFree();
    else if (cfg == ModelConfig::PagedRowSpace)
      opMoveBoundary();
    else
      opForward();
  }

  std::vector<Req *> running() {
    std::vector<Req *> out;
    for (auto &q : reqs)
      if (q->phase != Req::Waiting)
        out.push_back(q.get());
    return out;
  }

  Req *newRequest() {
    auto q = std::make_unique<Req>();
    q->r.id = nextReqId++;
    q->r.state.hasPerReqCache = stateful();
    const std::vector<int64_t> &fam = families[pick(families.size())];
    int64_t keep = chance(80) ? int64_t(pick(fam.size() + 1)) : 0;
    if (chance(50))
      keep -= keep % kBlockSize;
    for (int64_t i = 0; i < keep; ++i)
      q->appendToken(fam[size_t(i)]);
    int64_t extra = 1 + int64_t(pick(chance(20) ? 60 : 12));
    for (int64_t i = 0; i < extra; ++i)
      q->appendToken(int64_t(pick(50000)));
    q->r.numPromptTokens = q->r.numTokens();
    q->decodeLeft = 1 + int64_t(pick(40));
    q->spec = chance(40);
    reqs.push_back(std::move(q));
    return reqs.back().get();
  }

  void opAdmit() {
    std::vector<Req *> waiting;
    for (auto &q : reqs)
      if (q->phase == Req::Waiting)
        waiting.push_back(q.get());
    Req *q = (waiting.empty() || chance(40)) ? newRequest()
                                             : waiting[pick(waiting.size())];
    Request &r = q->r;
    int64_t hit = m->canAllocate(r);
    if (hit < 0) {
      ++counts.refusals;
      note("admit req ", r.id, " (", r.numTokens(), " tokens): refused");
      return;
    }
    int64_t nBlocks = (r.numTokens() + kBlockSize - 1) / kBlockSize;
    MC_EXPECT(hit < nBlocks, "req ", r.id, " hit ", hit, " of ", nBlocks,
              " blocks (the last block is never reused)");
    std::vector<int32_t> holders = holderCounts(); // before this request
    Status s = m->allocate(r, hit);
    note("admit req ", r.id, " (", r.numTokens(), " tokens): hit ", hit,
         s.ok() ? "" : " allocate failed: ", s.ok() ? "" : s.error().message);
    MC_EXPECT(s.ok(), "allocate after a successful can_allocate failed");
    ++counts.admits;
    ++modelAdmissions;
    if (hit > 0) {
      ++counts.hits;
      counts.hitBlocks += hit;
    }
    MC_EXPECT(int64_t(r.blockTable.size()) == nBlocks, "req ", r.id, " got ",
              r.blockTable.size(), " blocks, needs ", nBlocks);
    MC_EXPECT(r.numCachedTokens == hit * kBlockSize, "num cached tokens");
    syncRecords();
    for (int64_t i = 0; i < nBlocks; ++i) {
      BlockId b = r.blockTable[size_t(i)];
      MC_EXPECT(b.value >= 0 && b.value < m->blocks().numBlocks(), "block ",
                b.value, " outside the pool");
      if (i < hit) {
        // A prefix hit: the block must hold exactly this block of the prompt.
        std::vector<int64_t> want(r.tokens.begin() + i * kBlockSize,
                                  r.tokens.begin() + (i + 1) * kBlockSize);
        MC_EXPECT(bytes[size_t(b.value)] == want, "req ", r.id, " hit block ",
                  i, " = block ", b.value, " holds other tokens");
        MC_EXPECT(pubHash[size_t(b.value)] == q->chainAt(i), "req ", r.id,
                  " hit block ", i, " = block ", b.value,
                  " was never published under this prefix's hash");
      } else {
        MC_EXPECT(holders[size_t(b.value)] == 0, "fresh block ", b.value,
                  " of req ", r.id, " is held by another request");
        MC_EXPECT(unitOf[size_t(b.value)].first < 0, "fresh block ", b.value,
                  " is a live checkpoint unit");
        freshBlock(b);
      }
    }
    q->table = r.blockTable;
    q->group = r.state.group;
    q->forkSource = r.state.forkSource;
    q->phase = Req::Prefill;
    if (stateful()) {
      MC_EXPECT(r.state.group.valid(), "stateful req ", r.id, " has no group");
    }
  }

  void freshBlock(BlockId b) {
    bytes[size_t(b.value)].clear();
    pubHash[size_t(b.value)] = kNoHash;
  }

  void opPreempt() {
    std::vector<Req *> run = running();
    if (run.empty())
      return opAdmit();
    Req *q = run[pick(run.size())];
    release(q, "preempt");
    ++counts.preemptions;
    q->phase = Req::Waiting;
  }

  void opFree() {
    std::vector<Req *> run = running();
    if (run.empty())
      return opAdmit();
    Req *q = run[pick(run.size())];
    release(q, "free");
    ++counts.frees;
    finish(q);
  }

  void finish(Req *q) {
    reqs.erase(std::remove_if(
                   reqs.begin(), reqs.end(),
                   [&](const std::unique_ptr<Req> &p) { return p.get() == q; }),
               reqs.end());
  }

  void release(Req *q, const char *why) {
    Status s = m->deallocate(q->r);
    note(why, " req ", q->r.id, s.ok() ? "" : ": ",
         s.ok() ? "" : s.error().message);
    MC_EXPECT(s.ok(), "deallocate failed");
    MC_EXPECT(q->r.blockTable.empty() && !q->r.state.group.valid() &&
                  !q->r.state.forkSource.valid(),
              "deallocate left state on req ", q->r.id);
    q->table.clear();
    q->group = q->forkSource = GroupId();
  }

  /// One scheduling pass: plan chunks and decode appends, build the batch
  /// (maintenance ops), run every forward, publish, and complete the pass.
  void opForward() {
    std::vector<Req *> run = running();
    ++counts.forwards;
    std::vector<Req *> batch;
    int64_t budget = 16 + int64_t(pick(112)), batched = 0;
    for (Req *q : run) {
      Request &r = q->r;
      q->inBatch = false;
      int64_t start = r.numCachedTokens;
      if (q->phase == Req::Prefill) {
        // A request reading a fork source must run in this pass.
        bool must = r.state.forkSource.valid();
        int64_t chunk = CacheManager::chunkedPrefillSize(
            r.numTokens() - start, std::max<int64_t>(budget - batched, 1),
            must ? 0 : batched, kBlockSize);
        if (chunk <= 0)
          continue;
        chunk = m->finalizePrefillChunk(r, start, chunk);
        MC_EXPECT(chunk > 0 && start + chunk <= r.numTokens(),
                  "finalize_prefill_chunk gave ", chunk, " at ", start);
        q->plannedChunk = chunk;
        batched += chunk;
      } else {
        // may_append: cover every pending token.
        while (int64_t(r.blockTable.size()) * kBlockSize < r.numTokens()) {
          BlockPool &pool = m->blocks();
          bool room = m->pagedStore() ? m->pagedStore()->ensureFreeUnits(1)
                                      : pool.hasFree(1);
          if (!room) {
            ++counts.decodeAppendPreempts;
            release(q, "preempt (no block to append)");
            q->phase = Req::Waiting;
            break;
          }
          syncRecords();
          auto b = pool.pop();
          MC_EXPECT(b.ok(), "pop after room was found failed");
          MC_EXPECT(holderCounts()[size_t(b->value)] == 0, "appended block ",
                    b->value, " is held by another request");
          MC_EXPECT(unitOf[size_t(b->value)].first < 0, "appended block ",
                    b->value, " is a live checkpoint unit");
          Status s = pool.allocate(*b);
          MC_EXPECT(s.ok(), "allocate of a popped block failed");
          r.blockTable.push_back(*b);
          q->table.push_back(*b);
          freshBlock(*b);
        }
        if (q->phase == Req::Waiting)
          continue;
        q->plannedChunk = r.numTokens() - start;
      }
      q->inBatch = true;
      batch.push_back(q);
    }
    if (!ok)
      return;
    for (Req *q : running())
      MC_EXPECT(q->inBatch || !q->r.state.forkSource.valid(), "req ", q->r.id,
                " reads a fork source but was left out");
    applyMaintenance(m->takeStateMaintenanceOps());
    std::ostringstream what;
    what << "forward:";
    for (Req *q : batch)
      what << " " << q->r.id << (q->phase == Req::Prefill ? "p" : "d") << "["
           << q->r.numCachedTokens << "+" << q->plannedChunk << "]";
    note(what.str());
    // Reads first (every forward of the batch runs at once), then writes.
    for (Req *q : batch)
      readState(q);
    for (Req *q : batch)
      writeForward(q);
    if (!ok)
      return;
    for (Req *q : batch)
      postprocess(q);
    m->completePreviousStateBatch();
  }

  void readState(Req *q) {
    Request &r = q->r;
    if (!stateful() || !ok)
      return;
    GroupId src =
        r.state.forkSource.valid() ? r.state.forkSource : r.state.group;
    MC_EXPECT(src.valid(), "req ", r.id, " runs without a state group");
    int64_t start = r.numCachedTokens;
    if (start > 0)
      MC_EXPECT(groupState[size_t(src.value)] == q->digestAt(start), "req ",
                r.id, " reads group ", src.value, " at ", start,
                " tokens, which holds state of ",
                groupState[size_t(src.value)].len, " tokens of another prefix");
  }

  void writeForward(Req *q) {
    Request &r = q->r;
    if (!ok)
      return;
    int64_t start = r.numCachedTokens, end = start + q->plannedChunk;
    std::vector<int32_t> holders = holderCounts();
    for (int64_t p = start; p < end; ++p) {
      BlockId b = r.blockTable[size_t(p / kBlockSize)];
      std::vector<int64_t> &by = bytes[size_t(b.value)];
      MC_EXPECT(holders[size_t(b.value)] == 1, "req ", r.id, " writes block ",
                b.value, " that ", holders[size_t(b.value)], " requests hold");
      MC_EXPECT(int64_t(by.size()) == p % kBlockSize, "req ", r.id,
                " writes token ", p, " into block ", b.value, " holding ",
                by.size(), " tokens");
      by.push_back(r.tokens[size_t(p)]);
    }
    if (stateful()) {
      groupState[size_t(r.state.group.value)] = q->digestAt(end);
      r.state.forkSource = GroupId(); // a fork describes one forward
      q->forkSource = GroupId();
    }
  }

  void postprocess(Req *q) {
    Request &r = q->r;
    if (!ok)
      return;
    int64_t start = r.numCachedTokens, end = start + q->plannedChunk;
    GroupId before = r.state.group;
    Status s;
    if (q->phase == Req::Prefill) {
      s = m->hashBlocks(r, q->plannedChunk);
      ++counts.chunks;
    } else {
      int64_t room = (cfg == ModelConfig::ForkGdn && q->spec) ? 0 : 1;
      s = m->hashDecodeBlocks(r, end, room);
      ++counts.decodes;
    }
    MC_EXPECT(s.ok(), "hash_blocks failed: ", s.error().message);
    r.numCachedTokens = end;
    // Every block up to the watermark carries this prefix's chained hash,
    // and holds the tokens that were written.
    int64_t hashed = r.numHashedTokens / kBlockSize;
    MC_EXPECT(hashed <= int64_t(r.blockTable.size()) &&
                  r.numHashedTokens <= end,
              "publish watermark ", r.numHashedTokens, " past ", end);
    for (int64_t i = start / kBlockSize; i < hashed; ++i) {
      BlockId b = r.blockTable[size_t(i)];
      BlockHash h = q->chainAt(i);
      MC_EXPECT(m->blocks().hash(b) == h, "req ", r.id, " block ", i, " = ",
                b.value, " published under a wrong hash");
      std::vector<int64_t> want(r.tokens.begin() + i * kBlockSize,
                                r.tokens.begin() + (i + 1) * kBlockSize);
      MC_EXPECT(bytes[size_t(b.value)] == want, "published block ", b.value,
                " holds other tokens than were written");
      pubHash[size_t(b.value)] = h;
      hashPrefix[h] = q->digestAt((i + 1) * kBlockSize);
    }
    if (before != r.state.group) {
      ++counts.forkCheckpoints;
      MC_EXPECT(r.state.forkSource == before, "a fork checkpoint must read "
                                              "the old group next");
    }
    q->group = r.state.group;
    q->forkSource = r.state.forkSource;
    if (q->phase == Req::Prefill) {
      if (end == r.numTokens()) {
        q->phase = Req::Decode;
        q->appendToken(int64_t(pick(50000))); // the sampled token
      }
      return;
    }
    // Decode: 1 sampled token, plus accepted speculative ones.
    int64_t accepted = q->spec ? int64_t(pick(4)) : 0;
    if (accepted)
      ++counts.specCommits;
    for (int64_t i = 0; i <= accepted; ++i)
      q->appendToken(int64_t(pick(50000)));
    if (--q->decodeLeft <= 0) {
      release(q, "finish");
      ++counts.frees;
      finish(q);
    }
  }

  void applyMaintenance(const PageUnitCheckpointStore::CheckpointOps &ops) {
    syncRecords();
    std::vector<int32_t> holders = holderCounts();
    for (const CheckpointStoreOp &st : ops.stores) {
      int64_t id = nextRecordId++;
      ++counts.stores;
      auto rec = m->pagedStore()->record(CheckpointId(id));
      MC_EXPECT(rec && *rec->unitIds == st.unitIds, "store op ", id,
                " does not match record ", id);
      MC_EXPECT(int64_t(st.unitIds.size()) ==
                    m->pagedStore()->unitsPerCheckpoint(),
                "store op units");
      recState[id] = groupState[size_t(st.srcSlot.value)];
      recUnits[id] = st.unitIds;
      for (size_t k = 0; k < st.unitIds.size(); ++k) {
        BlockId u = st.unitIds[k];
        MC_EXPECT(holders[size_t(u.value)] == 0, "unit ", u.value,
                  " is held by a request");
        MC_EXPECT(unitOf[size_t(u.value)].first < 0, "unit ", u.value,
                  " already belongs to record ", unitOf[size_t(u.value)].first);
        unitOf[size_t(u.value)] = {id, int32_t(k)};
        freshBlock(u);
      }
    }
    for (const CheckpointRestoreOp &rs : ops.restores) {
      ++counts.restores;
      MC_EXPECT(!rs.unitIds.empty(), "restore without units");
      int64_t id = unitOf[size_t(rs.unitIds[0].value)].first;
      MC_EXPECT(id >= 0, "restore reads unit ", rs.unitIds[0].value,
                " that holds no image");
      for (size_t k = 0; k < rs.unitIds.size(); ++k)
        MC_EXPECT(unitOf[size_t(rs.unitIds[k].value)] ==
                      std::make_pair(id, int32_t(k)),
                  "restore reads a torn image");
      groupState[size_t(rs.dstSlot.value)] = recState[id];
    }
  }

  void opMoveBoundary() {
    std::vector<Request *> live;
    for (Req *q : running())
      live.push_back(&q->r);
    int64_t target = 2 + int64_t(pick(14));
    bool atRest = m->pagedStore()->atRest();
    int64_t blocksBefore = m->blocks().numBlocks();
    auto mv = m->moveBoundary(target, live);
    if (!atRest) {
      ++counts.boundaryRefused;
      note("move boundary to ", target, " groups: refused (copies queued)");
      MC_EXPECT(!mv.ok() && m->blocks().numBlocks() == blocksBefore,
                "a boundary move with copies queued must be refused");
      return;
    }
    MC_EXPECT(mv.ok(), "move_boundary failed: ", mv.error().message);
    ++counts.boundaryMoves;
    note("move boundary to ", target, " groups: ", mv->numGroups, " groups, ",
         mv->numBlocks, " blocks, ", mv->blockMoves.size(), " block moves, ",
         mv->groupMoves.size(), " group moves",
         mv->reachedTarget ? "" : ", stopped: ", mv->stopReason);
    MC_EXPECT(mv->stopReason.find("internal") == std::string::npos,
              mv->stopReason);
    // The byte moves run at once: every destination gets its source's
    // bytes as they were before the move.
    auto oldBytes = bytes;
    auto oldPub = pubHash;
    auto oldUnit = unitOf;
    std::unordered_map<int32_t, int32_t> blockTo;
    for (auto &mvd : mv->blockMoves) { // a source keeps nothing (it may be
      bytes[size_t(mvd.first.value)].clear(); // back below the top, vacant)
      pubHash[size_t(mvd.first.value)] = kNoHash;
      unitOf[size_t(mvd.first.value)] = {-1, 0};
    }
    for (auto &[from, to] : mv->blockMoves) {
      MC_EXPECT(blockTo.emplace(from.value, to.value).second, "block ",
                from.value, " moves twice");
      bytes[size_t(to.value)] = oldBytes[size_t(from.value)];
      pubHash[size_t(to.value)] = oldPub[size_t(from.value)];
      unitOf[size_t(to.value)] = oldUnit[size_t(from.value)];
      if (oldUnit[size_t(from.value)].first >= 0) {
        auto &u = recUnits[oldUnit[size_t(from.value)].first];
        u[size_t(oldUnit[size_t(from.value)].second)] = to;
      }
    }
    for (int32_t b = mv->numBlocks; b < m->blocks().maxBlocks(); ++b) {
      bytes[size_t(b)].clear();
      pubHash[size_t(b)] = kNoHash;
      unitOf[size_t(b)] = {-1, 0};
    }
    auto oldGroups = groupState;
    std::unordered_map<int32_t, int32_t> groupTo;
    for (const GroupRelocation &g : mv->groupMoves) {
      groupState[size_t(g.dst.value)] = oldGroups[size_t(g.src.value)];
      groupTo[g.src.value] = g.dst.value;
    }
    for (size_t g = size_t(mv->numGroups); g < groupState.size(); ++g)
      groupState[g] = Digest{};
    for (Req *q : running()) {
      for (BlockId &b : q->table) {
        auto it = blockTo.find(b.value);
        if (it != blockTo.end())
          b = BlockId(it->second);
      }
      for (GroupId *g : {&q->group, &q->forkSource}) {
        auto it = groupTo.find(g->value);
        if (g->valid() && it != groupTo.end())
          *g = GroupId(it->second);
      }
    }
  }

  //===--- the checks after every step ------------------------------------===//

  std::vector<int32_t> holderCounts() const {
    std::vector<int32_t> h(size_t(m->blocks().maxBlocks()), 0);
    for (auto &q : reqs)
      for (BlockId b : q->r.blockTable)
        if (b.value >= 0 && size_t(b.value) < h.size())
          ++h[size_t(b.value)];
    return h;
  }

  void checkAll() {
    syncRecords();
    checkCheckpoints();
    if (!ok)
      return;
    BlockPool &pool = m->blocks();
    std::vector<int32_t> holders = holderCounts();
    std::vector<int32_t> firstIndex(holders.size(), -1);
    std::vector<uint8_t> groupOwned(64, 0);
    for (auto &qp : reqs) {
      Req &q = *qp;
      Request &r = q.r;
      MC_EXPECT(r.blockTable == q.table, "req ", r.id,
                "'s block table is not the one the model followed");
      MC_EXPECT(r.state.group == q.group && r.state.forkSource == q.forkSource,
                "req ", r.id, "'s group / fork source is not the model's");
      if (q.phase == Req::Waiting) {
        MC_EXPECT(r.blockTable.empty(), "waiting req holds blocks");
        continue;
      }
      for (size_t i = 0; i < r.blockTable.size(); ++i) {
        BlockId b = r.blockTable[i];
        MC_EXPECT(b.value >= 0 && b.value < pool.numBlocks(), "req ", r.id,
                  " holds block ", b.value, " outside the pool of ",
                  pool.numBlocks());
        if (holders[size_t(b.value)] > 1) {
          // Shared: only a published block of identical content, at the
          // same position of both prompts.
          if (firstIndex[size_t(b.value)] < 0)
            firstIndex[size_t(b.value)] = int32_t(i);
          MC_EXPECT(firstIndex[size_t(b.value)] == int32_t(i) &&
                        pubHash[size_t(b.value)] == q.chainAt(int64_t(i)),
                    "block ", b.value, " is shared by ",
                    holders[size_t(b.value)],
                    " requests without a prefix hit of identical content");
        }
      }
      if (stateful()) {
        GroupId g = r.state.group;
        MC_EXPECT(g.valid() && g.value < m->groups()->numGroups() &&
                      !m->groups()->isFree(g),
                  "req ", r.id, " holds group ", g.value, " that is not held");
        MC_EXPECT(!groupOwned[size_t(g.value)], "group ", g.value,
                  " is owned by two requests");
        groupOwned[size_t(g.value)] = 1;
      }
    }
    int32_t vacant = 0, cached = 0, held = 0, raw = 0;
    for (int32_t b = 0; b < pool.maxBlocks(); ++b) {
      BlockId id(b);
      BlockState s = pool.state(id);
      if (b >= pool.numBlocks()) {
        MC_EXPECT(s == BlockState::Retired, "block ", b, " past the top is ",
                  blockStateName(s));
        continue;
      }
      bool unit = unitOf[size_t(b)].first >= 0;
      if (holders[size_t(b)] > 0) {
        MC_EXPECT(s == BlockState::Held &&
                      refCountOr(pool, id) == holders[size_t(b)],
                  "block ", b, " held by ", holders[size_t(b)], " requests is ",
                  blockStateName(s), " with ref count ", refCountOr(pool, id));
        MC_EXPECT(!unit, "block ", b, " is held and a checkpoint unit");
        ++held;
      } else if (unit) {
        MC_EXPECT(s == BlockState::RawUnit, "checkpoint unit ", b, " is ",
                  blockStateName(s));
        ++raw;
      } else {
        MC_EXPECT((s == BlockState::Vacant || s == BlockState::Cached) &&
                      refCountOr(pool, id) == 0,
                  "block ", b, " nobody holds is ", blockStateName(s),
                  " with ref count ", refCountOr(pool, id));
        s == BlockState::Vacant ? ++vacant : ++cached;
      }
      BlockHash h = pool.hash(id);
      bool indexed = h != kNoHash && pool.indexedAs(id, h);
      MC_EXPECT(s != BlockState::Cached || indexed, "cached block ", b,
                " is not reachable");
      if (indexed) {
        // Whatever the index can hand out holds what the test published.
        MC_EXPECT(pool.lookup(h) == id, "lookup of block ", b,
                  "'s hash returns ", pool.lookup(h).value);
        MC_EXPECT(pubHash[size_t(b)] == h, "block ", b,
                  " is indexed under a hash the test never published there");
        const std::vector<int32_t> &t = pool.tokenIds(id);
        const std::vector<int64_t> &w = bytes[size_t(b)];
        MC_EXPECT(int64_t(w.size()) == kBlockSize &&
                      std::equal(t.begin(), t.end(), w.begin(), w.end()),
                  "indexed block ", b, " holds other tokens than were written");
      }
    }
    MC_EXPECT(pool.numFree() == vacant + cached, "num_free ", pool.numFree(),
              " but ", vacant, " vacant + ", cached, " cached");
    MC_EXPECT(pool.numUsed() == held + raw, "num_used ", pool.numUsed(),
              " but ", held, " held + ", raw, " raw units");
    MC_EXPECT(pool.numFree() + pool.numUsed() == pool.numBlocks(),
              "free + used != total");
    checkCounters();
  }

  void checkCheckpoints() {
    if (cfg == ModelConfig::ForkGdn) {
      for (auto &[h, g] : m->groups()->indexEntries()) {
        auto it = hashPrefix.find(h);
        MC_EXPECT(it != hashPrefix.end(), "group ", g.value,
                  " is a checkpoint of a hash never published");
        MC_EXPECT(groupState[size_t(g.value)] == it->second,
                  "checkpoint group ", g.value, " holds state of ",
                  groupState[size_t(g.value)].len, " tokens, not the ",
                  it->second.len, "-token prefix it names");
      }
    }
    if (cfg != ModelConfig::PagedRowSpace)
      return;
    syncRecords();
    PageUnitCheckpointStore &store = *m->pagedStore();
    int64_t liveUnits = 0;
    for (auto &[id, units] : recUnits) {
      auto rec = store.record(CheckpointId(id));
      MC_EXPECT(*rec->unitIds == units, "record ", id,
                " names other units than the model followed");
      liveUnits += int64_t(units.size());
      if (rec->state != CheckpointState::Evicting) {
        auto it = hashPrefix.find(rec->prefixHash);
        MC_EXPECT(it != hashPrefix.end() && recState[id] == it->second,
                  "checkpoint record ", id,
                  " holds state of another prefix than it names");
      }
      if (rec->state == CheckpointState::Ready)
        MC_EXPECT(store.lookup(rec->prefixHash) == CheckpointId(id),
                  "READY record ", id, " is not what lookup finds");
    }
    MC_EXPECT(store.numRecords() == int64_t(recUnits.size()), "store has ",
              store.numRecords(), " records, the model ", recUnits.size());
    int64_t raw = 0;
    for (int32_t b = 0; b < m->blocks().numBlocks(); ++b)
      raw += unitOf[size_t(b)].first >= 0;
    if (raw != liveUnits) {
      std::ostringstream o;
      for (int32_t b = 0; b < m->blocks().numBlocks(); ++b)
        if (unitOf[size_t(b)].first >= 0 &&
            !recUnits.count(unitOf[size_t(b)].first))
          o << " " << b << "->record " << unitOf[size_t(b)].first;
      MC_EXPECT(raw == liveUnits, raw,
                " blocks are units in the model, the "
                "live records hold ",
                liveUnits, "; stale:", o.str());
    }
  }

  /// Drop the records the store released (their units went back).
  void syncRecords() {
    if (!m->pagedStore())
      return;
    std::vector<int64_t> gone;
    for (auto &[id, units] : recUnits)
      if (!m->pagedStore()->record(CheckpointId(id)))
        gone.push_back(id);
    for (int64_t id : gone) {
      for (BlockId u : recUnits[id])
        if (unitOf[size_t(u.value)].first == id)
          unitOf[size_t(u.value)] = {-1, 0};
      recUnits.erase(id);
      recState.erase(id);
    }
  }

  void checkCounters() {
    CacheFunnel f = m->funnel();
    const CacheStats &s = m->stats();
    const CacheFunnel &p = lastFunnel;
    MC_EXPECT(f.demandsRecorded >= p.demandsRecorded &&
                  f.demandsDeclinedNoRoom >= p.demandsDeclinedNoRoom &&
                  f.chunksCutForDemand >= p.chunksCutForDemand &&
                  f.fates.kept >= p.fates.kept &&
                  f.fates.dropped >= p.fates.dropped &&
                  f.fates.evicted >= p.fates.evicted &&
                  f.fates.orphaned >= p.fates.orphaned &&
                  f.blocksEvicted >= p.blocksEvicted,
              "a funnel counter went down");
    MC_EXPECT(s.requests == modelAdmissions, "stats count ", s.requests,
              " admissions, the model ", modelAdmissions);
    MC_EXPECT(s.fullTokens >= lastStats.fullTokens &&
                  s.cachedTokens >= lastStats.cachedTokens &&
                  s.cachedTokens <= s.wantedTokens &&
                  s.wantedTokens <= s.compressedTokens &&
                  s.compressedTokens <= s.fullTokens,
              "cache stats out of order");
    lastFunnel = f;
    lastStats = s;
  }

  /// Forget published hashes nothing can reach any more (memory only).
  void prune() {
    std::unordered_map<BlockHash, Digest> keep;
    auto take = [&](BlockHash h) {
      auto it = hashPrefix.find(h);
      if (it != hashPrefix.end())
        keep.insert(*it);
    };
    for (int32_t b = 0; b < m->blocks().numBlocks(); ++b)
      take(m->blocks().hash(BlockId(b)));
    for (auto &q : reqs)
      for (BlockHash h : q->chain)
        take(h);
    for (auto &e : m->groups()->indexEntries())
      take(e.first);
    if (m->pagedStore())
      for (auto &[id, u] : recUnits)
        if (auto rec = m->pagedStore()->record(CheckpointId(id)))
          take(rec->prefixHash);
    hashPrefix.swap(keep);
  }
#undef MC_EXPECT
};

} // namespace detail

/// Run `ops` operations of configuration `cfg` from `seed`.
inline Outcome runModelCheck(ModelConfig cfg, uint64_t seed, int64_t ops) {
  detail::Checker c(cfg, seed);
  return c.run(ops);
}

} // namespace poolc_model

#endif
