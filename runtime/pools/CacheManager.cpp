//===- CacheManager.cpp - Prefix hits, publication, checkpoint ladder -----===//

#include "poolrt/CacheManager.h"
#include "poolrt/Checked.h"

#include "CacheManagerDetail.h"
#include "WindowClasses.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

namespace poolrt {

StateClass::~StateClass() = default;

const char *checkpointKindName(CheckpointKind k) {
  switch (k) {
  case CheckpointKind::PromptEnd:
    return "prompt_end";
  case CheckpointKind::Branch:
    return "branch";
  case CheckpointKind::ResponseEnd:
    return "response_end";
  case CheckpointKind::Ladder:
    return "ladder";
  }
  return "?";
}

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

} // namespace

using cachedetail::notAllocated;

CacheManager::CacheManager() = default;
CacheManager::~CacheManager() = default;

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
  m->promptEnd_ = c.policy.promptEndCheckpoints;
  m->branch_ = c.policy.branchCheckpoints;
  m->responseEnd_ = c.policy.responseEndCheckpoints;
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
  // Window classes last: each check above reports its own cause first.
  auto windows = WindowSet::create(c, *m->blocks_);
  if (!windows.ok())
    return windows.error();
  m->windows_ = windows.take();
  return m;
}

void CacheManager::noteKind(BlockHash h, CheckpointKind kind) {
  kindOf_[h] = kind;
  // Labels of checkpoints that are gone only cost memory: drop them once
  // they outnumber what the pools can hold a few times over.
  size_t cap = 4 * size_t(groups_->numGroups() +
                          (store_ ? store_->numRecords() : 0)) + 1024;
  if (kindOf_.size() <= cap)
    return;
  for (auto it = kindOf_.begin(); it != kindOf_.end();) {
    bool live = store_ ? store_->containsOrPending(it->first)
                       : groups_->lookupGroup(it->first).valid();
    it = live ? std::next(it) : kindOf_.erase(it);
  }
}

bool CacheManager::worthTaking(CheckpointKind kind) {
  // A turn's two ends are substitutes: the next turn of a conversation
  // resumes from one or the other (the response end when it extends the
  // generated tokens, the prompt end when it does not, as in a replayed
  // trace whose responses are not the model's). Once one of them has been
  // read back kSubstituteEvidence times and the other under an eighth as
  // often, the other is kept only every kExplore-th time, so its bytes go
  // to the blocks and to the end that is read.
  constexpr int64_t kSubstituteEvidence = 16, kExplore = 8;
  CheckpointKind other;
  if (kind == CheckpointKind::PromptEnd)
    other = CheckpointKind::ResponseEnd;
  else if (kind == CheckpointKind::ResponseEnd)
    other = CheckpointKind::PromptEnd;
  else
    return true;
  int64_t mine = funnel_.readBack[int(kind)], theirs = funnel_.readBack[int(other)];
  if (theirs < kSubstituteEvidence || mine * 8 >= theirs)
    return true;
  return ++skipped_[int(kind)] % kExplore == 0;
}

void CacheManager::supersede(Request &r) {
  // An image in PAGE units that a request resumed from, once the request
  // keeps a later prompt or response end of its own, has served its turn:
  // the next turn extends the later one. Its units go back to the blocks
  // now instead of when its boundary block ages out. Only a conversation's
  // own image: a branch point is shared. Only under pressure (no vacant
  // block left): while bytes are free the image stays for a request that
  // branches from it again (a regenerated answer). Groups are a pool of
  // their own and spend their least recently used checkpoint anyway.
  if (!store_ || !r.resumedFrom)
    return;
  BlockHash h = *r.resumedFrom;
  r.resumedFrom.reset();
  if (blocks_->hasVacant())
    return;
  auto it = kindOf_.find(h);
  if (it != kindOf_.end() && (it->second == CheckpointKind::PromptEnd ||
                              it->second == CheckpointKind::ResponseEnd))
    store_->unindex(h);
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

void cachedetail::ensureTokenPrints(const Request &r, int64_t n,
                                    int64_t blockSize) {
  std::vector<uint64_t> &prints = r.printCache;
  if (int64_t(prints.size()) >= n)
    return;
  size_t have = prints.size(), hbs = size_t(blockSize);
  prints.resize(size_t(n));
  std::vector<int32_t> block(hbs);
  for (size_t i = have; i < size_t(n); ++i) {
    const int64_t *t = r.tokens.data() + i * hbs;
    for (size_t k = 0; k < hbs; ++k)
      block[k] = int32_t(t[k]);
    prints[i] = tokenPrint(block.data(), hbs);
  }
}

void CacheManager::ensurePrints(const Request &r, int64_t n) const {
  cachedetail::ensureTokenPrints(r, n, hashBlockSize());
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

int64_t CacheManager::promptEndPos(const Request &r) const {
  if (!promptEnd_)
    return 0;
  return r.numPromptTokens / hashBlockSize() * hashBlockSize();
}

int64_t CacheManager::responseEndPos(const Request &r) const {
  // The tokens committed when the response ends: all but the last sampled.
  if (!responseEnd_ || r.responseEnd <= r.numPromptTokens)
    return 0;
  int64_t at = (r.responseEnd - 1) / hashBlockSize() * hashBlockSize();
  return at > r.numPromptTokens ? at : 0;
}

std::optional<CheckpointKind>
CacheManager::placementAt(const Request &r, int64_t pos, bool aimed) const {
  if (pos <= 0)
    return std::nullopt;
  if (aimed) {
    // A prefill chunk ends here (finalizePrefillChunk cut it on a target).
    if (pos == r.checkpointDemandPos && (branch_ || interval_ > 0))
      return branch_ ? CheckpointKind::Branch : CheckpointKind::Ladder;
    if (pos == promptEndPos(r))
      return CheckpointKind::PromptEnd;
    if (interval_ > 0 && pos % interval_ == 0)
      return CheckpointKind::Ladder;
    return std::nullopt;
  }
  if (pos % hashBlockSize() != 0)
    return std::nullopt;
  if (pos == responseEndPos(r))
    return CheckpointKind::ResponseEnd;
  if (interval_ > 0 && pos - r.lastCheckpointPos >= interval_)
    return CheckpointKind::Ladder; // the spacing rule, from the last kept one
  return std::nullopt;
}

std::vector<StateClass *>
CacheManager::checkpointersAt(const Request &r, int64_t pos,
                              std::optional<int64_t> nextForward,
                              bool aimed) const {
  if (!placementAt(r, pos, aimed))
    return {};
  // The forward after the prompt's end is a decode: it carries a token.
  int64_t next = nextForward.value_or(
      pos == r.numPromptTokens ? 1 : r.numPromptTokens - pos);
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
  // The prompt's end, when the chunk passes it (a chunk that ends on the
  // prompt's last token reaches the boundary only if it is that token). The
  // earliest target in the chunk wins: the next chunk reaches the others.
  int64_t prompt = promptEndPos(r);
  if (prompt > start && prompt < end && (target <= start || prompt < target) &&
      !applicable(r).empty())
    target = prompt;
  if (target <= start)
    return 0;
  if (target == demand && target > rung && target < end)
    ++funnel_.chunksCutForDemand;
  return target;
}

void CacheManager::recordDemand(Request &r, int64_t hit, int64_t compressedHit,
                                const std::vector<BlockHash> &hashes) {
  int64_t wanted =
      hit < compressedHit ? gatedHit(r, compressedHit, hashes, true) : hit;
  r.numWantedHitBlocks = wanted;
  int64_t demand =
      (interval_ > 0 || branch_) && wanted > hit ? wanted * hashBlockSize() : 0;
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
  return blocks_->hasFree(count + windows_->debt(blocks_.get()));
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
                     (windows_->empty() || windows_->reservesFor(needed));
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
  compressed = windows_->hit(r, compressed);
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
      (!windows_->empty() && !windows_->reservesFor(nHash - int64_t(live)))) {
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
  windows_->release(r);
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

namespace {

/// Claim the `numCached` hit blocks of the full class (hash blocks of
/// `hbs` tokens) into r.blockTable.
Status claimCachedBlocks(BlockPool &blocks, Request &r, int64_t numCached,
                         int64_t hbs) {
  const std::vector<BlockHash> &hashes = r.hashCache;
  const std::vector<BlockId> &hint = r.hitHint;
  // canAllocate just matched these: claim them while each block is still
  // indexed under this request's hash (a batch, no per-block status), and
  // take the checked path below from the first that is not.
  size_t fast = numCached <= int64_t(hint.size())
                    ? blocks.claimIndexedRun(hint.data(), hashes.data(),
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
    if (!blocks.indexedAs(b, hashes[size_t(i)])) {
      // Not what canAllocate found: look it up and run the collision check
      // here (a caller may allocate without asking first).
      b = blocks.lookup(hashes[size_t(i)]);
      cachedetail::ensureTokenPrints(r, numCached, hbs);
      if (b.valid() &&
          !blocks.tokensMatch(b, size_t(hbs), r.printCache[size_t(i)]))
        return Error{ErrorKind::State,
                     "allocate: hit block " + std::to_string(i) +
                         " holds other tokens under the same hash"};
    }
    if (!b.valid())
      return Error{ErrorKind::State, "allocate: hit block " + std::to_string(i) +
                                         " left the index since can_allocate"};
    Status s = blocks.claim(b);
    if (!s.ok())
      return s;
    r.blockTable.push_back(b);
  }
  return Status::success();
}

/// Attach r's state group: a copy class's slot (queueing the restore of
/// the hit's checkpoint), or a fork class's group (forking from the hit's
/// checkpoint, or adopting its group).
Status attachState(StateGroupPool &groups, PageUnitCheckpointStore *store,
                   Request &r, int64_t numCached) {
  const std::vector<BlockHash> &hashes = r.hashCache;
  // Copy classes attach their slot (and queue the restore) before taking
  // fresh blocks, so fresh-block eviction cannot spend the checkpoint it is
  // about to read.
  if (store && groups.holdsState(r.state)) {
    auto g = groups.pop();
    if (!g.ok())
      return g.error();
    r.state.group = *g;
    if (numCached > 0 &&
        !store->beginRestore(hashes[size_t(numCached - 1)], SlotIndex(g->value))) {
      (void)groups.release(*g);
      r.state.group = GroupId();
      return Error{ErrorKind::State,
                   "gated PAGE checkpoint disappeared before state attach"};
    }
  }
  // Fork classes attach after the cached blocks are claimed.
  if (!store && groups.holdsState(r.state)) {
    GroupId src = numCached > 0 ? groups.lookupGroup(hashes[size_t(numCached - 1)])
                                : GroupId();
    if (!src.valid()) {
      auto g = groups.pop();
      if (!g.ok())
        return g.error();
      r.state.group = *g;
    } else if (!groups.isPinned(src) &&
               groups.numFree() == (groups.isFree(src) ? 1 : 0)) {
      // Nowhere to fork into (a free source is itself the last free group,
      // which claiming it takes): spend the checkpoint, adopt its group.
      Status s = groups.claim(src);
      if (s.ok())
        s = groups.invalidate(src);
      if (!s.ok())
        return s;
      r.state.group = src;
    } else {
      if (!groups.isPinned(src)) {
        Status s = groups.claim(src);
        if (!s.ok())
          return s;
      }
      auto g = groups.pop();
      if (!g.ok())
        return g.error();
      r.state.group = *g;
      r.state.forkSource = src;
      Status s = groups.pin(src);
      if (!s.ok())
        return s;
    }
  }
  return Status::success();
}

/// The full class's fresh blocks past the hit, to cover r's tokens.
Status takeFreshBlocks(BlockPool &blocks, PageUnitCheckpointStore *store,
                       Request &r, int64_t numCached, int64_t blockSize) {
  const int64_t numBlocks = ceilDiv(r.numTokens(), blockSize);
  if (!store) {
    // No PAGE-unit store to make room first: the fresh blocks in one call.
    if (numBlocks > numCached) {
      size_t fresh = size_t(numBlocks - numCached);
      size_t at = r.blockTable.size();
      r.blockTable.resize(at + fresh);
      size_t got = blocks.allocateFresh(fresh, r.blockTable.data() + at);
      r.blockTable.resize(at + got); // the caller's rollback frees what was taken
      if (got < fresh)
        return Error{ErrorKind::State, "No PAGE unit available for a fresh KV block"};
    }
  } else {
    for (int64_t i = numCached; i < numBlocks; ++i) {
      if (!store->ensureFreeUnits(1))
        return Error{ErrorKind::State, "No PAGE unit available for a fresh KV block"};
      auto b = blocks.pop();
      if (!b.ok())
        return Error{ErrorKind::State, "No PAGE unit available for a fresh KV block"};
      Status s = blocks.allocate(*b);
      if (!s.ok())
        return s;
      r.blockTable.push_back(*b);
    }
  }
  return Status::success();
}

/// The prefix-cache statistics of an admitted prefill.
void countAdmission(CacheStats &stats, const Request &r, int64_t numCached,
                    int64_t hbs) {
  // The wanted and compressed hits are what canAllocate found; a caller
  // that skipped it reports its own hit.
  int64_t compressed = std::max(r.numCompressedHitBlocks, numCached);
  int64_t wanted = std::clamp(r.numWantedHitBlocks, numCached, compressed);
  ++stats.requests;
  stats.fullTokens += r.numTokens();
  stats.cachedTokens += numCached * hbs;
  stats.wantedTokens += std::min(wanted * hbs, r.numTokens());
  stats.compressedTokens += std::min(compressed * hbs, r.numTokens());
}

} // namespace

Status CacheManager::allocateBlocksAndState(Request &r, int64_t numCached) {
  // The steps are free functions used once here, so the compiler inlines
  // them: as out-of-line members, their Status round trips added ~3% to
  // the instructions of a cached 1k-token admission.
  if (Status s = claimCachedBlocks(*blocks_, r, numCached, hashBlockSize());
      !s.ok())
    return s;
  // Window classes claim their hit blocks before any fresh block is taken:
  // in a shared pool a fresh block could otherwise evict them.
  if (!windows_->empty()) {
    if (Status s = windows_->claimHits(r, numCached); !s.ok())
      return s;
  }
  if (Status s = attachState(*groups_, store_.get(), r, numCached); !s.ok())
    return s;
  if (Status s = takeFreshBlocks(*blocks_, store_.get(), r, numCached,
                                 blockSize_);
      !s.ok())
    return s;
  r.numCachedTokens = numCached * hashBlockSize();
  countAdmission(stats_, r, numCached, hashBlockSize());
  if (numCached > 0 && groups_->holdsState(r.state)) {
    auto it = kindOf_.find(r.hashCache[size_t(numCached - 1)]);
    if (it != kindOf_.end())
      ++funnel_.readBack[int(it->second)];
    r.resumedTokens = r.numCachedTokens;
    r.resumedFrom = r.hashCache[size_t(numCached - 1)];
  }
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
    s = windows_->publish(r, i, last, toks.data(), toks.size());
    if (!s.ok())
      return s;
    parent = last;
  }
  int64_t pos = base + numNew;
  std::vector<StateClass *> kept = checkpointersAt(r, pos, nextForward, aimed);
  if (kept.empty())
    return Status::success();
  CheckpointKind kind = *placementAt(r, pos, aimed);
  if (!worthTaking(kind))
    return Status::success();
  CheckpointFates before = funnel().fates;
  for (StateClass *c : kept) {
    Status s = c->checkpoint(r, end, last);
    if (!s.ok())
      return s;
  }
  r.lastCheckpointPos = pos;
  CheckpointFates after = funnel().fates;
  // A copy class only records the intent here: its store counts it later
  // (kept or dropped), so the intent counts as taken.
  int k = int(kind);
  if (after.dropped > before.dropped)
    ++funnel_.dropped[k];
  else
    ++funnel_.taken[k];
  noteKind(last, kind);
  if (after.dropped == before.dropped &&
      (kind == CheckpointKind::PromptEnd || kind == CheckpointKind::ResponseEnd))
    supersede(r);
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
  if (!windows_->empty() && windowForwardLimit(r, totalTokens) < totalTokens)
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
  windows_->release(r);
  // Reverse table order: the tail becomes the least recently freed.
  for (auto it = r.blockTable.rbegin(); it != r.blockTable.rend(); ++it) {
    Status s = blocks_->free(*it);
    if (!s.ok())
      return s;
  }
  // A stateful hit resumes only at a checkpoint: the blocks past the last
  // one this request kept or resumed from unlock nothing until another
  // checkpoint covers them, so they are the first to go (deepest first).
  if (prefixCaching_ && !applicable(r).empty()) {
    int64_t covered = std::max(r.lastCheckpointPos, r.resumedTokens) / hashBlockSize();
    for (size_t i = size_t(std::max<int64_t>(0, covered)); i < r.blockTable.size(); ++i)
      blocks_->demote(r.blockTable[i]);
  }
  r.blockTable.clear();
  r.numCachedTokens = r.numHashedTokens = 0;
  r.checkpointDemandPos = 0;
  r.demandCounted = r.demandDeclined = false;
  r.lastCheckpointPos = 0;
  r.resumedTokens = 0;
  r.resumedFrom.reset();
  if (store_) {
    liveIds_.erase(r.id);
    // Its last checkpoint (a response end, say) still lands: the slot's
    // bytes stay until the batch's stores ran.
    store_->detachRequester(r.id);
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
  if (!windows_->empty() && chunk > 0) {
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

} // namespace poolrt
