//===- BlockPool.cpp - Paged blocks, ref counts, content index ------------===//
//
// See BlockPool.h for the design, the invariants and the differences from the
// reference (Q2, Q8).
//
//===----------------------------------------------------------------------===//

#include "poolrt/BlockPool.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>

namespace poolrt {

const char *blockStateName(BlockState s) {
  switch (s) {
  case BlockState::Vacant:
    return "vacant";
  case BlockState::Cached:
    return "cached";
  case BlockState::Popped:
    return "popped";
  case BlockState::Held:
    return "held";
  case BlockState::RawUnit:
    return "raw unit";
  case BlockState::Retired:
    return "retired";
  }
  return "?";
}

std::string UnitOwner::str() const {
  return "('" + tag + "', " + std::to_string(id) + ")";
}

Result<BlockPool> BlockPool::create(int64_t numBlocks,
                                    std::optional<int64_t> maxBlocks,
                                    EvictCallback onEvict) {
  int64_t max = maxBlocks.value_or(numBlocks);
  if (numBlocks < 0 || numBlocks > max)
    return Error::invalid(std::to_string(numBlocks) + " blocks outside 0.." +
                          std::to_string(max));
  // Ids are int32 and -1 is "no block"; keep one spare below INT32_MAX.
  if (max > int64_t(std::numeric_limits<int32_t>::max()) - 1)
    return Error::invalid("max_blocks " + std::to_string(max) +
                          " exceeds the 32-bit block id range");
  return BlockPool(int32_t(numBlocks), int32_t(max), std::move(onEvict));
}

BlockPool::BlockPool(int32_t numBlocks, int32_t maxBlocks,
                     EvictCallback onEvict)
    : meta(size_t(maxBlocks)), lru(size_t(maxBlocks)),
      tokens(size_t(maxBlocks)),
      rawOwner(size_t(maxBlocks)), vacant(maxBlocks),
      index(maxBlocks, kIndexSlotsPerEntry), numBlocks_(numBlocks),
      numFree_(numBlocks), onEvict(std::move(onEvict)) {
  for (int32_t b = 0; b < numBlocks; ++b) {
    meta[size_t(b)].state = BlockState::Vacant;
    vacant.insert(b);
  }
}

Error BlockPool::noFreeBlocks() {
  return Error{ErrorKind::Internal, "No free blocks available"};
}

Error BlockPool::noHashPublished(BlockId b) {
  return Error::invalid("publish of block " + std::to_string(b.value) +
                        ": the hash is the no-hash sentinel");
}

Error BlockPool::refuse(Op op, BlockId b) const {
  static const char *const names[] = {"allocate", "claim", "free", "publish"};
  std::string msg = std::string(names[int(op)]) + " of block " +
                    std::to_string(b.value) + ": ";
  if (!inPool(b))
    return Error{ErrorKind::Internal, msg + "outside the pool of " +
                                          std::to_string(numBlocks_) +
                                          " blocks"};
  const Meta &m = meta[size_t(b.value)];
  if (m.state == BlockState::RawUnit && op == Op::Free) // the reference's words
    return Error{ErrorKind::Internal,
                 "block " + std::to_string(b.value) +
                     " is a reserved raw unit; use release_units"};
  const char *why = "not held"; // Q2: free of a block nobody holds
  if (m.state == BlockState::RawUnit)
    why = "is a reserved raw unit";
  else if (op == Op::Allocate && m.state == BlockState::Held)
    why = "already held";
  return Error{ErrorKind::Internal, msg + why + " (" + blockStateName(m.state) +
                                        ", ref_count " +
                                        std::to_string(m.refCount) + ")"};
}

//===----------------------------------------------------------------------===//
// Reading one block.
//===----------------------------------------------------------------------===//


Result<int32_t> BlockPool::refCount(BlockId b) const {
  if (b.value < 0 || b.value >= maxBlocks())
    return Error{ErrorKind::Lookup,
                 "BlockPool.ref_count(block " + std::to_string(b.value) +
                     "): no such block (ids are [0, " +
                     std::to_string(maxBlocks()) + "))"};
  return meta[size_t(b.value)].refCount;
}

BlockHash BlockPool::hash(BlockId b) const {
  if (b.value < 0 || b.value >= maxBlocks())
    return kNoHash;
  return meta[size_t(b.value)].hash;
}

const std::vector<int32_t> &BlockPool::tokenIds(BlockId b) const {
  static const std::vector<int32_t> none;
  if (b.value < 0 || b.value >= maxBlocks())
    return none;
  return tokens[size_t(b.value)];
}

//===----------------------------------------------------------------------===//
// Content index.
//===----------------------------------------------------------------------===//

void BlockPool::setTokens(int32_t b, const int32_t *toks, size_t n) {
  tokens[size_t(b)].assign(toks, toks + n);
  meta[size_t(b)].hasTokens = n > 0;
  meta[size_t(b)].print = n > 0 ? tokenPrint(toks, n) : 0;
  meta[size_t(b)].printCount = uint32_t(n);
}

// Q8: a block whose hash `publish` re-pointed elsewhere is unreachable now.
// Held, it keeps the hash until freed; free, it leaves the cached half.
void BlockPool::dropDisplaced(int32_t b) {
  Meta &d = meta[size_t(b)];
  d.indexed = false;
  if (d.state == BlockState::Cached) {
    lru.unlink(b);
    forgetContent(b);
    d.state = BlockState::Vacant;
    vacant.insert(b);
  }
}

void BlockPool::clearIndex() {
  index.clear();
  for (int32_t b = 0; b < maxBlocks(); ++b) {
    Meta &m = meta[size_t(b)];
    m.indexed = false;
    if (m.state == BlockState::Held || m.state == BlockState::RawUnit)
      continue; // live content stays, now unreachable
    forgetContent(b);
    if (m.state == BlockState::Cached) {
      m.state = BlockState::Vacant;
      vacant.insert(b);
    }
  }
  lru.clear();
}

//===----------------------------------------------------------------------===//
// Raw units.
//===----------------------------------------------------------------------===//

int32_t BlockPool::internTag(const std::string &tag) {
  for (size_t i = 0; i < ownerTags.size(); ++i)
    if (ownerTags[i] == tag)
      return int32_t(i);
  ownerTags.push_back(tag);
  return int32_t(ownerTags.size() - 1);
}

std::string BlockPool::ownerText(const RawOwner &o) const {
  if (o.tag < 0)
    return "None";
  return "(" + UnitOwner{ownerTags[size_t(o.tag)], o.id}.str() + ", " +
         std::to_string(o.piece) + ")";
}

Result<std::optional<std::vector<BlockId>>>
BlockPool::reserveUnits(int64_t count, const UnitOwner &owner) {
  if (count < 0)
    return Error::invalid("unit count must be non-negative, got " +
                          std::to_string(count));
  if (owner.tag.empty())
    return Error::invalid("a raw-unit reservation needs an owner");
  if (!hasFree(count))
    return std::optional<std::vector<BlockId>>();
  int32_t tag = internTag(owner.tag);
  std::vector<BlockId> ids;
  ids.reserve(size_t(count));
  for (int64_t piece = 0; piece < count; ++piece) {
    BlockId b = takeFree();
    Status st = allocate(b);
    (void)st; // cannot fail: b was just taken
    meta[size_t(b.value)].state = BlockState::RawUnit;
    rawOwner[size_t(b.value)] = RawOwner{tag, int32_t(piece), owner.id};
    ids.push_back(b);
  }
  return std::optional<std::vector<BlockId>>(std::move(ids));
}

Status BlockPool::releaseUnits(const std::vector<BlockId> &ids,
                               const UnitOwner &owner) {
  std::vector<BlockId> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return Error::invalid("a raw-unit release contains duplicate ids");
  int32_t tag = -1;
  for (size_t i = 0; i < ownerTags.size(); ++i)
    if (ownerTags[i] == owner.tag)
      tag = int32_t(i);
  // Every unit is checked before any is released.
  for (size_t piece = 0; piece < ids.size(); ++piece) {
    BlockId b = ids[piece];
    RawOwner actual;
    if (b.value >= 0 && b.value < maxBlocks())
      actual = rawOwner[size_t(b.value)];
    bool match = actual.tag >= 0 && actual.tag == tag &&
                 actual.id == owner.id && actual.piece == int32_t(piece);
    if (!match)
      return Error{ErrorKind::Internal, "raw unit " + std::to_string(b.value) +
                                            " belongs to " + ownerText(actual) +
                                            ", not (" + owner.str() + ", " +
                                            std::to_string(piece) + ")"};
  }
  for (BlockId b : ids) {
    rawOwner[size_t(b.value)] = RawOwner{};
    Meta &m = meta[size_t(b.value)];
    m.state = BlockState::Held;
    Status st = free(b);
    (void)st; // cannot fail: a raw unit is held once
  }
  return Status();
}

//===----------------------------------------------------------------------===//
// Resizing.
//===----------------------------------------------------------------------===//

Result<int32_t> BlockPool::extend(int64_t count) {
  if (count < 0)
    return Error::invalid("extend by a negative count " +
                          std::to_string(count));
  int32_t taken = int32_t(std::min<int64_t>(count, maxBlocks() - numBlocks_));
  for (int32_t b = numBlocks_; b < numBlocks_ + taken; ++b) {
    meta[size_t(b)].state = BlockState::Vacant;
    vacant.insert(b);
  }
  numBlocks_ += taken;
  numFree_ += taken;
  return taken;
}

void BlockPool::adopt(int32_t dst, int32_t src) {
  unindex(dst); // its cached content, if any, is the price of the move
  if (lru.contains(src))
    lru.unlink(src); // a held block a run claim left linked (stale member)
  Meta &d = meta[size_t(dst)], &s = meta[size_t(src)];
  d.refCount = s.refCount;
  d.hash = s.hash;
  d.indexed = s.indexed;
  d.hasTokens = s.hasTokens;
  std::swap(tokens[size_t(dst)], tokens[size_t(src)]);
  d.print = s.print;
  d.printCount = s.printCount;
  if (s.indexed)
    index.repoint(s.hash, src, dst);
  d.state = s.state; // Held, or a RawUnit keeping its (owner, piece)
  rawOwner[size_t(dst)] = rawOwner[size_t(src)];
  rawOwner[size_t(src)] = RawOwner{};
  s.refCount = 0;
  s.indexed = false; // the entry moved with the content: no on_evict
  forgetContent(src);
  s.state = BlockState::Retired;
}

std::optional<BlockRetirement> BlockPool::retireTop() {
  if (numBlocks_ == 0)
    return std::nullopt;
  int32_t top = numBlocks_ - 1;
  Meta &t = meta[size_t(top)];
  BlockId movedTo = kNoBlock;
  switch (t.state) {
  case BlockState::RawUnit: // cannot move without its owner's record
  case BlockState::Popped:  // nobody to report the move to yet
  case BlockState::Retired:
    return std::nullopt;
  case BlockState::Vacant:
  case BlockState::Cached:
    takeNamed(top);
    unindex(top);
    t.state = BlockState::Retired;
    break;
  case BlockState::Held:
    movedTo = takeFree();
    if (!movedTo.valid())
      return std::nullopt;
    adopt(movedTo.value, top);
    break;
  }
  --numBlocks_;
  return BlockRetirement{BlockId(top), movedTo};
}

std::optional<BlockRetirement>
BlockPool::retireTopUnit(const std::string &ownerTag) {
  if (numBlocks_ == 0)
    return std::nullopt;
  int32_t top = numBlocks_ - 1;
  RawOwner owner = rawOwner[size_t(top)];
  if (meta[size_t(top)].state != BlockState::RawUnit || owner.tag < 0 ||
      ownerTags[size_t(owner.tag)] != ownerTag)
    return std::nullopt;
  BlockId dst = takeFree();
  if (!dst.valid())
    return std::nullopt;
  adopt(dst.value, top);
  --numBlocks_;
  return BlockRetirement{BlockId(top), dst, owner.id, owner.piece};
}

//===----------------------------------------------------------------------===//
// Invariants.
//===----------------------------------------------------------------------===//

Status BlockPool::checkInvariants() const {
  auto fail = [](int32_t b, const std::string &what) {
    return Status(
        Error{ErrorKind::Internal,
              "BlockPool invariant: block " + std::to_string(b) + ": " + what});
  };
  int32_t free = 0, used = 0, cached = 0;
  for (int32_t b = 0; b < maxBlocks(); ++b) {
    const Meta &m = meta[size_t(b)];
    bool inRange = b < numBlocks_;
    if (!inRange && m.state != BlockState::Retired)
      return fail(b, std::string("above num_blocks but ") +
                         blockStateName(m.state));
    if (inRange && m.state == BlockState::Retired)
      return fail(b, "below num_blocks but retired");
    if (vacant.contains(b) != (m.state == BlockState::Vacant))
      return fail(b, "vacant bitmap disagrees with its state");
    if (m.hasTokens != !tokens[size_t(b)].empty())
      return fail(b, "token flag disagrees with its tokens");
    if (m.hasTokens &&
        (m.printCount != tokens[size_t(b)].size() ||
         m.print !=
             tokenPrint(tokens[size_t(b)].data(), tokens[size_t(b)].size())))
      return fail(b, "token fingerprint disagrees with its tokens");
    if (m.hasTokens && m.hash == kNoHash)
      return fail(b, "tokens without a hash");
    bool reachable = m.hash != kNoHash && index.find(m.hash, keyOf()) == b;
    if (m.indexed != reachable)
      return fail(b, "indexed flag disagrees with the index");
    if ((rawOwner[size_t(b)].tag >= 0) != (m.state == BlockState::RawUnit))
      return fail(b, "raw-unit owner disagrees with its state");
    switch (m.state) {
    case BlockState::Vacant:
      ++free;
      if (m.refCount != 0 || m.hash != kNoHash)
        return fail(b, "vacant with a count or a hash");
      break;
    case BlockState::Cached:
      ++free;
      ++cached;
      if (m.refCount != 0 || !m.indexed)
        return fail(b, "cached but held or unreachable (Q8)");
      break;
    case BlockState::Popped:
      if (m.refCount != 0)
        return fail(b, "popped with a count");
      break;
    case BlockState::Held:
      ++used;
      if (m.refCount < 1)
        return fail(b, "held with count " + std::to_string(m.refCount));
      break;
    case BlockState::RawUnit:
      ++used;
      if (m.refCount != 1 || m.hash != kNoHash)
        return fail(b, "raw unit with a count other than 1 or a hash");
      break;
    case BlockState::Retired:
      if (m.refCount != 0 || m.hash != kNoHash)
        return fail(b, "retired with content");
      break;
    }
  }
  if (free != numFree_ || used != numUsed_)
    return fail(-1, "counts: free " + std::to_string(numFree_) + " vs " +
                        std::to_string(free) + ", used " +
                        std::to_string(numUsed_) + " vs " +
                        std::to_string(used));
  // The LRU list: every cached block, plus held ones a run claim left
  // linked (stale members), linked both ways.
  int32_t walked = 0, walkedCached = 0, prev = kNil;
  for (int32_t b = lru.front(); b != kNil; b = lru.next(b)) {
    if (b < 0 || b >= maxBlocks() || ++walked > cached + used)
      return fail(b, "LRU list runs past the cached and held blocks");
    BlockState st = meta[size_t(b)].state;
    if (st == BlockState::Cached)
      ++walkedCached;
    else if (st != BlockState::Held)
      return fail(b, "on the LRU list but neither cached nor held");
    if (lru.prev(b) != prev)
      return fail(b, "LRU back link broken");
    prev = b;
  }
  if (walkedCached != cached || prev != lru.back())
    return fail(-1, "LRU list does not hold every cached block");
  bool indexOk = true;
  int32_t badBlock = -1;
  index.forEach([&](uint32_t tag, int32_t b) {
    if (b < 0 || b >= numBlocks_ || !meta[size_t(b)].indexed ||
        detail::TaggedIndex::tagOf(meta[size_t(b)].hash) != tag) {
      indexOk = false;
      badBlock = b;
    }
  });
  if (!indexOk)
    return fail(badBlock, "the index names it for content it does not hold");
  return Status();
}

void BlockPool::demote(BlockId b) {
  if (b.value < 0 || b.value >= int32_t(meta.size()) ||
      meta[size_t(b.value)].state != BlockState::Cached || !lru.contains(b.value))
    return;
  lru.moveToFront(b.value);
}

} // namespace poolrt
