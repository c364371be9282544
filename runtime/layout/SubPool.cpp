//===- SubPool.cpp - Entry classes and pool sizing ------------------------===//

#include "poolrt/SubPool.h"
#include "poolrt/Checked.h"

#include <algorithm>

namespace poolrt {

const char *errorKindName(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::InvalidArgument:
    return "invalid argument";
  case ErrorKind::InsufficientBudget:
    return "insufficient pool budget";
  case ErrorKind::Lookup:
    return "lookup error";
  case ErrorKind::State:
    return "state error";
  case ErrorKind::Internal:
    return "internal error";
  }
  return "error";
}

const char *poolName(Pool pool) {
  return pool == Pool::Page ? "page" : "state";
}

std::optional<Pool> parsePool(const std::string &name) {
  if (name == "page")
    return Pool::Page;
  if (name == "state")
    return Pool::State;
  return std::nullopt;
}

Result<SubPoolSpec> SubPoolSpec::make(Pool pool, std::string name,
                                      int64_t entryBytes, int64_t entriesPerReq,
                                      int64_t extraEntries) {
  if (name.empty())
    return Error::invalid("an entry class needs a non-empty name");
  if (pool == Pool::State && entriesPerReq < 1)
    return Error::invalid(name + ": STATE entries need entries_per_req >= 1");
  if (pool == Pool::Page && (entriesPerReq != 0 || extraEntries != 0))
    return Error::invalid(name + ": PAGE entries are sized from the remainder");
  // Q5: the reference accepts these and divides by zero (PAGE) or lowers the
  // reservation (STATE) later.
  if (entryBytes < 1)
    return Error::invalid(name + ": entry_bytes must be >= 1, got " +
                          std::to_string(entryBytes));
  if (extraEntries < 0)
    return Error::invalid(name + ": extra_entries must be >= 0, got " +
                          std::to_string(extraEntries));
  SubPoolSpec s;
  s.pool = pool;
  s.name = std::move(name);
  s.entryBytes = entryBytes;
  s.entriesPerReq = entriesPerReq;
  s.extraEntries = extraEntries;
  return s;
}

std::string SubPoolSpec::str() const {
  return std::string("SubPoolSpec(pool=") + poolName(pool) + ", name='" +
         name + "', entry_bytes=" + std::to_string(entryBytes) +
         ", entries_per_req=" + std::to_string(entriesPerReq) +
         ", extra_entries=" + std::to_string(extraEntries) + ")";
}

Result<std::vector<SubPoolSpec>>
mergeSpecs(const std::vector<SubPoolSpec> &specs,
           std::vector<size_t> *firstIndex,
           std::pair<size_t, size_t> *clashIndex) {
  std::vector<SubPoolSpec> merged;
  std::vector<size_t> first;
  for (size_t i = 0; i < specs.size(); ++i) {
    const SubPoolSpec &s = specs[i];
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const SubPoolSpec &m) { return m.name == s.name; });
    if (it == merged.end()) {
      merged.push_back(s);
      first.push_back(i);
      continue;
    }
    if (it->pool != s.pool || it->entriesPerReq != s.entriesPerReq ||
        it->extraEntries != s.extraEntries || !(it->attention == s.attention) ||
        it->forwardTokens != s.forwardTokens || it->cachePercent != s.cachePercent) {
      if (clashIndex)
        *clashIndex = {first[it - merged.begin()], i};
      return Error::invalid("entry class '" + s.name +
                            "' declared twice with different "
                            "pool/multiplicity: " +
                            specs[first[it - merged.begin()]].str() + " vs " +
                            s.str());
    }
    auto sum = checkedAdd(it->entryBytes, s.entryBytes, "merged entry_bytes");
    if (!sum)
      return sum.error();
    it->entryBytes = *sum;
  }
  if (firstIndex)
    *firstIndex = std::move(first);
  return merged;
}

const PlannedClass *PoolPlan::find(const std::string &name) const {
  for (const PlannedClass &c : cls)
    if (c.name == name)
      return &c;
  return nullptr;
}

std::optional<std::string> PoolPlan::pagedClass() const {
  for (const PlannedClass &c : cls)
    if (c.pool == Pool::Page && !c.isWindow())
      return c.name;
  return std::nullopt;
}

int64_t PoolPlan::pagedEntries() const {
  for (const PlannedClass &c : cls)
    if (c.pool == Pool::Page && !c.isWindow())
      return c.entries;
  return 0;
}

int64_t PoolPlan::totalReservedBytes() const {
  // Every term was checked when the plan was built and the sum is bounded by
  // the budget (or by the STATE reservation, itself checked).
  int64_t total = 0;
  for (const PlannedClass &c : cls)
    total += c.reservedBytes;
  return total;
}

Result<PoolPlan> PoolPlan::withPagedEntries(int64_t count) const {
  if (count < 0)
    return Error::invalid("a PAGE entry count must be >= 0, got " +
                          std::to_string(count));
  PoolPlan copy = *this;
  for (PlannedClass &c : copy.cls) {
    if (c.pool != Pool::Page || c.isWindow())
      continue;
    auto bytes = checkedMul(count, c.entryBytes, "PAGE reserved bytes");
    if (!bytes)
      return bytes.error();
    c.entries = count;
    c.reservedBytes = *bytes;
    // Window classes in the same block id space count the same blocks.
    for (PlannedClass &w : copy.cls)
      if (w.sharesBlocks)
        w.entries = count;
    return copy;
  }
  return Error::invalid("no PAGE entry class to resize");
}

Result<PoolPlan> planPools(const std::vector<SubPoolSpec> &specs,
                           int64_t availableBytes, int64_t maxNumSeqs) {
  if (maxNumSeqs < 0)
    return Error::invalid("max_num_seqs must be >= 0, got " +
                          std::to_string(maxNumSeqs));
  auto merged = mergeSpecs(specs);
  if (!merged)
    return merged.error();

  // Q4: structural errors first.
  std::vector<std::string> pageNames;
  for (const SubPoolSpec &s : *merged)
    if (s.pool == Pool::Page)
      pageNames.push_back(s.name);
  if (pageNames.size() > 1) {
    std::string list = "[";
    for (size_t i = 0; i < pageNames.size(); ++i)
      list += (i ? ", '" : "'") + pageNames[i] + "'";
    return Error::invalid("more than one PAGE entry class: " + list + "]");
  }

  PoolPlan plan;
  int64_t reserved = 0, stateEntries = 0;
  bool anyState = false;
  for (const SubPoolSpec &s : *merged) {
    PlannedClass c{s.name, s.pool, 0, s.entryBytes, 0, s.entriesPerReq,
                   s.extraEntries};
    if (s.pool == Pool::State) {
      anyState = true;
      auto perSeqs = checkedMul(maxNumSeqs, s.entriesPerReq,
                                (s.name + " entries").c_str());
      if (!perSeqs)
        return perSeqs.error();
      auto count = checkedAdd(*perSeqs, s.extraEntries,
                              (s.name + " entries").c_str());
      if (!count)
        return count.error();
      auto cost = checkedMul(*count, s.entryBytes,
                             (s.name + " reserved bytes").c_str());
      if (!cost)
        return cost.error();
      auto r = checkedAdd(reserved, *cost, "STATE reservation");
      if (!r)
        return r.error();
      auto e = checkedAdd(stateEntries, *count, "STATE entries");
      if (!e)
        return e.error();
      reserved = *r;
      stateEntries = *e;
      c.entries = *count;
      c.reservedBytes = *cost;
    }
    plan.cls.push_back(c);
  }

  // Q3: only a reservation that exceeds the budget is fatal; an exact fit
  // leaves 0 PAGE entries like any remainder under one entry.
  if (anyState && reserved > availableBytes) {
    Error e{ErrorKind::InsufficientBudget,
            "state pool needs " + std::to_string(reserved) + "B of " +
                std::to_string(availableBytes) + "B"};
    e.reservedBytes = reserved;
    e.availableBytes = availableBytes;
    e.entries = stateEntries;
    return e;
  }
  // reserved <= availableBytes here (or no STATE class, reserved == 0), so
  // the subtraction cannot overflow.
  int64_t remaining = availableBytes - reserved;
  for (PlannedClass &c : plan.cls) {
    if (c.pool != Pool::Page)
      continue;
    c.entries = remaining > 0 ? remaining / c.entryBytes : 0;
    c.reservedBytes = c.entries * c.entryBytes; // <= remaining: no overflow
  }
  return plan;
}

bool hasWindowClass(const std::vector<SubPoolSpec> &specs) {
  for (const SubPoolSpec &s : specs)
    if (s.pool == Pool::Page && s.attention.isWindow())
      return true;
  return false;
}

Result<PoolPlan> planHybridPools(const std::vector<SubPoolSpec> &specs,
                                 int64_t availableBytes, int64_t maxNumSeqs,
                                 const HybridGeometry &geo) {
  if (!hasWindowClass(specs))
    return planPools(specs, availableBytes, maxNumSeqs);
  if (maxNumSeqs < 1)
    return Error::invalid("window classes are sized per running request: "
                          "max_num_seqs must be >= 1, got " +
                          std::to_string(maxNumSeqs));
  if (geo.blockSize < 1 || geo.marginTokens < 0)
    return Error::invalid("window classes need block_size >= 1 and a draft "
                          "margin >= 0");
  auto merged = mergeSpecs(specs);
  if (!merged)
    return merged.error();
  std::vector<const SubPoolSpec *> fulls, windows;
  for (const SubPoolSpec &s : *merged) {
    if (s.pool == Pool::State)
      return Error::invalid("window PAGE classes run only in a stateless "
                            "model: STATE class '" + s.name +
                            "' beside them is not supported");
    (s.attention.isWindow() ? windows : fulls).push_back(&s);
  }
  if (fulls.size() != 1) {
    std::string list = "[";
    for (size_t i = 0; i < fulls.size(); ++i)
      list += (i ? ", '" : "'") + fulls[i]->name + "'";
    return Error::invalid(
        "a model with window PAGE classes needs exactly one full-attention "
        "PAGE class beside them (it keeps the block table and the prefix "
        "index), found " + std::to_string(fulls.size()) + ": " + list + "]");
  }
  const SubPoolSpec &full = *fulls.front();
  bool shared = true;
  for (const SubPoolSpec *w : windows)
    shared &= w->entryBytes == full.entryBytes;

  PoolPlan plan;
  int64_t floorBytes = 0;
  for (const SubPoolSpec &s : *merged) {
    PlannedClass c{s.name, s.pool, 0, s.entryBytes, 0, 0, 0};
    c.attention = s.attention;
    if (s.attention.isWindow()) {
      if (s.attention.tokens < 1)
        return Error::invalid("window class '" + s.name +
                              "' needs a window of >= 1 token");
      c.forwardTokens = s.forwardTokens > 0 ? s.forwardTokens : s.attention.tokens;
      c.reserveBlocks =
          s.attention.reserveBlocks(geo.marginTokens, c.forwardTokens, geo.blockSize);
      c.sharesBlocks = shared;
      if (!shared) {
        auto n = checkedMul(maxNumSeqs, c.reserveBlocks, (s.name + " blocks").c_str());
        if (!n)
          return n.error();
        auto bytes = checkedMul(*n, s.entryBytes, (s.name + " reserved bytes").c_str());
        if (!bytes)
          return bytes.error();
        auto sum = checkedAdd(floorBytes, *bytes, "window pools");
        if (!sum)
          return sum.error();
        floorBytes = *sum;
        c.entries = *n;
        c.reservedBytes = *bytes;
      }
    }
    plan.cls.push_back(c);
  }
  if (floorBytes > availableBytes) {
    Error e{ErrorKind::InsufficientBudget,
            "window pools need " + std::to_string(floorBytes) + "B of " +
                std::to_string(availableBytes) + "B"};
    e.reservedBytes = floorBytes;
    e.availableBytes = availableBytes;
    return e;
  }
  int64_t remaining = availableBytes - floorBytes;
  // Cache shares of window pools of their own, from what the reserves left.
  int64_t percents = 0;
  for (PlannedClass &c : plan.cls) {
    const SubPoolSpec *s = nullptr;
    for (const SubPoolSpec &m : *merged)
      if (m.name == c.name)
        s = &m;
    if (!c.isWindow() || !s || s->cachePercent == 0)
      continue;
    c.cachePercent = s->cachePercent;
    if (c.sharesBlocks)
      continue; // one id space: every free block already caches for all
    percents += s->cachePercent;
    // remaining / 100 first: no overflow for any int64 budget.
    int64_t share = remaining / 100 * s->cachePercent +
                    remaining % 100 * s->cachePercent / 100;
    int64_t extra = share / c.entryBytes;
    c.entries += extra;
    c.reservedBytes = c.entries * c.entryBytes; // <= availableBytes
  }
  if (percents > 100)
    return Error::invalid("window classes' cache_percent add up to " +
                          std::to_string(percents) + "%, more than the budget");
  remaining = availableBytes;
  for (const PlannedClass &c : plan.cls)
    if (c.isWindow() && !c.sharesBlocks)
      remaining -= c.reservedBytes; // their sum <= availableBytes
  int64_t blocks = remaining > 0 ? remaining / full.entryBytes : 0;
  if (shared) {
    // One request must fit: its window reserves and a block of its own.
    int64_t need = 1;
    for (const PlannedClass &c : plan.cls)
      need += c.reserveBlocks;
    if (blocks < need) {
      Error e{ErrorKind::InsufficientBudget,
              "one block id space of " + std::to_string(blocks) +
                  " blocks cannot hold one request's window reserves and a "
                  "block of its own (" + std::to_string(need) + " blocks)"};
      e.reservedBytes = need * full.entryBytes;
      e.availableBytes = availableBytes;
      return e;
    }
  }
  for (PlannedClass &c : plan.cls) {
    if (!c.isWindow()) {
      c.entries = blocks;
      c.reservedBytes = blocks * c.entryBytes; // <= remaining
    } else if (c.sharesBlocks) {
      c.entries = blocks;
    }
  }
  return plan;
}

} // namespace poolrt
