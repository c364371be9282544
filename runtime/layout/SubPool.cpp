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
        it->extraEntries != s.extraEntries) {
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
    if (c.pool == Pool::Page)
      return c.name;
  return std::nullopt;
}

int64_t PoolPlan::pagedEntries() const {
  for (const PlannedClass &c : cls)
    if (c.pool == Pool::Page)
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
    if (c.pool != Pool::Page)
      continue;
    auto bytes = checkedMul(count, c.entryBytes, "PAGE reserved bytes");
    if (!bytes)
      return bytes.error();
    c.entries = count;
    c.reservedBytes = *bytes;
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

} // namespace poolrt
