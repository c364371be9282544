//===- WindowClasses.cpp - Sliding / chunked PAGE classes of a cache ------===//

#include "WindowClasses.h"

#include "CacheManagerDetail.h"
#include "poolrt/Checked.h"
#include "poolrt/Servable.h"

#include <algorithm>

namespace poolrt {

Result<std::unique_ptr<WindowSet>>
WindowSet::create(const CacheManagerConfig &c, BlockPool &fullPool) {
  std::unique_ptr<WindowSet> set(new WindowSet());
  set->fullPool_ = &fullPool;
  set->blockSize_ = c.blockSize;
  if (c.windowClasses.empty())
    return set;
  bool paged = c.pagedCheckpoints.has_value();
  if (c.numGroups > 0 || paged || c.boundary)
    return Error::invalid(
        "window classes (sliding or chunked attention) run beside a full "
        "PAGE class only in a stateless model without a row space: this "
        "configuration has " +
        std::string(c.numGroups > 0 ? "state groups" : paged ? "PAGE-unit checkpoints" : "a pool boundary"));
  if (c.windowMarginTokens < 0)
    return Error::invalid("window margin must be >= 0 tokens, got " +
                          std::to_string(c.windowMarginTokens));
  set->margin_ = c.windowMarginTokens;
  set->windows_.reserve(c.windowClasses.size());
  for (const WindowClassConfig &wc : c.windowClasses) {
    std::string what = "window class '" + wc.name + "': ";
    // The rule a manifest is checked by (poolrt/Servable.h), same words.
    if (auto why = windowReserveRefusal(wc.pattern, wc.reserveBlocks,
                                        c.windowMarginTokens, c.blockSize))
      return Error::invalid(what + *why);
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
      w.pool = &fullPool;
    }
    set->windows_.push_back(std::move(w));
  }
  return set;
}

BlockHash WindowSet::key(BlockHash h, int64_t i) {
  // splitmix64 of the full class's hash and the class number: a key no
  // other class (and no full-class hash, barring 64-bit collisions) uses.
  uint64_t x = h ^ (0x9E3779B97F4A7C15ull * uint64_t(i + 1));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x == kNoHash ? x - 1 : x;
}

bool WindowSet::reservesFor(int64_t fullBlocks) const {
  // A new request's reserves, on top of what is promised already; the
  // full class's own blocks come out of its pool first when shared.
  for (const Window &w : windows_) {
    int64_t want = debt(w.pool);
    for (const Window &o : windows_)
      if (o.pool == w.pool)
        want += o.cfg.reserveBlocks;
    if (w.pool == fullPool_)
      want += fullBlocks;
    if (!w.pool->hasFree(want))
      return false;
  }
  return true;
}

int64_t WindowSet::jointHit(const Request &r, int64_t indexed) {
  size_t hbs = size_t(blockSize_);
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    w.hitScratch.assign(size_t(indexed), kNoBlock);
    w.runScratch.assign(size_t(indexed), 0);
    // Only the blocks some hit <= `indexed` can need: from the window of
    // the largest candidate down is enough for it, but a smaller candidate
    // needs earlier blocks, so look at every block (one probe each).
    for (int64_t i = 0; i < indexed; ++i) {
      BlockId b = w.pool->lookup(key(r.hashCache[size_t(i)], int64_t(c)));
      bool present = b.valid() && w.pool->tokensMatch(b, hbs, r.printCache[size_t(i)]);
      if (present)
        w.hitScratch[size_t(i)] = b;
      w.runScratch[size_t(i)] = present ? (i > 0 ? w.runScratch[size_t(i - 1)] : 0) + 1 : 0;
    }
  }
  for (int64_t k = indexed; k > 0; --k) {
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

void WindowSet::releaseBlock(Window &w, BlockId b) {
  (void)w.pool->free(b);
  if (!w.pool->isUsed(b))
    --w.physical;
}

void WindowSet::release(Request &r) {
  for (size_t c = 0; c < r.windowTables.size() && c < windows_.size(); ++c) {
    Window &w = windows_[c];
    std::vector<BlockId> &t = r.windowTables[c];
    for (auto it = t.rbegin(); it != t.rend(); ++it)
      if (it->valid())
        releaseBlock(w, *it);
    if (r.windowsReserved)
      w.reserved -= w.cfg.reserveBlocks;
  }
  r.windowTables.clear();
  r.windowsReserved = false;
}

Status WindowSet::claimHits(Request &r, int64_t numCached) {
  r.windowTables.assign(windows_.size(), {});
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    w.reserved += w.cfg.reserveBlocks;
  }
  r.windowsReserved = true;
  size_t hbs = size_t(blockSize_);
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    std::vector<BlockId> &t = r.windowTables[c];
    t.assign(size_t(numCached), kNoBlock);
    int64_t from = w.cfg.pattern.keptFrom(numCached * blockSize_, 0, blockSize_);
    for (int64_t i = from; i < numCached; ++i) {
      BlockHash k = key(r.hashCache[size_t(i)], int64_t(c));
      BlockId b = size_t(i) < w.hitScratch.size() ? w.hitScratch[size_t(i)] : kNoBlock;
      if (!w.pool->indexedAs(b, k)) {
        b = w.pool->lookup(k);
        cachedetail::ensureTokenPrints(r, numCached, blockSize_);
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

Status WindowSet::publish(const Request &r, int64_t block, BlockHash h,
                          const int32_t *tokens, size_t numTokens) {
  for (size_t c = 0; c < r.windowTables.size(); ++c) {
    const std::vector<BlockId> &t = r.windowTables[c];
    if (size_t(block) >= t.size() || !t[size_t(block)].valid())
      continue;
    Status s = windows_[c].pool->publish(t[size_t(block)], key(h, int64_t(c)),
                                         tokens, numTokens);
    if (!s.ok())
      return s;
  }
  return Status::success();
}

int64_t WindowSet::forwardLimit(const Request &r, int64_t end) const {
  if (windows_.empty() || r.windowTables.size() != windows_.size())
    return end;
  int64_t limit = end;
  for (size_t c = 0; c < windows_.size(); ++c) {
    const Window &w = windows_[c];
    const std::vector<BlockId> &t = r.windowTables[c];
    int64_t from = w.cfg.pattern.keptFrom(r.numCachedTokens, margin_, blockSize_);
    int64_t held = 0;
    for (int64_t j = std::max<int64_t>(0, from); j < int64_t(t.size()); ++j)
      if (t[size_t(j)].valid())
        ++held;
    int64_t blocks = int64_t(t.size()) + w.cfg.reserveBlocks - held;
    limit = std::min(limit, blocks * blockSize_);
  }
  return limit;
}

Status WindowSet::prepare(Request &r, int64_t end) {
  if (windows_.empty())
    return Status::success();
  if (!r.allocated || r.windowTables.size() != windows_.size())
    return Error{ErrorKind::State, "prepare_windows: request " + std::to_string(r.id) +
                                       " is not allocated"};
  if (end < r.numCachedTokens)
    return Error::invalid("prepare_windows: a forward to " + std::to_string(end) +
                          " ends before the computed mark " +
                          std::to_string(r.numCachedTokens));
  if (forwardLimit(r, end) < end)
    return Error{ErrorKind::State,
                 "prepare_windows: a forward from " + std::to_string(r.numCachedTokens) +
                     " to " + std::to_string(end) +
                     " needs more blocks than a window class reserves per request; "
                     "cap it at " + std::to_string(forwardLimit(r, end))};
  int64_t target = ceilDiv(end, blockSize_);
  // Release first (it can only help), then check, then take.
  for (size_t c = 0; c < windows_.size(); ++c) {
    Window &w = windows_[c];
    std::vector<BlockId> &t = r.windowTables[c];
    int64_t from = std::min<int64_t>(
        int64_t(t.size()), w.cfg.pattern.keptFrom(r.numCachedTokens, margin_, blockSize_));
    for (int64_t j = from - 1; j >= 0; --j) {
      if (!t[size_t(j)].valid())
        break; // released before, with everything under it
      releaseBlock(w, t[size_t(j)]);
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

//===----------------------------------------------------------------------===//
// The cache manager's window calls.
//===----------------------------------------------------------------------===//

int64_t CacheManager::numWindowClasses() const { return windows_->size(); }

const WindowClassConfig &CacheManager::windowClass(int64_t i) const {
  return windows_->config(i);
}

BlockPool &CacheManager::windowPool(int64_t i) { return windows_->pool(i); }

BlockHash CacheManager::windowKey(BlockHash h, int64_t i) const {
  return WindowSet::key(h, i);
}

int64_t CacheManager::windowForwardLimit(const Request &r, int64_t end) const {
  return windows_->forwardLimit(r, end);
}

Status CacheManager::prepareWindows(Request &r, int64_t end) {
  return windows_->prepare(r, end);
}

} // namespace poolrt
