//===- PageUnitStore.cpp - State checkpoint images in PAGE units ----------===//
//
// See PageUnitStore.h for the record life cycle and its invariants.
//
//===----------------------------------------------------------------------===//

#include "poolrt/PageUnitStore.h"

#include "poolrt/Checked.h"

#include <algorithm>

namespace poolrt {

const char *checkpointStateName(CheckpointState s) {
  switch (s) {
  case CheckpointState::Copying:
    return "COPYING";
  case CheckpointState::Ready:
    return "READY";
  case CheckpointState::Evicting:
    return "EVICTING";
  }
  return "?";
}

Result<PagedStateCheckpointSpec>
PagedStateCheckpointSpec::create(int64_t pageUnitBytes, int64_t slotBytes,
                                 std::string layoutId, int64_t imageBytes,
                                 std::optional<int64_t> unitsPerCheckpoint) {
  const std::pair<const char *, int64_t> sizes[] = {
      {"page_unit_bytes", pageUnitBytes},
      {"slot_bytes", slotBytes},
      {"image_bytes", imageBytes}};
  for (const auto &[name, value] : sizes)
    if (value <= 0)
      return Error::invalid(std::string(name) + " must be a positive integer");
  if (imageBytes > slotBytes)
    return Error::invalid("image_bytes " + std::to_string(imageBytes) +
                          " exceeds the " + std::to_string(slotBytes) +
                          " a slot holds");
  if (layoutId.empty())
    return Error::invalid("paged state checkpoints need a non-empty layout id");
  int64_t units = ceilDiv(imageBytes, pageUnitBytes);
  if (unitsPerCheckpoint && *unitsPerCheckpoint != units)
    return Error::invalid("units_per_checkpoint " +
                          std::to_string(*unitsPerCheckpoint) +
                          " is not the " + std::to_string(units) +
                          " PAGE units of " + std::to_string(pageUnitBytes) +
                          " B that an image of " + std::to_string(imageBytes) +
                          " B spans");
  PagedStateCheckpointSpec s;
  s.unitsPerCheckpoint_ = units;
  s.pageUnitBytes_ = pageUnitBytes;
  s.slotBytes_ = slotBytes;
  s.imageBytes_ = imageBytes;
  s.layoutId_ = std::move(layoutId);
  return s;
}

// Every live record holds units_per_checkpoint (>= 1) of the pool's blocks,
// so the pool's size bounds how many records can exist at once.
static int64_t maxRecords(const BlockPool &pool,
                          const PagedStateCheckpointSpec &spec) {
  return pool.maxBlocks() / spec.unitsPerCheckpoint() + 1;
}

PageUnitCheckpointStore::PageUnitCheckpointStore(BlockPool &pool,
                                                 PagedStateCheckpointSpec spec)
    : pool(pool), spec_(std::move(spec)), idToSlot(maxRecords(pool, spec_)),
      readyByHash(maxRecords(pool, spec_)),
      pendingByHash(maxRecords(pool, spec_)) {}

//===----------------------------------------------------------------------===//
// Records and the LRU.
//===----------------------------------------------------------------------===//

int32_t PageUnitCheckpointStore::slotOf(CheckpointId id) const {
  if (!id.valid())
    return kNil;
  return idToSlot.find(uint64_t(id.value));
}

Status PageUnitCheckpointStore::relocateUnit(int64_t owner, int32_t piece,
                                             BlockId from, BlockId to) {
  int32_t s = slotOf(CheckpointId(owner));
  if (s == kNil || piece < 0 ||
      size_t(piece) >= slots[size_t(s)].unitIds.size() ||
      slots[size_t(s)].unitIds[size_t(piece)] != from)
    return Error{ErrorKind::Internal,
                 "relocate_unit: checkpoint " + std::to_string(owner) +
                     " does not hold unit " + std::to_string(from.value) +
                     " as piece " + std::to_string(piece)};
  slots[size_t(s)].unitIds[size_t(piece)] = to;
  return Status();
}

void PageUnitCheckpointStore::relocateSlot(SlotIndex from, SlotIndex to) {
  for (Intent &i : intents)
    if (i.srcSlot == from)
      i.srcSlot = to;
}

std::optional<CheckpointRecordView>
PageUnitCheckpointStore::record(CheckpointId id) const {
  int32_t s = slotOf(id);
  if (s == kNil)
    return std::nullopt;
  const Record &r = slots[size_t(s)];
  return CheckpointRecordView{r.id, r.prefixHash, r.state, r.pinCount,
                              &r.unitIds};
}

void PageUnitCheckpointStore::lruUnlink(int32_t s) {
  if (lru.contains(s))
    lru.unlink(s);
}

void PageUnitCheckpointStore::releaseRecord(int32_t s) {
  Record &r = slots[size_t(s)];
  lruUnlink(s);
  if (readyByHash.find(r.prefixHash) == s)
    readyByHash.erase(r.prefixHash);
  if (pendingByHash.find(r.prefixHash) == s)
    pendingByHash.erase(r.prefixHash);
  Status st = pool.releaseUnits(r.unitIds, ownerOf(r.id));
  if (!st.ok() && health_.ok())
    health_ = Status(
        Error{ErrorKind::Internal,
              "checkpoint " + std::to_string(r.id.value) +
                  ": releasing its units failed: " + st.error().message});
  idToSlot.erase(uint64_t(r.id.value));
  r = Record{};
  freeSlots.push_back(s);
  --liveRecords;
}

//===----------------------------------------------------------------------===//
// Queries and eviction.
//===----------------------------------------------------------------------===//

CheckpointId PageUnitCheckpointStore::lookup(BlockHash h) const {
  int32_t s = readyByHash.find(h);
  if (s == kNil || slots[size_t(s)].state != CheckpointState::Ready)
    return kNoCheckpoint;
  return slots[size_t(s)].id;
}

bool PageUnitCheckpointStore::containsOrPending(BlockHash h) const {
  return contains(h) || pendingByHash.find(h) != kNil;
}

// The one statement of what may be spent; eligibility, not policy.
bool PageUnitCheckpointStore::evictable(int32_t s,
                                        int32_t protectedSlot) const {
  const Record &r = slots[size_t(s)];
  return s != protectedSlot && r.state == CheckpointState::Ready &&
         r.pinCount == 0;
}

// The policy: least recently used among the eligible.
int32_t PageUnitCheckpointStore::nextVictim() const {
  for (int32_t s = lru.front(); s != kNil; s = lru.next(s))
    if (evictable(s, kNil))
      return s;
  return kNil;
}

bool PageUnitCheckpointStore::hasAvailableUnits(
    int64_t count, std::optional<BlockHash> protectedHash) const {
  if (count <= pool.numFree())
    return true;
  int32_t protectedSlot = kNil;
  if (protectedHash) {
    CheckpointId p = lookup(*protectedHash);
    protectedSlot = p.valid() ? slotOf(p) : kNil;
  }
  int64_t shortfall = count - pool.numFree();
  for (int32_t s = lru.front(); s != kNil; s = lru.next(s)) {
    if (!evictable(s, protectedSlot))
      continue;
    shortfall -= int64_t(slots[size_t(s)].unitIds.size());
    if (shortfall <= 0)
      return true;
  }
  return false;
}

int64_t PageUnitCheckpointStore::reclaimableUnits() const {
  int64_t units = 0;
  for (int32_t s = lru.front(); s != kNil; s = lru.next(s))
    if (evictable(s, kNil))
      units += int64_t(slots[size_t(s)].unitIds.size());
  return units;
}

void PageUnitCheckpointStore::evict(int32_t s) {
  Record &r = slots[size_t(s)];
  if (readyByHash.find(r.prefixHash) == s)
    readyByHash.erase(r.prefixHash);
  r.state = CheckpointState::Evicting;
  lruUnlink(s);
  releaseRecord(s);
  ++evictions_;
}

bool PageUnitCheckpointStore::ensureFreeUnits(int64_t count) {
  // Refuse up front: never destroy the cache just to say no.
  if (!hasAvailableUnits(count))
    return false;
  while (pool.numFree() < count) {
    int32_t victim = nextVictim();
    if (victim == kNil)
      return false;
    evict(victim);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Life cycle.
//===----------------------------------------------------------------------===//

std::optional<CheckpointStoreOp>
PageUnitCheckpointStore::beginStore(BlockHash h, SlotIndex srcSlot) {
  if (h == kNoHash || containsOrPending(h))
    return std::nullopt;
  int64_t needed = unitsPerCheckpoint();
  if (!ensureFreeUnits(needed))
    return std::nullopt;
  CheckpointId id(nextId++);
  auto units = pool.reserveUnits(needed, ownerOf(id));
  if (!units.ok() || !units.value().has_value())
    return std::nullopt;
  int32_t s;
  if (!freeSlots.empty()) {
    s = freeSlots.back();
    freeSlots.pop_back();
  } else {
    s = int32_t(slots.size());
    slots.emplace_back();
    lru.reserveIds(slots.size());
  }
  Record &r = slots[size_t(s)];
  r.id = id;
  r.prefixHash = h;
  r.unitIds = std::move(*units.value());
  r.state = CheckpointState::Copying;
  r.pinCount = 0;
  r.live = true;
  r.storeInflight = true;
  idToSlot.insertOrAssign(uint64_t(id.value), s);
  pendingByHash.insertOrAssign(h, s);
  inflightStores.push_back(id);
  ++liveRecords;
  return CheckpointStoreOp{srcSlot, r.unitIds, spec_.imageBytes(),
                           spec_.layoutId()};
}

std::optional<CheckpointRestoreOp>
PageUnitCheckpointStore::beginRestore(BlockHash h, SlotIndex dstSlot) {
  CheckpointId id = lookup(h);
  if (!id.valid())
    return std::nullopt;
  int32_t s = slotOf(id);
  Record &r = slots[size_t(s)];
  ++r.pinCount;
  lruUnlink(s); // LRU refresh
  lru.pushBack(s);
  CheckpointRestoreOp op{dstSlot, r.unitIds, spec_.imageBytes(),
                         spec_.layoutId()};
  queuedRestores.emplace_back(id, op);
  return op;
}

std::vector<CheckpointRestoreOp> PageUnitCheckpointStore::takeRestoreOps() {
  std::vector<CheckpointRestoreOp> ops;
  ops.reserve(queuedRestores.size());
  for (auto &[id, op] : queuedRestores) {
    inflightRestores.push_back(id);
    ops.push_back(std::move(op));
  }
  queuedRestores.clear();
  return ops;
}

void PageUnitCheckpointStore::releaseRestorePin(CheckpointId id) {
  int32_t s = slotOf(id);
  if (s == kNil)
    return;
  Record &r = slots[size_t(s)];
  if (r.pinCount <= 0) {
    if (health_.ok())
      health_ = Status(
          Error{ErrorKind::Internal, "checkpoint " + std::to_string(id.value) +
                                         ": restore pin underflow"});
    return;
  }
  if (--r.pinCount == 0 && r.state == CheckpointState::Evicting &&
      !r.storeInflight)
    releaseRecord(s);
}

void PageUnitCheckpointStore::cancelQueuedRestore(SlotIndex dstSlot) {
  std::vector<std::pair<CheckpointId, CheckpointRestoreOp>> keep;
  std::vector<CheckpointId> cancelled;
  for (auto &entry : queuedRestores) {
    if (entry.second.dstSlot == dstSlot)
      cancelled.push_back(entry.first);
    else
      keep.push_back(std::move(entry));
  }
  queuedRestores = std::move(keep);
  for (CheckpointId id : cancelled)
    releaseRestorePin(id);
}

void PageUnitCheckpointStore::completeInflight() {
  std::vector<CheckpointId> stores;
  stores.swap(inflightStores);
  for (CheckpointId id : stores) {
    int32_t s = slotOf(id);
    if (s == kNil)
      continue;
    Record &r = slots[size_t(s)];
    r.storeInflight = false;
    if (pendingByHash.find(r.prefixHash) == s)
      pendingByHash.erase(r.prefixHash);
    if (r.state == CheckpointState::Evicting) {
      if (r.pinCount == 0)
        releaseRecord(s);
      continue;
    }
    if (r.state != CheckpointState::Copying)
      continue;
    // Publish only after the scatter has ridden a batch; a duplicate that
    // lost the race gives its units back.
    if (lookup(r.prefixHash).valid()) {
      releaseRecord(s);
      continue;
    }
    r.state = CheckpointState::Ready;
    readyByHash.insertOrAssign(r.prefixHash, s);
    lru.pushBack(s);
  }
  std::vector<CheckpointId> restores;
  restores.swap(inflightRestores);
  for (CheckpointId id : restores)
    releaseRestorePin(id);
}

bool PageUnitCheckpointStore::unindex(BlockHash h) {
  int32_t s = readyByHash.erase(h);
  if (s == kNil)
    s = pendingByHash.erase(h);
  if (s == kNil)
    return false;
  Record &r = slots[size_t(s)];
  r.state = CheckpointState::Evicting;
  lruUnlink(s);
  // Units stay while a queued writer or a reader can still touch them.
  if (!r.storeInflight && r.pinCount == 0)
    releaseRecord(s);
  return true;
}

void PageUnitCheckpointStore::clear() {
  readyByHash.clear();
  pendingByHash.clear();
  for (int32_t s = 0; s < int32_t(slots.size()); ++s) {
    Record &r = slots[size_t(s)];
    if (!r.live)
      continue;
    lruUnlink(s);
    r.state = CheckpointState::Evicting;
    if (!r.storeInflight && r.pinCount == 0)
      releaseRecord(s);
  }
  lru.clear();
}

//===----------------------------------------------------------------------===//
// Checkpoint intents.
//===----------------------------------------------------------------------===//

void PageUnitCheckpointStore::requestCheckpoint(int64_t requester, BlockHash h,
                                                SlotIndex srcSlot) {
  forgetRequester(requester);
  intents.push_back(Intent{requester, h, srcSlot});
}

void PageUnitCheckpointStore::forgetRequester(int64_t requester) {
  intents.erase(
      std::remove_if(intents.begin(), intents.end(),
                     [&](const Intent &i) { return i.requester == requester; }),
      intents.end());
}

void PageUnitCheckpointStore::detachRequester(int64_t requester) {
  for (Intent &i : intents)
    if (i.requester == requester && !i.detached) {
      i.requester = nextDetached++;
      i.detached = true;
      ++numDetached;
    }
}

PageUnitCheckpointStore::CheckpointOps
PageUnitCheckpointStore::takeCheckpointOps() {
  CheckpointOps ops;
  std::vector<Intent> pending;
  pending.swap(intents);
  numDetached = 0;
  for (const Intent &i : pending) {
    if (i.srcSlot.value < 0 || containsOrPending(i.hash))
      continue;
    auto op = beginStore(i.hash, i.srcSlot);
    if (!op) {
      ++dropped;
      continue;
    }
    ++kept;
    ops.stores.push_back(std::move(*op));
  }
  ops.restores = takeRestoreOps();
  return ops;
}

//===----------------------------------------------------------------------===//
// Invariants.
//===----------------------------------------------------------------------===//

Status PageUnitCheckpointStore::checkInvariants() const {
  auto fail = [](const std::string &what) {
    return Status(Error{ErrorKind::Internal,
                        "PageUnitCheckpointStore invariant: " + what});
  };
  int64_t live = 0, ready = 0;
  for (int32_t s = 0; s < int32_t(slots.size()); ++s) {
    const Record &r = slots[size_t(s)];
    if (!r.live)
      continue;
    ++live;
    std::string name = "checkpoint " + std::to_string(r.id.value);
    if (slotOf(r.id) != s)
      return fail(name + ": id map disagrees");
    if (int64_t(r.unitIds.size()) != unitsPerCheckpoint())
      return fail(name + ": holds the wrong number of units");
    for (BlockId u : r.unitIds)
      if (pool.state(u) != BlockState::RawUnit)
        return fail(name + ": unit " + std::to_string(u.value) +
                    " is not a reserved raw unit");
    if (r.pinCount < 0)
      return fail(name + ": negative pin count");
    bool isReady = r.state == CheckpointState::Ready;
    ready += isReady;
    if (lru.contains(s) != isReady)
      return fail(name + ": LRU membership disagrees with its state");
    if (isReady && readyByHash.find(r.prefixHash) != s)
      return fail(name + ": READY but not indexed");
    if (r.state == CheckpointState::Copying &&
        pendingByHash.find(r.prefixHash) != s)
      return fail(name + ": COPYING but not pending");
    if (r.state == CheckpointState::Copying && !r.storeInflight)
      return fail(name + ": COPYING with no store in flight");
    if (r.state == CheckpointState::Evicting && !r.storeInflight &&
        r.pinCount == 0)
      return fail(name + ": EVICTING, unpinned and idle, yet not released");
  }
  if (live != liveRecords)
    return fail("record count");
  int64_t walked = 0;
  for (int32_t s = lru.front(); s != kNil; s = lru.next(s))
    if (++walked > ready)
      return fail("LRU runs past the READY records");
  if (walked != ready)
    return fail("LRU does not hold every READY record");
  return pool.checkInvariants();
}

} // namespace poolrt
