//===- Engine.cpp - The serving loop over a compiled artifact -------------===//

#include "poolrt/serve/Engine.h"
#include "TierSession.h"
#include "poolrt/Checked.h"
#include "poolrt/serve/Mix.h"

#include "poolrt/BlockHash.h"
#include "poolrt/Setup.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <unordered_set>

namespace poolrt {
namespace serve {

namespace {


uint64_t tokensChecksum(const std::vector<int64_t> &tokens) {
  // int64 little-endian, as the hash chain reads token ids.
  std::vector<unsigned char> bytes;
  bytes.reserve(tokens.size() * 8);
  for (int64_t t : tokens)
    for (int k = 0; k < 8; ++k)
      bytes.push_back((unsigned char)(uint64_t(t) >> (8 * k)));
  return XXH64(bytes.data(), bytes.size(), 0);
}

using Clock = std::chrono::steady_clock;
double micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

} // namespace

struct Engine::Seq {
  size_t index = 0;
  uint64_t seedIndex = 0; // TraceRequest::seedIndex, or index
  Request req;
  int64_t maxOutput = 0;
  int64_t newPromptTokens = 0; // a follow-up's own tokens (for the limit)
  std::vector<int64_t> followUpTokens;
  std::vector<Seq *> followers;
  bool prefillDone = false;
  bool done = false;
  int64_t decodeSteps = 0;
  // The offload tier.
  TierSeqState tier;
};

struct Engine::Batch {
  struct Item {
    Seq *seq;
    int64_t start, count;
  };
  bool prefill = false;
  std::vector<Item> items;
  std::vector<Seq *> tierRestores; // admitted with a tier hit: load, no forward
};

Engine::~Engine() {
  if (tier_)
    tier_->stopTransfer(); // the thread stops before the backend goes
  // The waiting loads' objects and the tier's page-locked buffers go back
  // to the device before it can go.
  seqs_.clear();
  tier_.reset(); // the backend, then the TierDevice
}

Result<std::unique_ptr<Engine>> Engine::create(const Artifact &artifact,
                                               Device &device,
                                               const ServeOptions &options) {
  auto layout = readSolvedLayout(artifact);
  if (!layout.ok())
    return layout.error();
  std::unique_ptr<Engine> e(new Engine());
  e->layout_ = layout.take();
  e->options_ = options;
  e->device_ = &device;
  const SolvedLayout &L = e->layout_;
  if (options.numSpec < 0 || options.numSpec > L.geometry.specDepth)
    return Error::invalid("num_spec " + std::to_string(options.numSpec) +
                          ": the artifact was compiled for " +
                          std::to_string(L.geometry.specDepth) +
                          " speculative tokens per step");
  if (options.acceptPercent < 0 || options.acceptPercent > 100)
    return Error::invalid("the draft acceptance must be a percentage in [0, 100]");
  if (options.maxBatchedTokens < 1)
    return Error::invalid("the token budget per step must be >= 1");
  if (options.maxNumSeqs < 0 || options.maxNumSeqs > L.inputs.maxNumSeqs)
    return Error::invalid("max_num_seqs " + std::to_string(options.maxNumSeqs) +
                          ": the artifact was compiled for at most " +
                          std::to_string(L.inputs.maxNumSeqs));
  if (options.maxModelLen < 0)
    return Error::invalid("the model length limit must be >= 0");
  e->maxNumSeqs_ = options.maxNumSeqs ? options.maxNumSeqs : L.inputs.maxNumSeqs;

  auto cfg = cacheManagerConfig(L, options.policy);
  if (!cfg.ok())
    return cfg.error();
  auto cache = CacheManager::create(*cfg);
  if (!cache.ok())
    return cache.error();
  e->cache_ = cache.take();
  e->blockSize_ = cfg->blockSize;
  e->stateful_ = cfg->numGroups > 0;
  // Window classes sharing the full class's pool keep their reserves out
  // of it: a request can hold at most the rest.
  int64_t sharedReserve = 0;
  for (const WindowClassConfig &w : cfg->windowClasses)
    if (w.numBlocks == 0)
      sharedReserve += w.reserveBlocks;
  e->tokenLimit_ = std::max<int64_t>(0, cfg->numBlocks - sharedReserve) * cfg->blockSize;
  if (options.maxModelLen > 0)
    e->tokenLimit_ = std::min(e->tokenLimit_, options.maxModelLen);

  Status loaded = device.loadKernels(artifact);
  if (!loaded.ok())
    return loaded.error();
  auto arena = DeviceArena::create(device, L);
  if (!arena.ok())
    return arena.error();
  e->arena_ = std::make_unique<DeviceArena>(arena.take());
  e->launcher_ = std::make_unique<KernelLauncher>(device, e->arena_->base());
  e->imageStore_ = L.kernelByKind("image_store");
  e->imageRestore_ = L.kernelByKind("image_restore");
  for (const SolvedClass *c : L.groupClasses())
    if (const KernelInfo *k = L.groupCopyKernelOf(c->name))
      e->groupCopies_.push_back(k);
  e->blockCopy_ = L.kernelByKind("block_copy");
  e->slotCopy_ = L.kernelByKind("slot_copy");
  if (options.boundaryChurn < 0)
    return Error::invalid("the boundary churn period must be >= 0");
  if (!cfg->boundary || !e->blockCopy_ || !e->slotCopy_) {
    e->options_.elasticBoundary = false;
    e->options_.boundaryChurn = 0;
  }
  if (cfg->pagedCheckpoints && (!e->imageStore_ || !e->imageRestore_))
    return Error::invalid("the artifact keeps PAGE-unit checkpoints but has no "
                          "image_store / image_restore kernel");
  if (e->stateful_ && cfg->transfer.forks() &&
      e->groupCopies_.size() != L.groupClasses().size())
    return Error::invalid("the artifact forks state groups but lacks a group_copy "
                          "kernel of one of its STATE classes");
  if (!options.modelKernel.empty()) {
    auto kernel = KernelModel::load(options.modelKernel, L, device, e->arena_->base());
    if (!kernel.ok())
      return kernel.error();
    e->model_ = kernel.take();
  } else if (options.runModel) { // without a model (benchmarks), none is made
    auto model = ReferenceModel::create(L, device, e->arena_->base());
    if (!model.ok())
      return model.error();
    e->model_ = model.take();
  }
  if (!options.tier.empty() && options.policy.prefixCaching) {
    auto tier = TierSession::create(L, device, *e->launcher_, e->arena_->base(), *e->cache_,
                                    cfg->blockSize, e->stateful_, options);
    if (!tier.ok())
      return tier.error();
    e->tier_ = tier.take();
  }
  e->counters_.blocksTotal = cfg->numBlocks;
  e->counters_.groupsTotal = cfg->numGroups;
  e->publishSnapshot();
  return e;
}

void Engine::submit(const Trace &trace) {
  size_t base = seqs_.size();
  for (size_t i = 0; i < trace.requests.size(); ++i) {
    const TraceRequest &t = trace.requests[i];
    auto s = std::make_unique<Seq>();
    s->index = seqs_.size();
    s->seedIndex = t.seedIndex >= 0 ? uint64_t(t.seedIndex) : uint64_t(s->index);
    s->req.id = int64_t(s->index) + 1;
    s->req.state.hasPerReqCache = stateful_;
    s->maxOutput = t.maxOutput;
    RequestOutcome o;
    o.name = t.name;
    outcomes_.push_back(o);
    ++counters_.requestsTotal;
    if (t.followUpOf >= 0 && size_t(t.followUpOf) < i) {
      s->followUpTokens = t.prompt;
      seqs_[base + size_t(t.followUpOf)]->followers.push_back(s.get());
    } else {
      s->req.tokens = t.prompt;
      s->req.numPromptTokens = int64_t(t.prompt.size());
      s->req.responseEnd = s->req.numPromptTokens + s->maxOutput;
    }
    seqs_.push_back(std::move(s));
  }
  for (size_t i = base; i < seqs_.size(); ++i) {
    Seq *s = seqs_[i].get();
    const TraceRequest &t = trace.requests[i - base];
    if (t.followUpOf >= 0 && size_t(t.followUpOf) < i - base)
      continue; // queued when the turn before it ends
    if (refuseIfTooLong(*s))
      continue;
    waiting_.push_back(s);
  }
  publishSnapshot();
}

void Engine::refuse(Seq &s, const std::string &reason) {
  // The request and every turn that follows it, which can never start.
  std::vector<Seq *> stack{&s};
  std::string why = reason;
  while (!stack.empty()) {
    Seq *r = stack.back();
    stack.pop_back();
    if (r->done)
      continue;
    RequestOutcome &o = outcomes_[r->index];
    o.refused = true;
    o.reason = r == &s ? why : "the turn it follows was refused";
    if (o.promptTokens == 0)
      o.promptTokens = r->req.numTokens();
    r->done = true;
    ++counters_.requestsRefused;
    stack.insert(stack.end(), r->followers.begin(), r->followers.end());
  }
}

bool Engine::refuseIfTooLong(Seq &s) {
  int64_t need = s.req.numTokens() + s.maxOutput + options_.numSpec;
  if (need <= tokenLimit_)
    return false;
  refuse(s, "needs " + std::to_string(need) +
                " tokens (prompt + output + drafts); the model holds at most " +
                std::to_string(tokenLimit_));
  return true;
}

int32_t Engine::stateId(const Seq &s) const {
  if (!stateful_ || !s.req.state.group.valid())
    return -1;
  return cache_->slotKernelId(s.req.state.group);
}

int64_t Engine::acceptedDrafts(const Seq &s) const {
  uint64_t x = splitmix(options_.seed ^ splitmix(s.seedIndex << 24 ^
                                                 uint64_t(s.decodeSteps)));
  int64_t a = 0;
  while (a < options_.numSpec) {
    x = splitmix(x);
    if (int64_t(x % 100) >= options_.acceptPercent)
      break;
    ++a;
  }
  return a;
}

Status Engine::preempt(Seq &s) {
  Status d = cache_->deallocate(s.req);
  if (!d.ok())
    return d;
  s.prefillDone = false;
  s.tier.restore.reset(); // admitted this pass and not loaded: looked up again
  s.tier.tried = false;
  s.tier.retries = 0;
  ++outcomes_[s.index].preemptions;
  ++counters_.preemptions;
  waiting_.push_front(&s);
  return Status::success();
}

Status Engine::moveBoundaryIfNeeded() {
  if (!options_.elasticBoundary && options_.boundaryChurn == 0)
    return Status::success();
  const PoolBoundaryGeometry &g = *cache_->boundary();
  StateGroupPool *groups = cache_->groups();
  PageUnitCheckpointStore *store = cache_->pagedStore();
  if (!groups || (store && !store->atRest()))
    return Status::success(); // checkpoint copies pending: next pass
  int64_t numGroups = groups->numGroups(), freeGroups = groups->numFree();
  int64_t freeBlocks = cache_->blocks().numFree();
  int64_t numBlocks = cache_->blocks().numBlocks();
  int64_t target = numGroups;
  if (options_.boundaryChurn > 0) {
    if (counters_.steps % options_.boundaryChurn != 0)
      return Status::success();
    bool shrink = (counters_.steps / options_.boundaryChurn) % 2 == 0;
    target = shrink ? numGroups - freeGroups + 1 : maxNumSeqs_;
    target = std::min<int64_t>(std::max<int64_t>(target, 1), g.heldSlots());
    if (!shrink && !groups->enabled())
      target = numGroups; // a disabled pool cannot grow
  } else if (!waiting_.empty() && freeGroups == 0 && numGroups < maxNumSeqs_ &&
      groups->enabled()) {
    // A request waits for a slot: take one slot's rows back if the blocks
    // can spare what the slot covers and what the waiting request needs.
    int64_t lost = std::max<int64_t>(0, numBlocks - g.blocksFor(numGroups + 1));
    int64_t head = ceilDiv(waiting_.front()->req.numTokens(), blockSize_);
    if (freeBlocks >= lost + head)
      target = numGroups + 1;
  } else if (freeGroups > 1 && freeBlocks < int64_t(running_.size()) + options_.numSpec) {
    // Blocks run short while slots idle: give the idle slots' rows to the
    // blocks (one slot stays spare for the next admission), if that buys
    // blocks at all (the artifact caps them at its rider regions).
    int64_t shrunk = std::max<int64_t>(numGroups - freeGroups + 1, int64_t(running_.size()));
    if (g.blocksFor(shrunk) > numBlocks)
      target = shrunk;
  }
  if (target == numGroups)
    return Status::success();
  std::vector<Request *> live;
  for (Seq *s : running_)
    live.push_back(&s->req);
  auto move = cache_->moveBoundary(target, live);
  if (!move.ok())
    return move.error();
  if (!move->blockCopyIds.empty()) {
    Status c = launch(*blockCopy_, move->blockCopyIds);
    if (!c.ok())
      return c;
    counters_.blockCopies += int64_t(move->blockCopyIds.size() / 2);
  }
  if (!move->slotCopyIds.empty()) {
    Status c = launch(*slotCopy_, move->slotCopyIds);
    if (!c.ok())
      return c;
    counters_.slotCopies += int64_t(move->slotCopyIds.size() / 2);
  }
  if (move->numGroups != numGroups)
    ++counters_.boundaryMoves;
  return Status::success();
}

Result<Engine::Batch> Engine::schedule() {
  cache_->completePreviousStateBatch();
  Status moved = moveBoundaryIfNeeded();
  if (!moved.ok())
    return moved.error();
  Batch b;
  int64_t budget = options_.maxBatchedTokens, batched = 0;
  int64_t hbs = cache_->hashBlockSize();
  // Phase 1: running partial prefills.
  for (Seq *s : running_) {
    if (s->prefillDone)
      continue;
    int64_t start = s->req.numCachedTokens;
    int64_t chunk = CacheManager::chunkedPrefillSize(s->req.numTokens() - start,
                                                     budget, batched, blockSize_);
    if (chunk > 0)
      chunk = tierCut(*s, start, cache_->finalizePrefillChunk(s->req, start, chunk));
    if (chunk <= 0)
      break;
    b.items.push_back({s, start, chunk});
    budget -= chunk;
    batched += chunk;
  }
  // Phase 2: admissions in arrival order.
  while (!waiting_.empty() && int64_t(running_.size()) < maxNumSeqs_ && budget > 0) {
    Seq *s = waiting_.front();
    int64_t hit = cache_->canAllocate(s->req);
    if (hit < 0)
      break;
    int64_t cached = hit * hbs;
    // The tier (specs/tier.md): the objects after the HBM hit. While their
    // fetch is in flight the queue waits (arrival order), unless nothing
    // else would run: then the pass waits for it, up to its deadline.
    int64_t tierTo = cached;
    if (tier_) {
      bool idle = running_.empty() && b.items.empty() && b.tierRestores.empty();
      auto t = tier_->admit(s->tier, s->req, cached, idle, *cache_, counters_);
      if (!t.ok())
        return t.error();
      if (*t < 0)
        break;
      tierTo = *t;
    }
    int64_t chunk = CacheManager::chunkedPrefillSize(s->req.numTokens() - tierTo,
                                                     budget, batched, blockSize_);
    if (chunk <= 0)
      break;
    Status a = cache_->allocate(s->req, hit);
    if (!a.ok())
      return a.error();
    s->tier.tried = false;
    s->tier.retries = 0;
    if (tier_) // what the hit covers was stored by whoever computed it
      tier_->admitted(s->tier, cached);
    RequestOutcome &o = outcomes_[s->index];
    o.hitTokens = cached;
    if (o.promptTokens == 0) { // first admission (not a recompute)
      o.promptTokens = s->req.numTokens();
      counters_.promptTokens += o.promptTokens;
    }
    counters_.prefixQueryTokens += s->req.numTokens();
    counters_.prefixHitTokens += cached;
    waiting_.pop_front();
    running_.push_back(s);
    if (s->tier.restore) {
      // Loaded in execute, after the maintenance ops (a queued restore of
      // the HBM hit's checkpoint must not land over the tier's); the
      // request forwards from the pass after.
      b.tierRestores.push_back(s);
      continue;
    }
    chunk = tierCut(*s, cached, cache_->finalizePrefillChunk(s->req, cached, chunk));
    if (chunk <= 0)
      continue;
    b.items.push_back({s, cached, chunk});
    budget -= chunk;
    batched += chunk;
  }
  if (!b.items.empty()) {
    b.prefill = true;
    return b;
  }
  // A pass that admitted tier loads does not decode: a decode short of
  // blocks would preempt the request just admitted (the latest) and throw
  // its fetched objects away.
  if (!b.tierRestores.empty())
    return b;
  // Decode: every running request, the latest admitted preempted first
  // when blocks run out.
  for (size_t i = 0; i < running_.size(); ++i) {
    Seq *s = running_[i];
    if (!s->prefillDone)
      continue;
    int64_t need = s->req.numTokens() + options_.numSpec;
    bool self = false;
    while (!cache_->canAppend(s->req, need)) {
      Seq *victim = running_.back();
      running_.pop_back();
      Status p = preempt(*victim);
      if (!p.ok())
        return p.error();
      if (victim == s) {
        self = true;
        break;
      }
    }
    if (self)
      break;
    Status a = cache_->appendSlots(s->req, need);
    if (!a.ok())
      return a.error();
    b.items.push_back({s, s->req.numTokens() - 1, 1});
  }
  return b;
}

Status Engine::forkCopy(Seq &s) {
  GroupId src = s.req.state.forkSource, dst = s.req.state.group;
  if (!src.valid())
    return Status::success();
  // The forward after a fork reads the source and writes the new group:
  // the generated group copy moves the state over, then the request owns
  // its group alone (the source stays pinned until the pins drain).
  for (const KernelInfo *k : groupCopies_) {
    Status st = launch(*k, {cache_->slotKernelId(src), cache_->slotKernelId(dst)});
    if (!st.ok())
      return st;
  }
  s.req.state.forkSource = GroupId();
  ++counters_.forkCopies;
  return Status::success();
}

Status Engine::launch(const KernelInfo &k, const std::vector<int32_t> &ids) {
  auto t0 = Clock::now();
  Status s = launcher_->run(k, ids);
  deviceUs_ += micros(Clock::now() - t0);
  return s;
}

Result<int64_t> Engine::forward(Seq &s, int64_t start, int64_t count, bool extend,
                                int64_t rejected) {
  auto t0 = Clock::now();
  Result<int64_t> tok = int64_t(0);
  if (options_.runModel) {
    tok = model_->forward(s.req, stateId(s), start, count, extend, rejected);
  } else {
    // No model (benchmarks of the host side): a token from the last one.
    int64_t t = s.req.tokens[size_t(start + (extend ? 0 : count - 1))];
    for (int64_t i = 0; i < (extend ? count : 1); ++i) {
      t = int64_t(splitmix(uint64_t(t) ^ uint64_t(start + i)) % uint64_t(kModelVocab));
      if (extend && i + 1 < count)
        s.req.tokens.push_back(t);
    }
    tok = t;
  }
  deviceUs_ += micros(Clock::now() - t0);
  return tok;
}

Status Engine::runMaintenance() {
  auto ops = cache_->takeStateMaintenanceOps();
  for (const CheckpointStoreOp &st : ops.stores) {
    std::vector<int32_t> ids{cache_->slotKernelId(GroupId(st.srcSlot.value))};
    for (BlockId u : st.unitIds)
      ids.push_back(u.value);
    Status s = launch(*imageStore_, ids);
    if (!s.ok())
      return s;
    ++counters_.imageStores;
  }
  for (const CheckpointRestoreOp &rs : ops.restores) {
    std::vector<int32_t> ids{cache_->slotKernelId(GroupId(rs.dstSlot.value))};
    for (BlockId u : rs.unitIds)
      ids.push_back(u.value);
    Status s = launch(*imageRestore_, ids);
    if (!s.ok())
      return s;
    ++counters_.imageRestores;
  }
  return Status::success();
}

Status Engine::finishSeq(Seq &s) {
  RequestOutcome &o = outcomes_[s.index];
  if (options_.runModel) {
    auto t0 = Clock::now();
    auto sum = model_->stateChecksum(s.req, stateId(s), s.req.numTokens() - 1);
    deviceUs_ += micros(Clock::now() - t0);
    if (!sum.ok())
      return sum.error();
    o.stateChecksum = *sum;
  }
  o.outputChecksum = tokensChecksum(o.output);
  o.outputTokens = int64_t(o.output.size());
  o.finished = true;
  Status d = cache_->deallocate(s.req);
  if (!d.ok())
    return d;
  s.done = true;
  ++counters_.requestsFinished;
  running_.erase(std::find(running_.begin(), running_.end(), &s));
  for (Seq *f : s.followers) {
    if (f->done)
      continue;
    f->req.tokens = s.req.tokens;
    f->req.tokens.insert(f->req.tokens.end(), f->followUpTokens.begin(),
                         f->followUpTokens.end());
    f->req.numPromptTokens = f->req.numTokens();
    f->req.responseEnd = f->req.numPromptTokens + f->maxOutput;
    if (refuseIfTooLong(*f))
      continue;
    waiting_.push_back(f);
  }
  return Status::success();
}

Status Engine::execute(Batch &b) {
  Status m = runMaintenance();
  if (!m.ok())
    return m;
  for (Seq *s : b.tierRestores) {
    if (!s->tier.restore) // preempted in the same pass
      continue;
    Status t = tierRestore(*s);
    if (!t.ok())
      return t;
  }
  for (auto &it : b.items) {
    Status f = forkCopy(*it.seq);
    if (!f.ok())
      return f;
  }
  int64_t k = options_.numSpec;
  bool forks = cache_->groups() && cache_->groups()->transfer().forks();
  std::vector<Seq *> finished;
  for (auto &it : b.items) {
    Seq &s = *it.seq;
    RequestOutcome &o = outcomes_[s.index];
    if (b.prefill) {
      auto tok = forward(s, it.start, it.count, false, 0);
      if (!tok.ok())
        return tok.error();
      counters_.forwardTokens += it.count;
      Status h = cache_->hashBlocks(s.req, it.count);
      if (!h.ok())
        return h;
      Status c = s.req.setNumCachedTokens(it.start + it.count);
      if (!c.ok())
        return c;
      Status f = forkCopy(s);
      if (!f.ok())
        return f;
      if (tier_) {
        Status t = tier_->save(s.tier, s.req, it.start + it.count, true, *cache_, counters_);
        if (!t.ok())
          return t;
      }
      if (it.start + it.count < s.req.numTokens())
        continue;
      s.prefillDone = true;
      s.req.tokens.push_back(*tok);
      o.output.push_back(*tok);
      ++counters_.generatedTokens;
      if (int64_t(o.output.size()) >= s.maxOutput)
        finished.push_back(&s);
      continue;
    }
    int64_t remaining = s.maxOutput - int64_t(o.output.size());
    int64_t a = std::min(acceptedDrafts(s), remaining - 1);
    ++s.decodeSteps;
    counters_.draftsOffered += k;
    counters_.draftsAccepted += a;
    size_t before = s.req.tokens.size();
    auto tok = forward(s, it.start, 1 + a, /*extend=*/true, k - a);
    if (!tok.ok())
      return tok.error();
    counters_.forwardTokens += 1 + a;
    s.req.tokens.push_back(*tok);
    o.output.insert(o.output.end(), s.req.tokens.begin() + int64_t(before),
                    s.req.tokens.end());
    counters_.generatedTokens += int64_t(s.req.tokens.size() - before);
    bool done = int64_t(o.output.size()) >= s.maxOutput;
    int64_t committed = s.req.numTokens() - 1;
    // The checkpoint room of the next forward: none when finished, none
    // under speculation for a class that forks (its successor gets 1 +
    // accepted tokens, unknowable now), else the one token it forwards.
    int64_t room = done ? 0 : (k > 0 && forks ? 0 : 1);
    Status h = cache_->hashDecodeBlocks(s.req, committed, room);
    if (!h.ok())
      return h;
    Status c = s.req.setNumCachedTokens(committed);
    if (!c.ok())
      return c;
    Status f = forkCopy(s);
    if (!f.ok())
      return f;
    if (tier_) {
      // Decode: the state holds the committed tokens only without drafts.
      Status t = tier_->save(s.tier, s.req, committed, k == 0, *cache_, counters_);
      if (!t.ok())
        return t;
    }
    if (done)
      finished.push_back(&s);
  }
  for (Seq *s : finished) {
    Status f = finishSeq(*s);
    if (!f.ok())
      return f;
  }
  return Status::success();
}

Result<bool> Engine::step() {
  if (waiting_.empty() && running_.empty())
    return false;
  auto t0 = Clock::now();
  auto scheduled = schedule();
  if (!scheduled.ok())
    return scheduled.error();
  Batch batch = scheduled.take();
  Batch *b = &batch;
  bool loads = !b->tierRestores.empty();
  if (b->items.empty() && !loads && !running_.empty()) {
    // Running requests always make progress (a decode can preempt, a
    // window class's reserve backs its forwards): a run of empty passes
    // means the cache manager's books disagree with its pools.
    static constexpr int64_t kMaxIdlePasses = 10000;
    if (++idlePasses_ > kMaxIdlePasses)
      return Error{ErrorKind::Internal,
                   "the scheduler ran nothing for " + std::to_string(kMaxIdlePasses) +
                       " passes with " + std::to_string(running_.size()) +
                       " running requests (the cache manager cannot serve "
                       "their next forward)"};
  } else {
    idlePasses_ = 0;
  }
  if (b->items.empty() && !loads) {
    if (running_.empty() && !waiting_.empty()) {
      // Nothing runs and the head cannot be admitted: after the pins of
      // earlier batches drained (two passes), it never will be.
      static constexpr int kDrainPasses = 3;
      int idle = 0;
      while (idle < kDrainPasses && cache_->canAllocate(waiting_.front()->req) < 0) {
        cache_->completePreviousStateBatch();
        ++idle;
      }
      if (idle == kDrainPasses) {
        Seq *s = waiting_.front();
        waiting_.pop_front();
        refuse(*s, "cannot be admitted into an idle engine (blocks or state "
                   "groups the artifact does not have)");
      }
    }
    publishSnapshot();
    return true;
  }
  deviceUs_ = 0;
  Status e = execute(*b);
  if (!e.ok())
    return e.error();
  if (!b->items.empty()) { // a pass of tier loads only is not a step
    ++counters_.steps;
    ++(b->prefill ? counters_.prefillSteps : counters_.decodeSteps);
  }
  // The host's share of the step: scheduling and the cache's work, not
  // the model's forwards or the kernels' byte moves.
  overheadUs_.push_back(micros(Clock::now() - t0) - deviceUs_);
  lastStep_ = {b->prefill, int64_t(b->items.size())};
  publishSnapshot();
  return true;
}

Status Engine::run(const std::function<void()> &progress) {
  for (;;) {
    auto more = step();
    if (!more.ok())
      return more.error();
    if (progress)
      progress();
    if (!*more)
      break;
  }
  Status d = drainTier();
  publishSnapshot();
  return d;
}

void Engine::publishSnapshot() {
  counters_.requestsRunning = int64_t(running_.size());
  counters_.requestsWaiting = int64_t(waiting_.size());
  BlockPool &bp = cache_->blocks();
  counters_.blocksTotal = bp.numBlocks();
  counters_.blocksFree = bp.numFree();
  counters_.blocksUsed = bp.numUsed();
  counters_.blocksIndexed = bp.numIndexed();
  if (StateGroupPool *g = cache_->groups()) {
    counters_.groupsTotal = g->numGroups();
    counters_.groupsFree = g->numFree();
  }
  counters_.stats = cache_->stats();
  counters_.funnel = cache_->funnel();
  if (tier_)
    tier_->publishCounters(counters_);
  std::lock_guard<std::mutex> lock(snapMutex_);
  published_ = counters_;
}

EngineSnapshot Engine::snapshot() const {
  std::lock_guard<std::mutex> lock(snapMutex_);
  return published_;
}

// --- the offload tier (specs/tier.md; the session: TierSession.cpp) ----------

Status Engine::tierRestore(Seq &s) {
  auto loaded = tier_->restore(s.tier, s.req, *cache_, *device_, counters_);
  if (!loaded.ok())
    return loaded.error();
  std::optional<TierLoad> load = loaded.take();
  if (!load) // no blocks to land in: recompute
    return Status::success();
  Status f = forkCopy(s);
  if (!f.ok())
    return f;
  tier_->restored(s.tier, *load, counters_);
  outcomes_[s.index].hitTokens = load->to;
  return Status::success();
}

int64_t Engine::tierCut(const Seq &s, int64_t start, int64_t chunk) const {
  if (!tier_)
    return chunk;
  return tier_->cut(s.tier, s.req, start, chunk, *cache_);
}

int64_t Engine::tierChunkTokens() const { return tier_ ? tier_->chunkTokens() : 0; }

Status Engine::drainTier() {
  if (!tier_)
    return Status::success();
  return tier_->drain();
}

TierLatencies Engine::tierLatencyMicros() const {
  if (!tier_)
    return {};
  return tier_->latencyMicros();
}

double ceilingHitRate(const Trace &trace, const std::vector<RequestOutcome> &out,
                      int64_t hbs) {
  if (hbs < 1 || out.size() != trace.requests.size())
    return 0;
  std::unordered_set<BlockHash> seen;
  std::vector<std::vector<int64_t>> full(trace.requests.size());
  int64_t admitted = 0, hit = 0;
  for (size_t i = 0; i < trace.requests.size(); ++i) {
    const TraceRequest &t = trace.requests[i];
    if (out[i].refused || !out[i].finished)
      continue;
    std::vector<int64_t> prompt;
    if (t.followUpOf >= 0 && size_t(t.followUpOf) < i)
      prompt = full[size_t(t.followUpOf)];
    prompt.insert(prompt.end(), t.prompt.begin(), t.prompt.end());
    int64_t n = int64_t(prompt.size());
    int64_t candidates = std::max<int64_t>(0, ceilDiv(n, hbs) - 1);
    std::optional<BlockHash> parent;
    int64_t blocks = 0;
    bool hitting = true;
    full[i] = prompt;
    full[i].insert(full[i].end(), out[i].output.begin(), out[i].output.end());
    int64_t nFull = int64_t(full[i].size()) / hbs;
    for (int64_t b = 0; b < nFull; ++b) {
      // Prefix equality only: any chain gives the same ceiling.
      BlockHash h = hashBlock(HashScheme::Xxh3, parent, full[i].data() + b * hbs, size_t(hbs));
      if (hitting && b < candidates && seen.count(h))
        ++blocks;
      else
        hitting = false;
      parent = h;
      seen.insert(h);
    }
    // The inserts above ran after this request's own lookups (a request
    // never hits itself): each lookup precedes the insert of its block.
    admitted += n;
    hit += blocks * hbs;
  }
  return admitted > 0 ? double(hit) / double(admitted) : 0;
}

} // namespace serve
} // namespace poolrt
