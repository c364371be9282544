//===- StateGroupPool.cpp - Per-request state groups + fork checkpoints ---===//

#include "poolrt/StateGroupPool.h"

#include <algorithm>
#include <limits>

namespace poolrt {

namespace {
constexpr int32_t kNone = -1;
} // namespace

Result<StateGroupPool> StateGroupPool::create(int64_t numGroups,
                                              StateTransfer transfer,
                                              int64_t hashBlockSize,
                                              bool enabled) {
  if (transfer.copies())
    return Error::invalid(
        "PAGE-copy checkpoints do not belong to StateGroupPool");
  if (numGroups < 0 || numGroups > std::numeric_limits<int32_t>::max())
    return Error::invalid("StateGroupPool: num_groups " +
                          std::to_string(numGroups) +
                          " outside [0, 2147483647]");
  if (hashBlockSize < 1)
    return Error::invalid("StateGroupPool: hash_block_size " +
                          std::to_string(hashBlockSize) + " must be >= 1");
  StateGroupPool pool;
  pool.transfer_ = std::move(transfer);
  pool.hashBlockSize_ = hashBlockSize;
  pool.enabled_ = enabled && numGroups > 0;
  pool.growSlots(int32_t(numGroups));
  for (int32_t g = 0; g < int32_t(numGroups); ++g)
    pool.fileFree(g);
  pool.numGroups_ = int32_t(numGroups);
  return pool;
}

Error StateGroupPool::misuse(const char *op, GroupId g,
                             const std::string &what) const {
  return Error{ErrorKind::Internal, std::string("StateGroupPool.") + op +
                                        "(group " + std::to_string(g.value) +
                                        "): " + what};
}

Error StateGroupPool::outOfRange(const char *op, GroupId g) const {
  return Error::invalid(std::string("StateGroupPool.") + op + "(group " +
                        std::to_string(g.value) +
                        "): no such group (pool has " +
                        std::to_string(numGroups_) + ")");
}

//===----------------------------------------------------------------------===//
// Slots, the LRU list and the vacant set.
//===----------------------------------------------------------------------===//

void StateGroupPool::growSlots(int32_t count) {
  if (count <= slotCount())
    return;
  state_.resize(count, Slot::Held);
  hash_.resize(count, 0);
  hasHash_.resize(count, 0);
  lruPrev_.resize(count, kNone);
  lruNext_.resize(count, kNone);
  pins_.resize(count, 0);
  deferred_.resize(count, 0);
  pinnedPos_.resize(count, kNone);
  // Both fixed-capacity structures are rebuilt at the new size (extend is
  // rare: a change of the state pool's budget share).
  detail::MinIdSet vacant(count);
  if (numVacant_ > 0)
    for (int32_t g = 0; g < vacant_.capacity(); ++g)
      if (vacant_.contains(g))
        vacant.insert(g);
  vacant_ = std::move(vacant);
  detail::HashIndex index(count);
  index_.forEach([&](uint64_t h, int32_t g) { index.insertOrAssign(h, g); });
  index_ = std::move(index);
}

void StateGroupPool::lruAppend(int32_t g) {
  lruPrev_[g] = lruTail_;
  lruNext_[g] = kNone;
  if (lruTail_ != kNone)
    lruNext_[lruTail_] = g;
  else
    lruHead_ = g;
  lruTail_ = g;
  ++numCheckpointed_;
}

void StateGroupPool::lruUnlink(int32_t g) {
  int32_t p = lruPrev_[g], n = lruNext_[g];
  (p != kNone ? lruNext_[p] : lruHead_) = n;
  (n != kNone ? lruPrev_[n] : lruTail_) = p;
  lruPrev_[g] = lruNext_[g] = kNone;
  --numCheckpointed_;
}

void StateGroupPool::fileFree(int32_t g) {
  if (hasHash_[g]) {
    state_[g] = Slot::Checkpointed;
    lruAppend(g);
  } else {
    state_[g] = Slot::Vacant;
    vacant_.insert(g);
    ++numVacant_;
  }
  ++numFree_;
}

void StateGroupPool::unfileFree(int32_t g) {
  if (state_[g] == Slot::Checkpointed) {
    lruUnlink(g);
  } else {
    vacant_.erase(g);
    --numVacant_;
  }
  state_[g] = Slot::Held;
  --numFree_;
}

int32_t StateGroupPool::lowestVacant() const { return vacant_.lowest(); }

void StateGroupPool::setHash(int32_t g, std::optional<BlockHash> h) {
  bool free = state_[g] == Slot::Vacant || state_[g] == Slot::Checkpointed;
  if (free)
    unfileFree(g);
  hasHash_[g] = h.has_value();
  hash_[g] = h.value_or(0);
  if (free)
    fileFree(g);
}

//===----------------------------------------------------------------------===//
// Free list.
//===----------------------------------------------------------------------===//

bool StateGroupPool::isFree(GroupId g) const {
  return inPool(g) && (state_[g.value] == Slot::Vacant ||
                       state_[g.value] == Slot::Checkpointed);
}

bool StateGroupPool::holdsCheckpoint(GroupId g) const {
  return inPool(g) && state_[g.value] == Slot::Checkpointed;
}

namespace {
const char *const kNoFreeGroup = "StateGroupPool.pop: no free group (check hasFree first)";
} // namespace

bool StateGroupPool::isOutOfGroups(const Error &e) { return e.message == kNoFreeGroup; }

Result<GroupId> StateGroupPool::pop() {
  int32_t g = lowestVacant();
  if (g == kNone) {
    if (lruHead_ == kNone)
      return Error{ErrorKind::Internal, kNoFreeGroup};
    g = lruHead_;
    ++fates_.evicted;
  }
  unfileFree(g);
  invalidateUnchecked(g);
  return GroupId(g);
}

Status StateGroupPool::claim(GroupId g) {
  if (!inPool(g))
    return outOfRange("claim", g);
  if (!isFree(g))
    return misuse("claim", g, "group is not free");
  unfileFree(g.value);
  return Status::success();
}

Status StateGroupPool::release(GroupId g) {
  if (!inPool(g))
    return outOfRange("release", g);
  if (isFree(g))
    return misuse("release", g, "group is already free");
  if (pins_[g.value] > 0)
    return misuse("release", g,
                  "group is pinned; releasePins or dropReader returns it");
  fileFree(g.value);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Index.
//===----------------------------------------------------------------------===//

void StateGroupPool::invalidateUnchecked(int32_t g) {
  if (!enabled_ || !hasHash_[g])
    return;
  BlockHash h = hash_[g];
  setHash(g, std::nullopt);
  if (index_.find(h) == g)
    index_.erase(h);
}

Status StateGroupPool::index(BlockHash h, GroupId g) {
  if (!inPool(g))
    return outOfRange("index", g);
  if (!enabled_)
    return Status::success();
  invalidateUnchecked(g.value);
  int32_t prev = index_.insertOrAssign(h, g.value);
  setHash(g.value, h);
  // Re-filing a hash orphans its previous group: clear that back-pointer
  // directly (invalidate would take the entry just written with it).
  if (prev != detail::HashIndex::kAbsent && prev != g.value)
    setHash(prev, std::nullopt);
  return Status::success();
}

Status StateGroupPool::invalidate(GroupId g) {
  if (!inPool(g))
    return outOfRange("invalidate", g);
  invalidateUnchecked(g.value);
  return Status::success();
}

GroupId StateGroupPool::unindex(BlockHash h) {
  int32_t g = index_.find(h);
  if (g == detail::HashIndex::kAbsent)
    return kNoGroup;
  invalidateUnchecked(g);
  ++fates_.orphaned;
  return GroupId(g);
}

void StateGroupPool::clearIndex() {
  std::vector<int32_t> groups;
  groups.reserve(size_t(index_.size()));
  index_.forEach([&](uint64_t, int32_t g) { groups.push_back(g); });
  for (int32_t g : groups)
    invalidateUnchecked(g);
}

GroupId StateGroupPool::lookupGroup(BlockHash h) const {
  if (!enabled_)
    return kNoGroup;
  int32_t g = index_.find(h);
  return g == detail::HashIndex::kAbsent ? kNoGroup : GroupId(g);
}

//===----------------------------------------------------------------------===//
// State-cache protocol.
//===----------------------------------------------------------------------===//

Result<int64_t>
StateGroupPool::resumableHit(const StateHolder &seq, int64_t hitBlocks,
                             const std::vector<BlockHash> &hashes,
                             bool assumeCheckpointed) const {
  if (hitBlocks < 0 || uint64_t(hitBlocks) > hashes.size())
    return Error::invalid("StateGroupPool.resumableHit: hit_blocks " +
                          std::to_string(hitBlocks) + " outside [0, " +
                          std::to_string(hashes.size()) + "]");
  if (!applies(seq))
    return hitBlocks;
  // Q1: a class that can never be checkpointed (infinite successor room)
  // answers the counterfactual exactly as the real gate.
  bool assume = assumeCheckpointed && !(transfer_.kind() == TransferKind::None);
  const int64_t room = minForkTokens();
  for (int64_t i = hitBlocks - 1; i >= 0; --i) {
    if (!assume && index_.find(hashes[size_t(i)]) == detail::HashIndex::kAbsent)
      continue;
    int64_t covered, left;
    if (__builtin_mul_overflow(i + 1, hashBlockSize_, &covered) ||
        __builtin_sub_overflow(seq.numTokens, covered, &left))
      continue; // astronomically far: no room
    if (left >= room)
      return i + 1;
  }
  return int64_t(0);
}

Status StateGroupPool::checkpoint(StateHolder &seq, int64_t boundaryBlocks,
                                  BlockHash h) {
  (void)boundaryBlocks;
  if (!applies(seq) || !transfer_.forks() || !seq.group.valid())
    return Status::success();
  GroupId old = seq.group;
  if (!inPool(old))
    return outOfRange("checkpoint", old);
  if (isFree(old))
    return misuse("checkpoint", old, "the request's group is free");
  if (!hasFree()) {
    ++fates_.dropped;
    return Status::success();
  }
  Result<GroupId> fresh = pop();
  seq.group = fresh.value();
  seq.forkSource = old;
  // Filed while still Held: setHash leaves a held group where it is, and the
  // deferred pin keeps it off the free list until its reader ran.
  (void)index(h, old);
  pinUnchecked(old.value, /*deferred=*/true);
  ++fates_.kept;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Pins.
//===----------------------------------------------------------------------===//

int32_t StateGroupPool::pinCount(GroupId g) const {
  return inPool(g) ? pins_[g.value] : 0;
}

void StateGroupPool::pinUnchecked(int32_t g, bool deferred) {
  if (pins_[g]++ == 0) {
    pinnedPos_[g] = int32_t(pinned_.size());
    pinned_.push_back(g);
  }
  if (deferred)
    deferred_[g] = 1;
}

void StateGroupPool::dropPin(int32_t g) {
  pins_[g] = 0;
  deferred_[g] = 0;
  int32_t pos = pinnedPos_[g];
  int32_t last = pinned_.back();
  pinned_[size_t(pos)] = last;
  pinnedPos_[last] = pos;
  pinned_.pop_back();
  pinnedPos_[g] = kNone;
}

Status StateGroupPool::pin(GroupId g, bool readerIsNextBatch) {
  if (!inPool(g))
    return outOfRange("pin", g);
  if (isFree(g))
    return misuse("pin", g,
                  "group is free; only a held group can be pinned "
                  "(releasePins would release it twice)");
  pinUnchecked(g.value, readerIsNextBatch);
  return Status::success();
}

Status StateGroupPool::unpin(GroupId g) {
  if (!inPool(g))
    return outOfRange("unpin", g);
  if (pins_[g.value] == 0)
    return misuse("unpin", g, "group is not pinned");
  if (pins_[g.value] == 1)
    dropPin(g.value);
  else
    --pins_[g.value];
  return Status::success();
}

Status StateGroupPool::dropReader(GroupId g) {
  if (g == kNoGroup)
    return Status::success();
  // A reader may outlive its pin (the clock cleared it) and even the group
  // (retired since): any id the pool ever had is answered, unpinned = no-op.
  if (g.value < 0 || g.value >= slotCount())
    return outOfRange("dropReader", g);
  if (pins_[g.value] == 0)
    return Status::success();
  if (pins_[g.value] == 1) {
    dropPin(g.value);
    fileFree(g.value);
  } else {
    --pins_[g.value];
  }
  return Status::success();
}

void StateGroupPool::releasePins() {
  if (pinned_.empty())
    return;
  // Ascending order: releases append to the LRU tail, so the order is
  // observable.
  std::vector<int32_t> groups = pinned_;
  std::sort(groups.begin(), groups.end());
  for (int32_t g : groups) {
    if (deferred_[g]) {
      deferred_[g] = 0; // its reader is the batch this pass builds
      continue;
    }
    dropPin(g);
    fileFree(g);
  }
}

//===----------------------------------------------------------------------===//
// Resizing.
//===----------------------------------------------------------------------===//

Status StateGroupPool::extend(int64_t count) {
  if (count < 0 || count > std::numeric_limits<int32_t>::max() - numGroups_)
    return Error::invalid(
        "StateGroupPool.extend(" + std::to_string(count) +
        "): count must be in [0, " +
        std::to_string(std::numeric_limits<int32_t>::max() - numGroups_) + "]");
  int32_t top = numGroups_ + int32_t(count);
  growSlots(top);
  for (int32_t g = numGroups_; g < top; ++g) {
    // A retired slot is reused, never appended twice.
    hasHash_[g] = 0;
    hash_[g] = 0;
    state_[g] = Slot::Held;
    fileFree(g);
  }
  numGroups_ = top;
  return Status::success();
}

int32_t StateGroupPool::relocationTarget(int32_t exclude) {
  int32_t g = lowestVacant();
  if (g != kNone) {
    unfileFree(g);
    return g;
  }
  for (g = lruHead_; g != kNone; g = lruNext_[g]) {
    if (g == exclude)
      continue;
    unfileFree(g);
    invalidateUnchecked(g); // this checkpoint is what shrinking spends
    return g;
  }
  return kNone;
}

void StateGroupPool::rehomeCheckpoint(int32_t src, int32_t dst) {
  // dst takes src's place in the LRU list: a checkpoint that only changed
  // address has not been used, so its position is not refreshed.
  BlockHash h = hash_[src];
  int32_t p = lruPrev_[src], n = lruNext_[src];
  lruPrev_[dst] = p;
  lruNext_[dst] = n;
  (p != kNone ? lruNext_[p] : lruHead_) = dst;
  (n != kNone ? lruPrev_[n] : lruTail_) = dst;
  lruPrev_[src] = lruNext_[src] = kNone;
  state_[dst] = Slot::Checkpointed;
  state_[src] = Slot::Held;
  hasHash_[src] = 0;
  hash_[src] = 0;
  hasHash_[dst] = 1;
  hash_[dst] = h;
  index_.insertOrAssign(h, dst);
}

std::optional<GroupRetirement> StateGroupPool::retireTop() {
  int32_t top = numGroups_ - 1;
  if (top < 0 || pins_[top] > 0)
    return std::nullopt;
  bool held = state_[top] == Slot::Checkpointed;
  if (state_[top] == Slot::Vacant) {
    unfileFree(top);
    state_[top] = Slot::Retired;
    --numGroups_;
    return GroupRetirement{GroupId(top), kNoGroup, false};
  }
  int32_t dst = relocationTarget(top);
  if (dst == kNone && !held)
    return std::nullopt; // live top, nowhere to go: retry next pass
  if (dst == kNone) {
    // Nothing else free: the top is the last checkpoint, and LRU spends it.
    unfileFree(top);
    invalidateUnchecked(top);
  } else if (held) {
    rehomeCheckpoint(top, dst);
  } else if (hasHash_[top]) {
    // A live top filed under a hash: its bytes and owner move to dst, so
    // does the index entry (the reference left it naming the retired id).
    BlockHash h = hash_[top];
    hasHash_[top] = 0;
    hash_[top] = 0;
    hasHash_[dst] = 1;
    hash_[dst] = h;
    index_.insertOrAssign(h, dst);
  }
  state_[top] = Slot::Retired;
  --numGroups_;
  return GroupRetirement{GroupId(top), dst == kNone ? kNoGroup : GroupId(dst),
                         held};
}

Status StateGroupPool::recordRelocation(GroupId src, GroupId dst) {
  if (src.value < 0 || src.value >= slotCount())
    return outOfRange("recordRelocation", src);
  if (dst.value < 0 || dst.value >= slotCount())
    return outOfRange("recordRelocation", dst);
  if (src == dst)
    return misuse("recordRelocation", src, "source and destination are equal");
  relocations_.push_back({src, dst});
  return Status::success();
}

std::vector<GroupRelocation> StateGroupPool::takeRelocations() {
  std::vector<GroupRelocation> out;
  out.swap(relocations_);
  return out;
}

//===----------------------------------------------------------------------===//
// Introspection.
//===----------------------------------------------------------------------===//

std::optional<BlockHash> StateGroupPool::groupHash(GroupId g) const {
  if (g.value < 0 || g.value >= slotCount() || !hasHash_[g.value])
    return std::nullopt;
  return hash_[g.value];
}

std::vector<std::pair<BlockHash, GroupId>>
StateGroupPool::indexEntries() const {
  std::vector<std::pair<BlockHash, GroupId>> out;
  index_.forEach(
      [&](uint64_t h, int32_t g) { out.emplace_back(h, GroupId(g)); });
  std::sort(out.begin(), out.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  return out;
}

std::vector<GroupId> StateGroupPool::checkpointLru() const {
  std::vector<GroupId> out;
  for (int32_t g = lruHead_; g != kNone && out.size() <= state_.size();
       g = lruNext_[g])
    out.push_back(GroupId(g));
  return out;
}

bool StateGroupPool::invariantsHold(std::string *why) const {
  auto fail = [&](const std::string &msg) {
    if (why)
      *why = msg;
    return false;
  };
  auto at = [](int32_t g) { return " (group " + std::to_string(g) + ")"; };
  const int32_t slots = slotCount();
  if (numGroups_ < 0 || numGroups_ > slots)
    return fail("numGroups outside [0, slotCount]");
  if (hash_.size() != size_t(slots) || hasHash_.size() != size_t(slots) ||
      lruPrev_.size() != size_t(slots) || lruNext_.size() != size_t(slots) ||
      pins_.size() != size_t(slots) || deferred_.size() != size_t(slots) ||
      pinnedPos_.size() != size_t(slots) || vacant_.capacity() != slots)
    return fail("per-slot arrays disagree in size");
  int32_t vacant = 0, checkpointed = 0, hashed = 0, pinned = 0;
  for (int32_t g = 0; g < slots; ++g) {
    Slot s = state_[g];
    bool bit = vacant_.contains(g);
    if ((g < numGroups_) == (s == Slot::Retired))
      return fail("Retired exactly above numGroups violated" + at(g));
    if (bit != (s == Slot::Vacant))
      return fail("vacant bitmap disagrees with the state" + at(g));
    if (s == Slot::Vacant && hasHash_[g])
      return fail("a vacant group carries a hash" + at(g));
    if (s == Slot::Checkpointed && !hasHash_[g])
      return fail("a checkpointed group carries no hash" + at(g));
    if (s == Slot::Retired && (hasHash_[g] || pins_[g]))
      return fail("a retired slot carries a hash or a pin" + at(g));
    if (s != Slot::Checkpointed &&
        (lruPrev_[g] != kNone || lruNext_[g] != kNone))
      return fail("a group off the LRU list has links" + at(g));
    if (pins_[g] < 0 || (pins_[g] > 0 && s != Slot::Held))
      return fail("a pinned group is not held" + at(g));
    if (deferred_[g] && pins_[g] == 0)
      return fail("a deferred pin without a pin" + at(g));
    if ((pins_[g] > 0) != (pinnedPos_[g] != kNone))
      return fail("pinned list position disagrees with the count" + at(g));
    if (pinnedPos_[g] != kNone && (size_t(pinnedPos_[g]) >= pinned_.size() ||
                                   pinned_[size_t(pinnedPos_[g])] != g))
      return fail("pinned list does not hold the group" + at(g));
    if (hasHash_[g]) {
      ++hashed;
      if (index_.find(hash_[g]) != g)
        return fail("a group's hash does not index back to it" + at(g));
    }
    vacant += s == Slot::Vacant;
    checkpointed += s == Slot::Checkpointed;
    pinned += pins_[g] > 0;
  }
  if (vacant != numVacant_ || checkpointed != numCheckpointed_ ||
      numFree_ != vacant + checkpointed)
    return fail("free counts disagree with the states");
  if (pinned != int32_t(pinned_.size()))
    return fail("pinned list size disagrees");
  if (hashed != index_.size())
    return fail("index has entries no group carries");
  if (!enabled_ && index_.size() != 0)
    return fail("a disabled pool has index entries");
  int32_t walked = 0, prev = kNone;
  for (int32_t g = lruHead_; g != kNone; g = lruNext_[g]) {
    if (g < 0 || g >= slots || state_[g] != Slot::Checkpointed)
      return fail("LRU list holds a group that is not checkpointed" + at(g));
    if (lruPrev_[g] != prev)
      return fail("LRU back link broken" + at(g));
    if (++walked > checkpointed)
      return fail("LRU list longer than the checkpointed count");
    prev = g;
  }
  if (walked != checkpointed || lruTail_ != prev)
    return fail("LRU list does not hold every checkpointed group");
  return true;
}

} // namespace poolrt
