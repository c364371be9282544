//===- CacheManager.cpp - Prefix hits, publication, checkpoint ladder -----===//

#include "poolrt/CacheManager.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <unordered_map>

namespace poolrt {

StateClass::~StateClass() = default;

int64_t PagedCheckpointClass::resumableHit(const Request &r, int64_t hit,
                                           const std::vector<BlockHash> &hashes,
                                           bool assume) const {
  if (!applies(r))
    return hit;
  // The rightmost boundary with a READY image (or any, counterfactually);
  // no room test: a copy leaves the owner's state untouched.
  for (int64_t i = std::min<int64_t>(hit, int64_t(hashes.size())) - 1; i >= 0; --i)
    if (assume || store.contains(hashes[size_t(i)]))
      return i + 1;
  return 0;
}

Status PagedCheckpointClass::checkpoint(Request &r, int64_t, BlockHash h) {
  if (!applies(r) || !r.state.group.valid())
    return Status::success();
  store.requestCheckpoint(r.id, h, SlotIndex(r.state.group.value));
  return Status::success();
}

namespace {

/// The state-group pool as a state class (fork / none transfers).
class GroupClass final : public StateClass {
public:
  explicit GroupClass(StateGroupPool &p) : pool(p) {}
  bool applies(const Request &r) const override {
    return pool.applies(r.state);
  }
  double successorRoom() const override { return pool.successorRoom(); }
  int64_t resumableHit(const Request &r, int64_t hit,
                       const std::vector<BlockHash> &hashes,
                       bool assume) const override {
    StateHolder s = r.state;
    s.numTokens = r.numTokens();
    auto got = pool.resumableHit(s, hit, hashes, assume);
    return got.ok() ? *got : 0;
  }
  Status checkpoint(Request &r, int64_t boundary, BlockHash h) override {
    r.state.numTokens = r.numTokens();
    return pool.checkpoint(r.state, boundary, h);
  }

private:
  StateGroupPool &pool;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

Result<std::unique_ptr<CacheManager>>
CacheManager::create(const CacheManagerConfig &c) {
  if (c.blockSize < 1)
    return Error::invalid("block_size must be >= 1, got " + std::to_string(c.blockSize));
  if (c.numBlocks < 1)
    return Error::invalid("a cache manager needs at least one KV block, got " +
                          std::to_string(c.numBlocks));
  if (c.policy.checkpointIntervalTokens < 0)
    return Error::invalid("checkpoint interval must be >= 0 tokens (0 turns "
                          "the ladder off), got " +
                          std::to_string(c.policy.checkpointIntervalTokens));
  std::unique_ptr<CacheManager> m(new CacheManager());
  m->blockSize_ = c.blockSize;
  m->prefixCaching_ = c.policy.prefixCaching;
  if (c.policy.hashScheme != HashScheme::Xxh3 && c.policy.hashScheme != HashScheme::Xxh64)
    return Error::invalid("cache policy: hash scheme " +
                          std::to_string(int(c.policy.hashScheme)) +
                          " is neither xxh3 nor xxh64");
  m->hashScheme_ = c.policy.hashScheme;
  std::optional<int64_t> maxBlocks;
  if (c.boundary) {
    const PoolBoundaryGeometry &g = *c.boundary;
    if (g.envelopeRows < 1 || g.slotRows < 1 || g.planeRows < 1 ||
        g.maxBlocks < 1 || g.slotPositions < g.heldSlots())
      return Error::invalid(
          "boundary geometry needs positive envelope, slot and plane rows, "
          "a positive block capacity and slot_positions >= held slots");
    if (c.numGroups > g.heldSlots() || c.numBlocks > g.blocksFor(c.numGroups))
      return Error::invalid(
          "boundary geometry: " + std::to_string(c.numBlocks) + " blocks of " +
          std::to_string(g.envelopeRows) + " rows and " +
          std::to_string(c.numGroups) + " slots of " +
          std::to_string(g.slotRows) + " rows do not fit " +
          std::to_string(g.planeRows) + " plane rows (capacity " +
          std::to_string(g.maxBlocks) + " blocks)");
    m->boundary_ = g;
    maxBlocks = g.maxBlocks;
  }
  auto blocks = BlockPool::create(c.numBlocks, maxBlocks);
  if (!blocks.ok())
    return blocks.error();
  m->blocks_ = std::make_unique<BlockPool>(blocks.take());
  CacheManager *self = m.get();
  m->blocks_->setOnEvict([self](BlockHash h) {
    ++self->funnel_.blocksEvicted;
    // While the boundary moves, records must keep their (moving) units:
    // the checkpoints are dropped once every move is recorded.
    if (self->deferEvictions_) {
      self->deferredEvictions_.push_back(h);
      return;
    }
    self->dropCheckpointOf(h);
  });
  bool paged = c.pagedCheckpoints.has_value();
  if (paged && c.transfer.kind() != TransferKind::None)
    return Error::invalid("with PAGE-unit checkpoints the state groups are "
                          "plain slots: their transfer must be none");
  auto groups = StateGroupPool::create(c.numGroups, c.transfer, c.blockSize,
                                       c.policy.prefixCaching && c.numGroups > 0);
  if (!groups.ok())
    return groups.error();
  m->groups_ = std::make_unique<StateGroupPool>(groups.take());
  if (paged) {
    m->store_ = std::make_unique<PageUnitCheckpointStore>(*m->blocks_,
                                                          *c.pagedCheckpoints);
    m->pagedClass_ = std::make_unique<PagedCheckpointClass>(
        *m->store_, c.policy.prefixCaching && c.numGroups > 0);
    m->classes_.push_back(m->pagedClass_.get());
  } else {
    m->groupClass_ = std::make_unique<GroupClass>(*m->groups_);
    m->classes_.push_back(m->groupClass_.get());
  }
  int64_t interval = c.policy.checkpointIntervalTokens;
  if (m->groups_->enabled() && interval % c.blockSize != 0) {
    int64_t snapped = interval / c.blockSize * c.blockSize;
    m->snapWarning_ = "checkpoint interval " + std::to_string(interval) +
                      " is not a multiple of the hash block size " +
                      std::to_string(c.blockSize) + ": snapped to " +
                      std::to_string(snapped) + (snapped == 0 ? " (ladder off)" : "");
    interval = snapped;
  }
  m->interval_ = interval;
  if (!c.windowClasses.empty()) {
    if (c.numGroups > 0 || paged || c.boundary)
      return Error::invalid(
          "window classes (sliding or chunked attention) run beside a full "
          "PAGE class only in a stateless model without a row space: this "
          "configuration has " +
          std::string(c.numGroups > 0 ? "state groups" : paged ? "PAGE-unit checkpoints" : "a pool boundary"));
    if (c.windowMarginTokens < 0)
      return Error::invalid("window margin must be >= 0 tokens, got " +
                            std::to_string(c.windowMarginTokens));
    m->windowMargin_ = c.windowMarginTokens;
    m->windows_.reserve(c.windowClasses.size());
    for (const WindowClassConfig &wc : c.windowClasses) {
      std::string what = "window class '" + wc.name + "': ";
      if (!wc.pattern.isWindow() || wc.pattern.tokens < 1)
        return Error::invalid(what + "needs a sliding or chunked pattern of >= 1 token");
      int64_t ring = wc.pattern.ringBlocks(c.windowMarginTokens, c.blockSize);
      if (wc.reserveBlocks <= ring)
        return Error::invalid(what + "a reserve of " + std::to_string(wc.reserveBlocks) +
                              " blocks per request leaves no room past its ring of " +
                              std::to_string(ring) + " blocks");
      if (wc.numBlocks < 0)
        return Error::invalid(what + "negative block count");
      Window w;
      w.cfg = wc;
      if (wc.numBlocks > 0) {
        if (wc.numBlocks < wc.reserveBlocks)
          return Error::invalid(what + std::to_string(wc.numBlocks) +
                                " blocks cannot back one request's reserve of " +
                                std::to_string(wc.reserveBlocks));
        auto own = BlockPool::create(wc.numBlocks);
        if (!own.ok())
          return own.error();
        w.own = std::make_unique<BlockPool>(own.take());
        w.pool = w.own.get();
      } else {
        w.pool = m->blocks_.get();
      }
      m->windows_.push_back(std::move(w));
    }
  }
  return m;
}

BlockHash CacheManager::windowKey(BlockHash h, int64_t i) const {
  // splitmix64 of the full class's hash and the class number: a key no
  // other class (and no full-class hash, barring 64-bit collisions) uses.
  uint64_t x = h ^ (0x9E3779B97F4A7C15ull * uint64_t(i + 1));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x == kNoHash ? x - 1 : x;
}

int64_t CacheManager::windowDebt(const BlockPool *pool) const {
  int64_t debt = 0;
  for (const Window &w : windows_)
    if (w.pool == pool)
      debt += std::max<int64_t>(0, w.reserved - w.physical);
  return debt;
}

int64_t CacheManager::windowHit(const Request &r, int64_t hit) {
  if (windows_.empty() || hit <= 0)
    return hit;
  size_t hbs = size_t(hashBlockSize());
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    w.hitScratch.assign(size_t(hit), kNoBlock);
    w.runScratch.assign(size_t(hit), 0);
    // Only the blocks some hit <= `hit` can need: from the window of the
    // largest candidate down is enough for it, but a smaller candidate
    // needs earlier blocks, so look at every block (one probe each).
    for (int64_t i = 0; i < hit; ++i) {
      BlockId b = w.pool->lookup(windowKey(r.hashCache[size_t(i)], int64_t(c)));
      bool present = b.valid() && w.pool->tokensMatch(b, hbs, r.printCache[size_t(i)]);
      if (present)
        w.hitScratch[size_t(i)] = b;
      w.runScratch[size_t(i)] = present ? (i > 0 ? w.runScratch[size_t(i - 1)] : 0) + 1 : 0;
    }
  }
  for (int64_t k = hit; k > 0; --k) {
    bool ok = true;
    for (const Window &w : windows_)
      if (!w.cfg.pattern.hitResumable(k, w.runScratch[size_t(k - 1)], blockSize_)) {
        ok = false;
        break;
      }
    if (ok)
      return k;
  }
  return 0;
}

void CacheManager::releaseWindowBlock(Window &w, BlockId b) {
  (void)w.pool->free(b);
  if (!w.pool->isUsed(b))
    --w.physical;
}

void CacheManager::releaseWindows(Request &r) {
  for (size_t c = 0; c < r.windowTables.size() && c < windows_.size(); ++c) {
    Window &w = windows_[c];
    std::vector<BlockId> &t = r.windowTables[c];
    for (auto it = t.rbegin(); it != t.rend(); ++it)
      if (it->valid())
        releaseWindowBlock(w, *it);
    if (r.windowsReserved)
      w.reserved -= w.cfg.reserveBlocks;
  }
  r.windowTables.clear();
  r.windowsReserved = false;
}

Status CacheManager::claimWindowHits(Request &r, int64_t numCached) {
  r.windowTables.assign(windows_.size(), {});
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    w.reserved += w.cfg.reserveBlocks;
  }
  r.windowsReserved = true;
  size_t hbs = size_t(hashBlockSize());
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    std::vector<BlockId> &t = r.windowTables[c];
    t.assign(size_t(numCached), kNoBlock);
    int64_t from = w.cfg.pattern.keptFrom(numCached * blockSize_, 0, blockSize_);
    for (int64_t i = from; i < numCached; ++i) {
      BlockHash key = windowKey(r.hashCache[size_t(i)], int64_t(c));
      BlockId b = size_t(i) < w.hitScratch.size() ? w.hitScratch[size_t(i)] : kNoBlock;
      if (!w.pool->indexedAs(b, key)) {
        b = w.pool->lookup(key);
        ensurePrints(r, numCached);
        if (!b.valid() || !w.pool->tokensMatch(b, hbs, r.printCache[size_t(i)]))
          return Error{ErrorKind::State,
                       "allocate: block " + std::to_string(i) + " of window class '" +
                           w.cfg.name + "' is not in its index: a hit of " +
                           std::to_string(numCached) +
                           " blocks cannot resume it (ask can_allocate)"};
      }
      bool wasUsed = w.pool->isUsed(b);
      Status s = w.pool->claim(b);
      if (!s.ok())
        return s;
      if (!wasUsed)
        ++w.physical;
      t[size_t(i)] = b;
    }
  }
  return Status::success();
}

int64_t CacheManager::windowForwardLimit(const Request &r, int64_t end) const {
  if (windows_.empty() || r.windowTables.size() != windows_.size())
    return end;
  int64_t limit = end;
  for (size_t c = 0; c < windows_.size(); ++c) {
    const Window &w = windows_[c];
    const std::vector<BlockId> &t = r.windowTables[c];
    int64_t from = w.cfg.pattern.keptFrom(r.numCachedTokens, windowMargin_, blockSize_);
    int64_t held = 0;
    for (int64_t j = std::max<int64_t>(0, from); j < int64_t(t.size()); ++j)
      if (t[size_t(j)].valid())
        ++held;
    int64_t blocks = int64_t(t.size()) + w.cfg.reserveBlocks - held;
    limit = std::min(limit, blocks * blockSize_);
  }
  return limit;
}

Status CacheManager::prepareWindows(Request &r, int64_t end) {
  if (windows_.empty())
    return Status::success();
  if (!r.allocated || r.windowTables.size() != windows_.size())
    return Error{ErrorKind::State, "prepare_windows: request " + std::to_string(r.id) +
                                       " is not allocated"};
  if (end < r.numCachedTokens)
    return Error::invalid("prepare_windows: a forward to " + std::to_string(end) +
                          " ends before the computed mark " +
                          std::to_string(r.numCachedTokens));
  if (windowForwardLimit(r, end) < end)
    return Error{ErrorKind::State,
                 "prepare_windows: a forward from " + std::to_string(r.numCachedTokens) +
                     " to " + std::to_string(end) +
                     " needs more blocks than a window class reserves per request; "
                     "cap it at " + std::to_string(windowForwardLimit(r, end))};
  int64_t target = ceilDiv(end, blockSize_);
  // Release first (it can only help), then check, then take.
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    std::vector<BlockId> &t = r.windowTables[c];
    int64_t from = std::min<int64_t>(
        int64_t(t.size()), w.cfg.pattern.keptFrom(r.numCachedTokens, windowMargin_, blockSize_));
    for (int64_t j = from - 1; j >= 0; --j) {
      if (!t[size_t(j)].valid())
        break; // released before, with everything under it
      releaseWindowBlock(w, t[size_t(j)]);
      t[size_t(j)] = kNoBlock;
    }
  }
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    int64_t fresh = std::max<int64_t>(0, target - int64_t(r.windowTables[c].size()));
    // Within the reserve, the pool has them (the admission invariant); a
    // failure here is a bookkeeping bug, reported, not a crash.
    if (!w.pool->hasFree(fresh))
      return Error{ErrorKind::Internal,
                   "prepare_windows: window class '" + w.cfg.name + "' has " +
                       std::to_string(w.pool->numFree()) + " free blocks for " +
                       std::to_string(fresh) + " within its reserve"};
  }
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    std::vector<BlockId> &t = r.windowTables[c];
    while (int64_t(t.size()) < target) {
      auto b = w.pool->pop();
      if (!b.ok())
        return b.error();
      Status s = w.pool->allocate(*b);
      if (!s.ok())
        return s;
      ++w.physical;
      t.push_back(*b);
    }
  }
  return Status::success();
}

void CacheManager::dropCheckpointOf(BlockHash h) {
  // A checkpoint whose last block left the index is unreachable.
  if (store_)
    store_->unindex(h);
  else if (groups_)
    groups_->unindex(h);
}

Status Request::setCacheSalt(std::string salt) {
  if (!hashCache.empty() || !blockTable.empty() || !windowTables.empty() ||
      numHashedTokens > 0)
    return Error{ErrorKind::State,
                 "cache salt: request " + std::to_string(id) +
                     " already has blocks or hashes; set the salt before it "
                     "is admitted"};
  cacheSalt = std::move(salt);
  return Status::success();
}

int64_t CacheManager::ensureHashes(const Request &r, int64_t n) const {
  n = std::max<int64_t>(0, std::min<int64_t>(n, r.numTokens() / blockSize_));
  std::vector<BlockHash> &cache = r.hashCache;
  if (int64_t(cache.size()) < n) {
    size_t have = cache.size();
    cache.resize(size_t(n));
    std::optional<BlockHash> parent = saltRoot(r.cacheSalt);
    if (have > 0)
      parent = cache[have - 1];
    poolrt::hashBlocks(hashScheme_, parent, r.tokens.data() + have * size_t(blockSize_),
                       size_t(blockSize_), size_t(n) - have, cache.data() + have);
  }
  return n;
}

void CacheManager::ensurePrints(const Request &r, int64_t n) const {
  std::vector<uint64_t> &prints = r.printCache;
  if (int64_t(prints.size()) >= n)
    return;
  size_t have = prints.size(), hbs = size_t(hashBlockSize());
  prints.resize(size_t(n));
  std::vector<int32_t> block(hbs);
  for (size_t i = have; i < size_t(n); ++i) {
    const int64_t *t = r.tokens.data() + i * hbs;
    for (size_t k = 0; k < hbs; ++k)
      block[k] = int32_t(t[k]);
    prints[i] = tokenPrint(block.data(), hbs);
  }
}

std::vector<BlockHash> CacheManager::prefixHashes(const Request &r,
                                                  int64_t n) const {
  n = ensureHashes(r, n);
  return std::vector<BlockHash>(r.hashCache.begin(), r.hashCache.begin() + n);
}

std::vector<StateClass *> CacheManager::applicable(const Request &r) const {
  std::vector<StateClass *> out;
  for (StateClass *c : classes_)
    if (c->applies(r))
      out.push_back(c);
  return out;
}

int64_t CacheManager::gatedHit(const Request &r, int64_t compressedHit,
                               const std::vector<BlockHash> &hashes,
                               bool assume) const {
  // Every answer is <= its input, so the rounds terminate; the result is
  // accepted by every class and independent of their order.
  int64_t boundary = compressedHit;
  bool settled = false;
  while (!settled) {
    settled = true;
    for (StateClass *c : classes_) {
      if (!c->applies(r))
        continue;
      int64_t accepted = c->resumableHit(r, boundary, hashes, assume);
      if (accepted != boundary) {
        boundary = accepted;
        settled = false;
        if (boundary == 0)
          return 0;
      }
    }
  }
  return boundary;
}

int64_t CacheManager::checkpointLimit(const Request &r) const {
  if (interval_ <= 0)
    return 0;
  double room = std::numeric_limits<double>::infinity();
  for (StateClass *c : applicable(r))
    room = std::min(room, c->successorRoom());
  if (std::isinf(room))
    return 0;
  int64_t span = r.numPromptTokens - int64_t(room);
  if (span < 0)
    return 0;
  return span / interval_ * interval_;
}

std::vector<StateClass *>
CacheManager::checkpointersAt(const Request &r, int64_t pos,
                              std::optional<int64_t> nextForward,
                              bool aimed) const {
  if (interval_ <= 0 || pos <= 0)
    return {};
  if (aimed) {
    if (pos % interval_ != 0 && pos != r.checkpointDemandPos)
      return {};
  } else if (pos % hashBlockSize() != 0 ||
             pos - r.lastCheckpointPos < interval_) {
    return {}; // the spacing rule, from the last kept checkpoint
  }
  int64_t next = nextForward.value_or(r.numPromptTokens - pos);
  std::vector<StateClass *> out;
  for (StateClass *c : applicable(r))
    if (double(next) >= c->successorRoom())
      out.push_back(c);
  return out;
}

int64_t CacheManager::checkpointCut(Request &r, int64_t start, int64_t end) {
  int64_t rung = 0;
  int64_t limit = checkpointLimit(r);
  if (limit > 0)
    rung = std::min(end, limit) / interval_ * interval_;
  int64_t demand = r.checkpointDemandPos;
  int64_t target = std::max(rung, demand <= end ? demand : 0);
  if (target <= start)
    return 0;
  if (target > rung && target < end)
    ++funnel_.chunksCutForDemand;
  return target;
}

void CacheManager::recordDemand(Request &r, int64_t hit, int64_t compressedHit,
                                const std::vector<BlockHash> &hashes) {
  int64_t wanted =
      hit < compressedHit ? gatedHit(r, compressedHit, hashes, true) : hit;
  r.numWantedHitBlocks = wanted;
  int64_t demand = interval_ > 0 && wanted > hit ? wanted * hashBlockSize() : 0;
  r.checkpointDemandPos = demand;
  if (demand && !r.demandCounted) {
    ++funnel_.demandsRecorded;
    r.demandCounted = true;
  }
}

bool CacheManager::pageUnitsFor(int64_t count,
                                std::optional<BlockHash> protectedHash) const {
  if (store_)
    return store_->hasAvailableUnits(count, protectedHash);
  return blocks_->hasFree(count + windowDebt(blocks_.get()));
}

bool CacheManager::windowReservesFor(int64_t fullBlocks) const {
  // A new request's reserves, on top of what is promised already; the
  // full class's own blocks come out of its pool first when shared.
  for (const Window &w : windows_) {
    int64_t want = windowDebt(w.pool);
    for (const Window &o : windows_)
      if (o.pool == w.pool)
        want += o.cfg.reserveBlocks;
    if (w.pool == blocks_.get())
      want += fullBlocks;
    if (!w.pool->hasFree(want))
      return false;
  }
  return true;
}

PageUnitCheckpointStore::CheckpointOps CacheManager::takeStateMaintenanceOps() {
  if (!store_)
    return {};
  return store_->takeCheckpointOps();
}

int64_t CacheManager::canAllocate(Request &r) {
  Admission a = admission(r);
  return a.admissible ? a.hitBlocks : -1;
}

Admission CacheManager::admission(Request &r) {
  Admission out;
  int64_t len = r.numTokens();
  int64_t needed = ceilDiv(len, blockSize_);
  out.neededBlocks = needed;
  bool stateful = groups_->holdsState(r.state);
  if (stateful && !groups_->hasFree()) {
    out.reason = "state groups";
    return out;
  }
  if (!prefixCaching_) {
    out.admissible = pageUnitsFor(needed, std::nullopt) &&
                     (windows_.empty() || windowReservesFor(needed));
    if (!out.admissible)
      out.reason = "blocks";
    return out;
  }
  int64_t nHash = ceilDiv(len, hashBlockSize());
  // The last hash block is never reused: prefill must forward at least one
  // block to produce logits.
  int64_t candidates = ensureHashes(r, std::max<int64_t>(0, nHash - 1));
  const std::vector<BlockHash> &cache = r.hashCache;
  size_t hbs = size_t(hashBlockSize());
  // The indexed prefix and the collision check over it (the stored tokens
  // must be this block's tokens, by fingerprint: see tokenPrint), starting
  // from the blocks the last attempt found. Fingerprints are computed only
  // for found blocks, so a first admission hashes the chain alone: without
  // them the index is matched first, then the found blocks, now as hints,
  // against their prints. Nothing allocates once the hint has grown.
  std::vector<BlockId> &ids = r.hitHint;
  size_t hints = std::min(ids.size(), size_t(candidates));
  ids.resize(size_t(candidates), kNoBlock);
  size_t live = 0, matched;
  if (int64_t(r.printCache.size()) >= candidates) {
    matched = blocks_->matchRun(cache.data(), r.printCache.data(), hbs,
                                size_t(candidates), ids.data(), hints, &live);
  } else {
    size_t found = blocks_->matchRun(cache.data(), nullptr, hbs,
                                     size_t(candidates), ids.data(), hints);
    ensurePrints(r, int64_t(found));
    matched = blocks_->matchRun(cache.data(), r.printCache.data(), hbs, found,
                                ids.data(), found, &live);
  }
  ids.resize(matched);
  int64_t compressed = int64_t(matched);
  // Every consumer reads at most `compressed` entries: no copy needed.
  const std::vector<BlockHash> &all = cache;
  // A hybrid model's index is the joint one: a hit counts as indexed only
  // where every window class can resume it too (specs/window-classes.md).
  int64_t fullIndexed = compressed;
  compressed = windowHit(r, compressed);
  int64_t cached = gatedHit(r, compressed, all, false);
  r.numCompressedHitBlocks = compressed;
  // The match counted the used blocks of the whole indexed prefix; a gate
  // or a window that cut the hit shorter needs the count of what is left.
  if (cached < fullIndexed) {
    live = 0;
    for (int64_t i = 0; i < cached; ++i)
      if (blocks_->isUsed(ids[size_t(i)]))
        ++live;
  }
  recordDemand(r, cached, compressed, all);
  std::optional<BlockHash> protectedHash;
  if (cached > 0)
    protectedHash = all[size_t(cached - 1)];
  out.indexedBlocks = compressed;
  if (!pageUnitsFor(nHash - int64_t(live), protectedHash) ||
      (!windows_.empty() && !windowReservesFor(nHash - int64_t(live)))) {
    out.reason = "blocks";
    return out;
  }
  out.admissible = true;
  out.hitBlocks = cached;
  out.hitTokens = cached * hashBlockSize();
  if (cached < compressed)
    out.reason = "checkpoint missing";
  else if (compressed < fullIndexed)
    out.reason = "window blocks missing";
  return out;
}

Status Request::setNumCachedTokens(int64_t n) {
  if (n < 0 || n > numTokens())
    return Error::invalid("num_cached_tokens: " + std::to_string(n) +
                          " is outside [0, " + std::to_string(numTokens()) +
                          "] (the request's tokens)");
  numCachedTokens = n;
  return Status::success();
}

namespace {
Error notAllocated(const char *op, const Request &r) {
  return Error{ErrorKind::State,
               std::string(op) + ": request " + std::to_string(r.id) +
                   " is not allocated (never allocated, or already "
                   "deallocated)"};
}
} // namespace

Status CacheManager::allocate(Request &r, int64_t numCached) {
  if (r.allocated || !r.blockTable.empty())
    return Error{ErrorKind::State, "allocate: the request is already allocated"};
  if (numCached < 0)
    return Error::invalid("allocate: " + std::to_string(numCached) +
                          " cached blocks (use can_allocate's answer, >= 0)");
  if (store_ && liveIds_.count(r.id))
    return Error{ErrorKind::Lookup,
                 "allocate: request id " + std::to_string(r.id) +
                     " is already live; every live request needs its own id "
                     "(checkpoint intents are kept by id)"};
  if (ensureHashes(r, numCached) < numCached)
    return Error::invalid("allocate: " + std::to_string(numCached) +
                          " cached blocks is more than the request has");
  GroupId groupBefore = r.state.group, sourceBefore = r.state.forkSource;
  Status s = allocateBlocksAndState(r, numCached);
  if (s.ok()) {
    r.allocated = true;
    if (store_)
      liveIds_.insert(r.id);
    return s;
  }
  // Nothing half-done: give back what this call took.
  releaseWindows(r);
  for (auto it = r.blockTable.rbegin(); it != r.blockTable.rend(); ++it)
    (void)blocks_->free(*it);
  r.blockTable.clear();
  r.numCachedTokens = 0;
  if (r.state.forkSource.valid() && r.state.forkSource != sourceBefore) {
    (void)groups_->dropReader(r.state.forkSource);
    r.state.forkSource = sourceBefore;
  }
  if (r.state.group.valid() && r.state.group != groupBefore) {
    if (store_)
      store_->cancelQueuedRestore(SlotIndex(r.state.group.value));
    (void)groups_->release(r.state.group);
    r.state.group = groupBefore;
  }
  return s;
}

Status CacheManager::allocateBlocksAndState(Request &r, int64_t numCached) {
  const std::vector<BlockHash> &hashes = r.hashCache;
  const std::vector<BlockId> &hint = r.hitHint;
  // canAllocate just matched these: claim them while each block is still
  // indexed under this request's hash (a batch, no per-block status), and
  // take the checked path below from the first that is not.
  size_t fast = numCached <= int64_t(hint.size())
                    ? blocks_->claimIndexedRun(hint.data(), hashes.data(),
                                               size_t(numCached))
                    : 0;
  // A BlockId has a default member initializer, so it is not "trivial"
  // and vector::insert copies it element by element (a scalar loop, a
  // fifth of a cached 32k admission at block 16); it is trivially
  // copyable, so one memcpy does the same.
  static_assert(std::is_trivially_copyable_v<BlockId>);
  if (fast > 0) {
    size_t at = r.blockTable.size();
    r.blockTable.resize(at + fast);
    std::memcpy(r.blockTable.data() + at, hint.data(), fast * sizeof(BlockId));
  }
  for (int64_t i = int64_t(fast); i < numCached; ++i) {
    // Re-check each id from its block (indexedAs) instead of probing the
    // index again.
    BlockId b = size_t(i) < hint.size() ? hint[size_t(i)] : kNoBlock;
    if (!blocks_->indexedAs(b, hashes[size_t(i)])) {
      // Not what canAllocate found: look it up and run the collision check
      // here (a caller may allocate without asking first).
      b = blocks_->lookup(hashes[size_t(i)]);
      ensurePrints(r, numCached);
      if (b.valid() && !blocks_->tokensMatch(b, size_t(hashBlockSize()),
                                             r.printCache[size_t(i)]))
        return Error{ErrorKind::State,
                     "allocate: hit block " + std::to_string(i) +
                         " holds other tokens under the same hash"};
    }
    if (!b.valid())
      return Error{ErrorKind::State, "allocate: hit block " + std::to_string(i) +
                                         " left the index since can_allocate"};
    Status s = blocks_->claim(b);
    if (!s.ok())
      return s;
    r.blockTable.push_back(b);
  }
  // Window classes claim their hit blocks before any fresh block is taken:
  // in a shared pool a fresh block could otherwise evict them.
  if (!windows_.empty()) {
    Status s = claimWindowHits(r, numCached);
    if (!s.ok())
      return s;
  }
  // Copy classes attach their slot (and queue the restore) before taking
  // fresh blocks, so fresh-block eviction cannot spend the checkpoint it is
  // about to read.
  if (store_ && groups_->holdsState(r.state)) {
    auto g = groups_->pop();
    if (!g.ok())
      return g.error();
    r.state.group = *g;
    if (numCached > 0 &&
        !store_->beginRestore(hashes[size_t(numCached - 1)], SlotIndex(g->value))) {
      (void)groups_->release(*g);
      r.state.group = GroupId();
      return Error{ErrorKind::State,
                   "gated PAGE checkpoint disappeared before state attach"};
    }
  }
  // Fork classes attach after the cached blocks are claimed.
  if (!store_ && groups_->holdsState(r.state)) {
    GroupId src = numCached > 0 ? groups_->lookupGroup(hashes[size_t(numCached - 1)])
                                : GroupId();
    if (!src.valid()) {
      auto g = groups_->pop();
      if (!g.ok())
        return g.error();
      r.state.group = *g;
    } else if (!groups_->isPinned(src) &&
               groups_->numFree() == (groups_->isFree(src) ? 1 : 0)) {
      // Nowhere to fork into (a free source is itself the last free group,
      // which claiming it takes): spend the checkpoint, adopt its group.
      Status s = groups_->claim(src);
      if (s.ok())
        s = groups_->invalidate(src);
      if (!s.ok())
        return s;
      r.state.group = src;
    } else {
      if (!groups_->isPinned(src)) {
        Status s = groups_->claim(src);
        if (!s.ok())
          return s;
      }
      auto g = groups_->pop();
      if (!g.ok())
        return g.error();
      r.state.group = *g;
      r.state.forkSource = src;
      Status s = groups_->pin(src);
      if (!s.ok())
        return s;
    }
  }
  const int64_t numBlocks = ceilDiv(r.numTokens(), blockSize_);
  if (!store_) {
    // No PAGE-unit store to make room first: the fresh blocks in one call.
    if (numBlocks > numCached) {
      size_t fresh = size_t(numBlocks - numCached);
      size_t at = r.blockTable.size();
      r.blockTable.resize(at + fresh);
      size_t got = blocks_->allocateFresh(fresh, r.blockTable.data() + at);
      r.blockTable.resize(at + got); // the caller's rollback frees what was taken
      if (got < fresh)
        return Error{ErrorKind::State, "No PAGE unit available for a fresh KV block"};
    }
  } else {
    for (int64_t i = numCached; i < numBlocks; ++i) {
      if (!store_->ensureFreeUnits(1))
        return Error{ErrorKind::State, "No PAGE unit available for a fresh KV block"};
      auto b = blocks_->pop();
      if (!b.ok())
        return Error{ErrorKind::State, "No PAGE unit available for a fresh KV block"};
      Status s = blocks_->allocate(*b);
      if (!s.ok())
        return s;
      r.blockTable.push_back(*b);
    }
  }
  r.numCachedTokens = numCached * hashBlockSize();
  // Statistics of an admitted prefill (the wanted and compressed hits are
  // what canAllocate found; a caller that skipped it reports its own hit).
  int64_t hbs = hashBlockSize();
  int64_t compressed = std::max(r.numCompressedHitBlocks, numCached);
  int64_t wanted = std::clamp(r.numWantedHitBlocks, numCached, compressed);
  ++stats_.requests;
  stats_.fullTokens += r.numTokens();
  stats_.cachedTokens += numCached * hbs;
  stats_.wantedTokens += std::min(wanted * hbs, r.numTokens());
  stats_.compressedTokens += std::min(compressed * hbs, r.numTokens());
  return Status::success();
}

Status CacheManager::hashBlocks(Request &r, int64_t numNew,
                                std::optional<int64_t> startTokens,
                                std::optional<int64_t> nextForward, bool aimed) {
  if (!r.allocated)
    return notAllocated("hash_blocks", r);
  if (!prefixCaching_)
    return Status::success();
  int64_t base = startTokens.value_or(r.numCachedTokens);
  if (base < 0 || numNew < 0 || numNew > r.numTokens() - base)
    return Error::invalid("hash_blocks: tokens [" + std::to_string(base) + ", " +
                          std::to_string(base) + " + " + std::to_string(numNew) +
                          ") are not within the request's " +
                          std::to_string(r.numTokens()) + " tokens");
  int64_t hbs = hashBlockSize();
  int64_t start = base / hbs;
  int64_t end = std::min<int64_t>((base + numNew) / hbs, int64_t(r.blockTable.size()));
  if (start >= end)
    return Status::success(); // no full new block: no checkpoint either
  std::optional<BlockHash> parent = saltRoot(r.cacheSalt);
  if (start > 0) {
    BlockHash h = blocks_->hash(r.blockTable[size_t(start - 1)]);
    if (h == kNoHash)
      return Error{ErrorKind::State, "hash_blocks: block " + std::to_string(start - 1) +
                                         " of the request is unhashed"};
    parent = h;
  }
  r.numHashedTokens = std::max(r.numHashedTokens, end * hbs);
  BlockHash last = 0;
  std::vector<int32_t> toks;
  toks.resize(size_t(hbs));
  for (int64_t i = start; i < end; ++i) {
    const int64_t *t = r.tokens.data() + i * hbs;
    last = hashBlock(hashScheme_, parent, t, size_t(hbs));
    for (int64_t k = 0; k < hbs; ++k)
      toks[size_t(k)] = int32_t(t[k]);
    Status s = blocks_->publish(r.blockTable[size_t(i)], last, toks.data(), toks.size());
    if (!s.ok())
      return s;
    for (size_t c = 0; c < r.windowTables.size(); ++c) {
      const std::vector<BlockId> &t = r.windowTables[c];
      if (size_t(i) >= t.size() || !t[size_t(i)].valid())
        continue;
      s = windows_[c].pool->publish(t[size_t(i)], windowKey(last, int64_t(c)),
                                    toks.data(), toks.size());
      if (!s.ok())
        return s;
    }
    parent = last;
  }
  int64_t pos = base + numNew;
  std::vector<StateClass *> kept = checkpointersAt(r, pos, nextForward, aimed);
  for (StateClass *c : kept) {
    Status s = c->checkpoint(r, end, last);
    if (!s.ok())
      return s;
  }
  if (!kept.empty())
    r.lastCheckpointPos = pos;
  return Status::success();
}

Status CacheManager::hashDecodeBlocks(Request &r, int64_t committed,
                                      int64_t nextForward) {
  if (committed <= r.numHashedTokens)
    return Status::success();
  return hashBlocks(r, committed - r.numHashedTokens, r.numHashedTokens,
                    nextForward, /*aimed=*/false);
}

int64_t CacheManager::blocksToAppend(const Request &r,
                                     int64_t totalTokens) const {
  if (totalTokens <= 0)
    return 0;
  return std::max<int64_t>(0, ceilDiv(totalTokens, blockSize_) -
                                  int64_t(r.blockTable.size()));
}

bool CacheManager::canAppend(const Request &r, int64_t totalTokens) const {
  return pageUnitsFor(blocksToAppend(r, totalTokens), std::nullopt);
}

Status CacheManager::appendSlots(Request &r, int64_t totalTokens) {
  if (!r.allocated)
    return notAllocated("append_slots", r);
  if (totalTokens < 0)
    return Error::invalid("append_slots: " + std::to_string(totalTokens) +
                          " tokens is negative");
  int64_t need = blocksToAppend(r, totalTokens);
  if (!windows_.empty() && windowForwardLimit(r, totalTokens) < totalTokens)
    return Error{ErrorKind::State,
                 "append_slots: " + std::to_string(totalTokens) +
                     " tokens need more window blocks than the request's reserve"};
  if (need == 0)
    return prepareWindows(r, totalTokens);
  if (store_ ? !store_->ensureFreeUnits(need) : !pageUnitsFor(need, std::nullopt))
    return Error{ErrorKind::State,
                 "append_slots: " + std::to_string(need) +
                     " fresh blocks are not available"};
  for (int64_t i = 0; i < need; ++i) {
    auto b = blocks_->pop();
    if (!b.ok())
      return b.error();
    Status s = blocks_->allocate(*b);
    if (!s.ok())
      return s;
    r.blockTable.push_back(*b);
  }
  return prepareWindows(r, totalTokens);
}

Status CacheManager::deallocate(Request &r) {
  if (!r.allocated)
    return notAllocated("deallocate", r);
  r.allocated = false;
  releaseWindows(r);
  // Reverse table order: the tail becomes the least recently freed.
  for (auto it = r.blockTable.rbegin(); it != r.blockTable.rend(); ++it) {
    Status s = blocks_->free(*it);
    if (!s.ok())
      return s;
  }
  r.blockTable.clear();
  r.numCachedTokens = r.numHashedTokens = 0;
  r.checkpointDemandPos = 0;
  r.demandCounted = r.demandDeclined = false;
  r.lastCheckpointPos = 0;
  if (store_) {
    liveIds_.erase(r.id);
    store_->forgetRequester(r.id);
    if (r.state.group.valid())
      store_->cancelQueuedRestore(SlotIndex(r.state.group.value));
  }
  if (r.state.group.valid()) {
    Status s = groups_->release(r.state.group);
    if (!s.ok())
      return s;
    r.state.group = GroupId();
  }
  if (r.state.forkSource.valid()) {
    Status s = groups_->dropReader(r.state.forkSource);
    if (!s.ok())
      return s;
    r.state.forkSource = GroupId();
  }
  return Status::success();
}

void CacheManager::completePreviousStateBatch() {
  groups_->releasePins();
  if (store_)
    store_->completeInflight();
}

int64_t CacheManager::chunkedPrefillSize(int64_t numNew, int64_t budget,
                                         int64_t numBatched, int64_t blockSize) {
  int64_t chunk = std::min(numNew, budget);
  if (chunk >= numNew)
    return chunk;
  int64_t align = std::max<int64_t>(blockSize, 64);
  int64_t aligned = chunk - chunk % align;
  if (aligned > 0)
    return aligned;
  // No sliver chunks: defer unless the batch would otherwise be empty.
  return numBatched > 0 ? 0 : chunk;
}

int64_t CacheManager::finalizePrefillChunk(Request &r, int64_t start,
                                           int64_t chunk) {
  int64_t target = checkpointCut(r, start, start + chunk);
  if (target)
    chunk = target - start;
  if (r.state.forkSource.valid() && chunk < groups_->minForkTokens()) {
    // A fork must carry the successor's room; cancel it if the source is
    // ours alone, else widen the chunk.
    GroupId src = r.state.forkSource;
    if (groups_->pinCount(src) > 1) {
      chunk = groups_->minForkTokens();
    } else {
      (void)groups_->release(r.state.group);
      (void)groups_->unpin(src);
      (void)groups_->invalidate(src);
      r.state.group = src;
      r.state.forkSource = GroupId();
    }
  }
  if (!windows_.empty() && chunk > 0) {
    // Window classes: cut the chunk where a class would hold more than its
    // reserve (at a block boundary), then release and take their blocks.
    int64_t end = windowForwardLimit(r, start + chunk);
    chunk = std::max<int64_t>(0, end - start);
    if (chunk > 0 && !prepareWindows(r, start + chunk).ok())
      chunk = 0;
  }
  return chunk;
}

CacheFunnel CacheManager::funnel() const {
  CacheFunnel f = funnel_;
  f.fates = groups_->fates();
  if (store_) {
    f.fates.kept = store_->checkpointsKept();
    f.fates.dropped = store_->checkpointsDropped();
    f.fates.evicted = store_->evictions();
  }
  return f;
}

//===----------------------------------------------------------------------===//
// Moving the boundary between the block pool and the state groups.
//===----------------------------------------------------------------------===//

int64_t PoolBoundaryGeometry::blocksFor(int64_t groups) const {
  int64_t rows = (heldSlots() - groups) * slotRows;
  return rows < 0 ? 0 : std::min(maxBlocks, rows / envelopeRows);
}

int64_t PoolBoundaryGeometry::groupsFor(int64_t blocks) const {
  int64_t used = ceilDiv(blocks * envelopeRows, slotRows);
  return std::max<int64_t>(0, heldSlots() - used);
}

namespace {

/// Byte moves composed so that a destination that moves again is skipped:
/// the bytes go from the first source straight to the last destination.
template <typename Id> class MoveChain {
public:
  /// Returns true when `to` was an earlier move's destination: that
  /// content was given up (a re-homed checkpoint spent again) and its move
  /// is dropped.
  bool add(Id from, Id to) {
    bool overwrote = false;
    auto old = byDst.find(to.value);
    if (old != byDst.end()) {
      dead[old->second] = true;
      byDst.erase(old);
      overwrote = true;
    }
    auto it = byDst.find(from.value);
    if (it != byDst.end()) { // `from` only ever held bytes still in flight
      size_t i = it->second;
      byDst.erase(it);
      moves[i].second = to;
      byDst[to.value] = i;
      return overwrote;
    }
    byDst[to.value] = moves.size();
    moves.push_back({from, to});
    dead.push_back(false);
    return overwrote;
  }
  /// Where an id held before the move now lives.
  Id follow(Id id) const {
    auto it = bySrc.find(id.value);
    return it == bySrc.end() ? id : it->second;
  }
  void seal() {
    std::vector<std::pair<Id, Id>> live;
    for (size_t i = 0; i < moves.size(); ++i)
      if (!dead[i])
        live.push_back(moves[i]);
    moves.swap(live);
    for (auto &m : moves)
      bySrc[m.first.value] = m.second;
  }
  std::vector<std::pair<Id, Id>> moves;

private:
  std::vector<bool> dead;
  std::unordered_map<int32_t, size_t> byDst;
  std::unordered_map<int32_t, Id> bySrc;
};

std::string blockStopReason(const BlockPool &pool, BlockId top) {
  std::string why = "top block " + std::to_string(top.value) + " is " +
                    blockStateName(pool.state(top));
  if (pool.state(top) == BlockState::Popped)
    return why + " (taken off the free list, not yet allocated)";
  return why + " and nothing is free to move it into";
}

/// Why a move cannot start: a target outside the rows, PAGE copies still
/// queued, a live list with a null, unallocated or repeated request, or a
/// disabled group pool asked to grow. Nothing has changed when it refuses.
Status checkBoundaryMove(const PoolBoundaryGeometry &g, int64_t targetGroups,
                         const std::vector<Request *> &live,
                         const PageUnitCheckpointStore *store,
                         const StateGroupPool &groupPool) {
  if (targetGroups < 0 || targetGroups > g.heldSlots())
    return Error::invalid("move_boundary: target " + std::to_string(targetGroups) +
                          " groups is outside [0, " +
                          std::to_string(g.heldSlots()) + "] (the slots " +
                          std::to_string(g.planeRows) + " plane rows hold)");
  if (store && !store->atRest())
    return Error{ErrorKind::State,
                 "move_boundary: PAGE checkpoint copies are queued or in "
                 "flight; move the boundary between batches"};
  std::unordered_map<const Request *, size_t> seen;
  for (size_t i = 0; i < live.size(); ++i) {
    const Request *r = live[i];
    if (!r)
      return Error::invalid("move_boundary: a null request in the live list");
    if (!r->allocated)
      return notAllocated("move_boundary", *r);
    auto [it, fresh] = seen.emplace(r, i);
    if (!fresh)
      return Error::invalid("move_boundary: request " + std::to_string(r->id) +
                            " is in the live list twice (entries " +
                            std::to_string(it->second) + " and " +
                            std::to_string(i) + "): it would be re-pointed twice");
  }
  if (targetGroups > groupPool.numGroups() && !groupPool.enabled())
    return Error{ErrorKind::State,
                 "move_boundary: the state-group pool is disabled (created "
                 "with 0 groups or without prefix caching); it cannot grow"};
  return Status::success();
}

/// A boundary move under way: what it will report, and whether an internal
/// failure stopped it.
struct MoveInProgress {
  BoundaryMove out;
  bool internalFailure = false;
  void fail(const Error &e) {
    out.stopReason = "internal error: " + e.message;
    internalFailure = true;
  }
};

/// Grow the state side: free the rows of the new slots first (retiring
/// blocks from the top, moving live ones and PAGE units down), then add the
/// groups the freed rows hold.
void growStateSide(const PoolBoundaryGeometry &g, int64_t targetGroups,
                   BlockPool &blockPool, StateGroupPool &groupPool,
                   PageUnitCheckpointStore *store, MoveInProgress &move,
                   MoveChain<BlockId> &blockMoves) {
  BoundaryMove &out = move.out;
  int64_t groups = groupPool.numGroups();
  int64_t cap = g.blocksFor(targetGroups);
  while (blockPool.numBlocks() > cap) {
    std::optional<BlockRetirement> r = blockPool.retireTop();
    if (!r && store)
      r = blockPool.retireTopUnit(PageUnitCheckpointStore::kUnitTag);
    if (!r) {
      out.stopReason =
          blockStopReason(blockPool, BlockId(blockPool.numBlocks() - 1));
      break;
    }
    ++out.blocksRetired;
    if (!r->movedTo.valid())
      continue;
    blockMoves.add(r->retired, r->movedTo);
    if (r->unitOwnerId) {
      Status s = store->relocateUnit(*r->unitOwnerId, r->unitPiece, r->retired,
                                     r->movedTo);
      if (!s.ok()) { // an invariant breach, reported, never half-done
        move.fail(s.error());
        break;
      }
      ++out.unitsMoved;
    }
  }
  int64_t reach = std::min(targetGroups, g.groupsFor(blockPool.numBlocks()));
  if (reach > groups) {
    Status s = groupPool.extend(reach - groups);
    if (!s.ok())
      move.fail(s.error());
  }
}

/// Grow the block side: give back groups from the top, re-homing the live
/// ones (and their checkpoints) into free groups below.
void growBlockSide(int64_t targetGroups, StateGroupPool &groupPool,
                   PageUnitCheckpointStore *store, BoundaryMove &out,
                   MoveChain<GroupId> &groupMoves) {
  while (groupPool.numGroups() > targetGroups) {
    std::optional<GroupRetirement> r = groupPool.retireTop();
    if (!r) {
      GroupId top(groupPool.numGroups() - 1);
      out.stopReason = "top group " + std::to_string(top.value) +
                       (groupPool.isPinned(top)
                            ? " is pinned by a fork reader this pass"
                            : " is live and no group is free to move it into");
      break;
    }
    ++out.groupsRetired;
    if (r->heldCheckpoint && !r->relocatedTo.valid())
      ++out.checkpointsSpent;
    if (!r->relocatedTo.valid())
      continue;
    if (r->heldCheckpoint)
      ++out.checkpointsRehomed;
    if (groupMoves.add(r->retired, r->relocatedTo)) {
      // The group a checkpoint was re-homed into was spent again.
      --out.checkpointsRehomed;
      ++out.checkpointsSpent;
    }
    if (store)
      store->relocateSlot(SlotIndex(r->retired.value),
                          SlotIndex(r->relocatedTo.value));
  }
}

/// Point every live request's block table, group and fork source at where
/// the (sealed) moves put them.
void repointLive(const std::vector<Request *> &live,
                 const MoveChain<BlockId> &blockMoves,
                 const MoveChain<GroupId> &groupMoves, BoundaryMove &out) {
  for (Request *r : live) {
    for (BlockId &b : r->blockTable) {
      BlockId to = blockMoves.follow(b);
      if (to != b) {
        b = to;
        ++out.tableEntriesRepointed;
      }
    }
    r->state.group = groupMoves.follow(r->state.group);
    r->state.forkSource = groupMoves.follow(r->state.forkSource);
  }
}

/// The byte moves as the copy kernels' id pairs (slots by physical
/// position), the counts after the move, and why it stopped short.
void reportMove(const PoolBoundaryGeometry &g, int64_t targetGroups,
                MoveChain<BlockId> &blockMoves,
                const MoveChain<GroupId> &groupMoves, MoveInProgress &move,
                int64_t numBlocks, int64_t numGroups) {
  BoundaryMove &out = move.out;
  out.blockMoves = std::move(blockMoves.moves);
  for (auto &m : out.blockMoves) {
    out.blockCopyIds.push_back(m.first.value);
    out.blockCopyIds.push_back(m.second.value);
  }
  for (auto &m : groupMoves.moves) {
    out.groupMoves.push_back(GroupRelocation{m.first, m.second});
    out.slotCopyIds.push_back(g.physicalSlot(m.first));
    out.slotCopyIds.push_back(g.physicalSlot(m.second));
  }
  out.numBlocks = numBlocks;
  out.numGroups = numGroups;
  out.reachedTarget = out.numGroups == targetGroups && !move.internalFailure;
  if (out.reachedTarget)
    out.stopReason.clear();
  else if (out.stopReason.empty())
    out.stopReason = "the rows above " + std::to_string(out.numBlocks) +
                     " blocks hold " + std::to_string(g.groupsFor(out.numBlocks)) +
                     " slots";
}

} // namespace

Result<BoundaryMove>
CacheManager::moveBoundary(int64_t targetGroups,
                           const std::vector<Request *> &live) {
  if (!boundary_)
    return Error::invalid("move_boundary: this cache manager has no boundary "
                          "geometry (not a row-space model)");
  const PoolBoundaryGeometry &g = *boundary_;
  Status refused =
      checkBoundaryMove(g, targetGroups, live, store_.get(), *groups_);
  if (!refused.ok())
    return refused.error();

  // From here on the move always completes what it started: an internal
  // failure stops it like a refusal would, and the moves made so far are
  // still reported and followed.
  deferEvictions_ = true;
  deferredEvictions_.clear();
  MoveInProgress move;
  MoveChain<BlockId> blockMoves;
  MoveChain<GroupId> groupMoves;
  if (targetGroups > groups_->numGroups())
    growStateSide(g, targetGroups, *blocks_, *groups_, store_.get(), move,
                  blockMoves);
  else
    growBlockSide(targetGroups, *groups_, store_.get(), move.out, groupMoves);
  // Rows not enough for a whole slot go back to the block pool.
  int64_t blockCap = g.blocksFor(groups_->numGroups());
  if (blocks_->numBlocks() < blockCap) {
    auto grown = blocks_->extend(blockCap - blocks_->numBlocks());
    if (!grown.ok())
      move.fail(grown.error());
  }

  blockMoves.seal();
  groupMoves.seal();
  repointLive(live, blockMoves, groupMoves, move.out);
  // Every record names its units' new ids now: drop the checkpoints whose
  // blocks the moves evicted.
  deferEvictions_ = false;
  std::vector<BlockHash> evicted;
  evicted.swap(deferredEvictions_);
  for (BlockHash h : evicted)
    dropCheckpointOf(h);
  reportMove(g, targetGroups, blockMoves, groupMoves, move,
             blocks_->numBlocks(), groups_->numGroups());
  return std::move(move.out);
}

} // namespace poolrt
