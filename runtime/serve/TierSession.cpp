//===- TierSession.cpp - One engine's offload tier session ----------------===//

#include "TierSession.h"
#include "poolrt/Checked.h"

#include "poolrt/BlockHash.h"

#include <xxhash.h>

#include <algorithm>

namespace poolrt {
namespace serve {

namespace {

using Clock = std::chrono::steady_clock;

} // namespace

TierSession::~TierSession() {
  transfer_.reset(); // the thread stops before the backend goes
  backend_.reset();
  device_.reset();
}

void TierSession::stopTransfer() { transfer_.reset(); }

Result<std::unique_ptr<TierSession>>
TierSession::create(const SolvedLayout &L, Device &device, KernelLauncher &launcher,
                    DevicePtr arenaBase, const CacheManager &cache, int64_t blockSize,
                    bool stateful, const ServeOptions &options) {
  std::unique_ptr<TierSession> s(new TierSession());
  s->blockSize_ = blockSize;
  s->loadDeadlineMs_ = options.tierLoadDeadlineMs;
  s->drainTimeoutMs_ = options.tierDrainTimeoutMs;
  auto geo = tierGeometryOf(L);
  if (!geo.ok())
    return geo.error();
  s->geo_ = *geo;
  int64_t bs = blockSize;
  // Objects of 256 tokens (a whole block) by default: the ladder's 8,192
  // stored nothing for the prompts most traffic has, and a stateful
  // object's checkpoint comes from the forward that ends on its boundary
  // (cut), wherever the cache's own checkpoints are.
  int64_t chunk = options.tierChunkTokens > 0 ? options.tierChunkTokens : alignUp(256, bs);
  if (options.tierChunkTokens <= 0 && stateful && cache.interval() > 0) {
    // The default must divide the interval (below): the smallest multiple
    // of the block of at least 256 tokens that does, else the interval.
    int64_t blocks = cache.interval() / bs, k = chunk / bs;
    while (k < blocks && blocks % k != 0)
      ++k;
    chunk = std::min(k, blocks) * bs;
  }
  if (chunk % bs != 0)
    return Error::invalid("tier: the object size of " + std::to_string(chunk) +
                          " tokens is not a multiple of the block size " +
                          std::to_string(bs));
  if (stateful && cache.interval() > 0 && chunk % cache.interval() != 0 &&
      cache.interval() % chunk != 0)
    return Error::invalid("tier: the object size of " + std::to_string(chunk) +
                          " tokens and the checkpoint interval of " +
                          std::to_string(cache.interval()) +
                          " do not divide one another (a stateful object ends at a "
                          "checkpoint boundary)");
  if (chunk > (int64_t(1) << 20))
    return Error::invalid("tier: objects of " + std::to_string(chunk) +
                          " tokens (at most 1,048,576)");
  if (stateful && !s->geo_.stateful())
    return Error::invalid("tier: the model's state cannot be checkpointed (a STATE "
                          "class with transfer none): a tier hit could not restore it");
  s->chunk_ = chunk;
  // Objects of another namespace (weights), chunk size or hash scheme
  // are another space: all go into the fingerprint the keys and headers
  // carry (the keys are prefix hashes: under another scheme the same
  // bytes would name another prefix).
  std::string space = options.tierNamespace + "/" + std::to_string(chunk / bs) + "/" +
                      hashSchemeName(cache.hashScheme());
  s->geo_.layoutFingerprint = XXH64(space.data(), space.size(), L.layoutFingerprint);
  auto td = TierDevice::create(L, device, launcher, arenaBase, s->geo_, chunk / bs);
  if (!td.ok())
    return td.error();
  s->device_ = td.take();
  // The host level keeps its objects where the device loads them at
  // link speed (page-locked on a GPU).
  if (options.sharedTier) {
    s->backend_ = options.sharedTier;
  } else {
    auto t = openTier(options.tier, hostMemoryOf(device));
    if (!t.ok())
      return t.error();
    s->backend_ = t.take();
  }
  // Stores queued and not yet written: at most 64 objects' bytes.
  int64_t objBytes = s->device_->objectBytes();
  s->transfer_ = std::make_unique<TierTransfer>(*s->backend_, 64 * objBytes);
  return s;
}

Result<int64_t> TierSession::admit(TierSeqState &t, const Request &r, int64_t cached,
                                   bool mayWait, const CacheManager &cache,
                                   EngineSnapshot &counters) {
  int64_t bs = blockSize_, chunk = chunk_;
  // Never the last block: a prefill forwards at least one token.
  int64_t limit = (r.numTokens() - 1) / bs * bs;
  // The chained hashes up to the limit, once (cached on the request).
  std::vector<BlockHash> hashes;
  auto keyAt = [&](int64_t boundary) {
    if (hashes.empty())
      hashes = cache.prefixHashes(r, limit / bs);
    return TierKey{geo_.layoutFingerprint, hashes[size_t(boundary / bs - 1)]};
  };
  if (t.restore) {
    // Loaded in an earlier pass that could not admit the request: the HBM
    // hit may have grown since; keep only what lies past it.
    TierSeqState::TierRestore &R = *t.restore;
    while (!R.objects.empty() && R.objects.front().boundary <= cached)
      R.objects.erase(R.objects.begin());
    // The objects must start at or before the hit (it may have shrunk:
    // its blocks or checkpoint evicted), or blocks between would be left
    // unwritten and published.
    if (R.to <= cached || R.objects.empty()) {
      t.restore.reset();
      return cached;
    }
    if (R.objects.front().boundary - chunk_ > cached) {
      t.restore.reset();
      return lookUpAgain(t, r, cached, mayWait, cache, counters);
    }
    R.from = cached;
    return R.to;
  }
  if (t.ticket) {
    if (mayWait)
      (void)transfer_->wait(t.ticket, t.deadline);
    auto f = transfer_->take(t.ticket);
    if (!f) {
      if (Clock::now() < t.deadline)
        return int64_t(-1); // in flight: the queue waits
      transfer_->cancel(t.ticket); // late: recompute, drop what comes
      t.ticket = 0;
      ++counters.tierLoadsLate;
      return cached;
    }
    t.ticket = 0;
    TierSeqState::TierRestore R;
    R.from = cached;
    int64_t cb = chunk / bs;
    for (size_t i = 0; i < f->results.size() && i < t.boundaries.size(); ++i) {
      int64_t boundary = t.boundaries[i];
      TierGet &g = f->results[i];
      if (g.fault == TierFault::NotFound)
        break;
      if (!g.ok()) {
        ++counters.tierLoadsFailed;
        break;
      }
      TierKey key = keyAt(boundary);
      TierObjectView view;
      TierResult d = decodeTierObject(g.bytes, key, geo_, cb, view, g.verified);
      if (!d.ok()) {
        // Never restored; removed (off the step thread) so no later
        // lookup finds it.
        ++counters.tierObjectsRefused;
        transfer_->remove(key.text());
        break;
      }
      if (boundary <= cached)
        continue; // HBM caught up meanwhile
      bool checkpointed = !view.checkpoint.empty();
      R.objects.push_back({boundary, std::move(g.bytes), view});
      // A stateful hit ends at a boundary whose checkpoint is stored.
      if (!geo_.stateful() || checkpointed)
        R.to = boundary;
    }
    // Objects past the last checkpointed one are not loaded, but they say
    // where a checkpoint is wanted: this request's forward is cut there
    // (tierCut), and its save stores that boundary with its state.
    if (!R.objects.empty() && R.objects.back().boundary > R.to)
      t.demand = R.objects.back().boundary;
    while (!R.objects.empty() && R.objects.back().boundary > R.to)
      R.objects.pop_back();
    if (R.objects.empty() || R.to <= cached)
      return cached; // nothing past the hit
    if (R.objects.front().boundary - chunk > cached)
      return lookUpAgain(t, r, cached, mayWait, cache, counters); // a gap before the objects
    t.restore = std::move(R);
    return t.restore->to;
  }
  if (t.tried)
    return cached;
  t.tried = true;
  int64_t first = (cached / chunk + 1) * chunk;
  if (first > limit)
    return cached;
  ++counters.tierLookups;
  // A local tier (memory, disk) is asked here; a remote one (Redis) only
  // on the transfer thread: the fetch's first key is the lookup, so a dead
  // or silent server makes this request wait, never the step.
  // A store still queued counts as held: the fetch reads its bytes.
  std::string firstKey = keyAt(first).text();
  if (backend_->local() && !transfer_->storing(firstKey)) {
    TierResult held = backend_->contains(firstKey);
    if (!held.ok()) {
      if (held.fault != TierFault::NotFound)
        ++counters.tierLoadsFailed;
      return cached;
    }
  }
  std::vector<std::string> keys;
  t.boundaries.clear();
  for (int64_t b = first; b <= limit; b += chunk) {
    t.boundaries.push_back(b);
    keys.push_back(keyAt(b).text());
  }
  t.ticket = transfer_->fetch(std::move(keys));
  t.deadline = Clock::now() + std::chrono::milliseconds(loadDeadlineMs_);
  if (mayWait)
    return admit(t, r, cached, true, cache, counters);
  return int64_t(-1);
}

Result<int64_t> TierSession::lookUpAgain(TierSeqState &t, const Request &r, int64_t cached,
                                         bool mayWait, const CacheManager &cache,
                                         EngineSnapshot &counters) {
  // The HBM hit shrank while the objects were in flight (its blocks or
  // checkpoint were evicted), so they start past it: blocks between would
  // be left unwritten. Look the tier up again from the hit as it is now,
  // once per admission; after that, recompute.
  if (t.retries >= 1)
    return cached;
  ++t.retries;
  t.tried = false;
  return admit(t, r, cached, mayWait, cache, counters);
}

void TierSession::admitted(TierSeqState &t, int64_t cached) const {
  t.savedTo = std::max(t.savedTo, cached / chunk_ * chunk_);
}

Result<std::optional<TierLoad>> TierSession::restore(TierSeqState &t, Request &r,
                                                     CacheManager &cache, Device &device,
                                                     EngineSnapshot &counters) {
  TierSeqState::TierRestore R = std::move(*t.restore);
  t.restore.reset();
  int64_t bs = blockSize_, cb = chunk_ / bs;
  if (!cache.canAppend(r, R.to)) {
    ++counters.tierLoadsFailed; // no blocks to land in: recompute
    return std::optional<TierLoad>();
  }
  Status a = cache.appendSlots(r, R.to);
  if (!a.ok())
    return a.error();
  auto t0 = Clock::now();
  std::vector<TierDevice::KvLoad> loads;
  for (const TierSeqState::TierRestore::Object &o : R.objects) {
    int64_t lastBlock = o.boundary / bs, firstBlock = lastBlock - cb;
    TierDevice::KvLoad l;
    l.object = &o.view;
    l.skip = std::max<int64_t>(0, R.from / bs - firstBlock);
    for (int64_t j = firstBlock + l.skip; j < lastBlock; ++j)
      l.blockIds.push_back(r.blockTable[size_t(j)].value);
    loads.push_back(std::move(l));
    counters.tierBytesLoaded += int64_t(o.bytes.size());
  }
  if (Status k = device_->loadKv(loads); !k.ok())
    return k.error();
  if (geo_.stateful()) {
    // The checkpoint of the last boundary, into the request's own group:
    // the HBM hit's fork source (if any) is not needed any more.
    Status k = device_->loadCheckpoint(R.objects.back().view, cache.slotKernelId(r.state.group));
    if (!k.ok())
      return k.error();
    r.state.forkSource = GroupId();
  }
  if (Status y = device.synchronize(); !y.ok())
    return y.error();
  sampleLatency(restoreMicros_, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  Status c = r.setNumCachedTokens(R.to);
  if (!c.ok())
    return c.error();
  Status h = cache.hashBlocks(r, R.to - R.from, R.from);
  if (!h.ok())
    return h.error();
  return std::optional<TierLoad>(TierLoad{R.from, R.to});
}

void TierSession::restored(TierSeqState &t, const TierLoad &load,
                           EngineSnapshot &counters) const {
  counters.tierHitTokens += load.to - load.from;
  t.savedTo = std::max(t.savedTo, load.to);
}

Status TierSession::save(TierSeqState &t, const Request &r, int64_t end, bool stateAtEnd,
                         CacheManager &cache, EngineSnapshot &counters) {
  int64_t bs = blockSize_, chunk = chunk_, cb = chunk / bs;
  int64_t next = (t.savedTo / chunk + 1) * chunk;
  for (int64_t b = next; b <= end; b += chunk) {
    t.savedTo = b;
    // The chunks of one save carry the KV; only the one ending where this
    // forward ended carries the checkpoint (the state of that boundary).
    bool withState = geo_.stateful() && stateAtEnd && b == end;
    std::vector<int32_t> ids;
    for (int64_t j = b / bs - cb; j < b / bs; ++j)
      ids.push_back(r.blockTable[size_t(j)].value);
    std::vector<BlockHash> h = cache.prefixHashes(r, b / bs);
    TierKey key{geo_.layoutFingerprint, h.back()};
    auto obj = device_->save(key, ids, withState ? cache.slotKernelId(r.state.group) : -1);
    if (!obj.ok())
      return obj.error();
    if (transfer_->store(key.text(), obj.take(), !withState))
      ++counters.tierStoresQueued;
    else
      ++counters.tierStoresRefused;
  }
  return Status::success();
}

int64_t TierSession::cut(const TierSeqState &t, const Request &r, int64_t start,
                         int64_t chunk, CacheManager &cache) const {
  // A stateful object is saved only where a forward ends: end one at the
  // last boundary a later hit can reach (never the prompt's last block),
  // so the tail up to it is stored with its checkpoint.
  if (!geo_.stateful() || chunk <= 0)
    return chunk;
  int64_t last = (r.numTokens() - 1) / chunk_ * chunk_;
  if (t.demand > start && t.demand < start + chunk)
    last = t.demand; // the furthest object found without a checkpoint
  if (last <= start || last >= start + chunk)
    return chunk;
  const StateGroupPool *g = cache.groups();
  if (r.state.forkSource.valid() && g && last - start < g->minForkTokens())
    return chunk; // the forward after a fork must carry its room
  return last - start;
}

void TierSession::publishCounters(EngineSnapshot &counters) const {
  TierTransferCounters t = transfer_->counters(/*latencies=*/false);
  counters.tierStoresDone = t.storesDone;
  counters.tierStoresFailed = t.storesFailed;
  counters.tierBytesStored = t.bytesStored;
}

Status TierSession::drain() {
  return transfer_->drain(std::chrono::milliseconds(drainTimeoutMs_));
}

TierLatencies TierSession::latencyMicros() const {
  TierTransferCounters c = transfer_->counters();
  return {c.fetchMicros, c.storeMicros, restoreMicros_};
}

} // namespace serve
} // namespace poolrt
