//===- Tier.cpp - Tier objects, geometry, host memory and stacking --------===//

#include "poolrt/Tier.h"

#include "poolrt/ByteSize.h"

#include "TierBackends.h"

#include "poolrt/SolvedLayout.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>

namespace poolrt {

const char *tierFaultName(TierFault f) {
  switch (f) {
  case TierFault::None: return "none";
  case TierFault::NotFound: return "not found";
  case TierFault::Corrupt: return "corrupt";
  case TierFault::Mismatch: return "mismatch";
  case TierFault::Unavailable: return "unavailable";
  case TierFault::Full: return "full";
  case TierFault::TooLarge: return "too large";
  case TierFault::Invalid: return "invalid";
  }
  return "?";
}

TierBackend::~TierBackend() = default;
TierHostMemory::~TierHostMemory() = default;

TierBytes::TierBytes(std::string s) {
  auto owned = std::make_shared<const std::string>(std::move(s));
  data_ = owned->data();
  size_ = owned->size();
  owner_ = std::move(owned);
}

std::ostream &operator<<(std::ostream &os, const TierBytes &b) {
  os << b.size() << " bytes";
  if (!b.empty())
    os << " \"" << std::string(b.view().substr(0, 32)) << (b.size() > 32 ? "\"..." : "\"");
  return os;
}

// --- geometry ---------------------------------------------------------------

Result<TierGeometry> tierGeometryOf(const SolvedLayout &layout) {
  TierGeometry g;
  g.layoutFingerprint = layout.layoutFingerprint;
  g.blockSize = layout.geometry.blockSize;
  if (!layout.windowClasses().empty())
    return Error::invalid("tier: window classes are not offloaded yet (the "
                          "artifact has no block kernels for them)");
  const KernelInfo *gather = layout.kernelByKind("block_gather");
  if (!gather || gather->itemBytes < 1)
    return Error::invalid("tier: the artifact has no block_gather kernel (a "
                          "block's PAGE KV cannot be gathered)");
  g.kvBlockBytes = gather->itemBytes;
  std::vector<const SolvedClass *> state = layout.groupClasses();
  if (!state.empty() && state[0]->transfer->kind == TransferKind::Copy) {
    const KernelInfo *image = layout.kernelByKind("image_gather");
    if (!image || image->itemBytes < 1)
      return Error::invalid("tier: a copy STATE class without an image_gather "
                            "kernel (its checkpoint cannot be gathered)");
    g.checkpointBytes = image->itemBytes;
  } else {
    for (const SolvedClass *c : state) {
      if (c->transfer->kind != TransferKind::Fork)
        continue;
      const KernelInfo *k = layout.groupCopyKernelOf(c->name);
      if (!k || k->itemBytes < 1)
        return Error::invalid("tier: fork STATE class '" + c->name +
                              "' has no group_copy kernel");
      g.checkpointBytes += k->itemBytes;
    }
  }
  return g;
}

// --- keys and objects -------------------------------------------------------

static std::string hex16(uint64_t v) {
  static const char *d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4)
    s[size_t(i)] = d[v & 15];
  return s;
}

std::string TierKey::prefix(uint64_t fingerprint) {
  return "poolc/" + hex16(fingerprint) + "/";
}

std::string TierKey::text() const { return prefix(layoutFingerprint) + hex16(blockHash); }

bool validTierKey(const std::string &key) {
  if (key.empty() || key.size() > 200)
    return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' ||
          c == '-'))
      return false;
  return key.find("..") == std::string::npos;
}

TierResult invalidTierKey(const std::string &key) {
  return TierResult::fail(TierFault::Invalid, "tier key '" + key.substr(0, 64) +
                                                  "' is not 1-200 of [A-Za-z0-9/.-]");
}

TierResult KeyCheckedBackend::put(const std::string &key, std::string_view bytes) {
  return validTierKey(key) ? putChecked(key, bytes) : invalidTierKey(key);
}

TierGet KeyCheckedBackend::get(const std::string &key) {
  return validTierKey(key) ? getChecked(key) : tierGetFailure(invalidTierKey(key));
}

TierResult KeyCheckedBackend::contains(const std::string &key) {
  return validTierKey(key) ? containsChecked(key) : invalidTierKey(key);
}

TierResult KeyCheckedBackend::remove(const std::string &key) {
  return validTierKey(key) ? removeChecked(key) : invalidTierKey(key);
}

namespace {

void put32(std::string &s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}
void put64(std::string &s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}
uint32_t get32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | uint8_t(s[at + size_t(i)]);
  return v;
}
uint64_t get64(std::string_view s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | uint8_t(s[at + size_t(i)]);
  return v;
}
constexpr char kMagic[8] = {'P', 'C', 'T', 'I', 'E', 'R', '0', '1'};

uint64_t payloadSum(std::string_view kv, std::string_view ck, uint64_t seed) {
  XXH64_state_t *st = XXH64_createState();
  XXH64_reset(st, seed);
  XXH64_update(st, kv.data(), kv.size());
  XXH64_update(st, ck.data(), ck.size());
  uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

} // namespace

void sealTierObject(std::string &s, const TierKey &key, int64_t numBlocks,
                    int64_t kvBytes) {
  size_t header = size_t(kTierHeaderBytes);
  std::string_view all(s);
  std::string_view kv = all.substr(header, size_t(kvBytes));
  std::string_view ck = all.substr(header + size_t(kvBytes));
  std::memcpy(&s[0], kMagic, 8);
  put32(s, 8, kTierFormatVersion);
  put32(s, 12, uint32_t(kTierHeaderBytes));
  put64(s, 16, key.layoutFingerprint);
  put64(s, 24, key.blockHash);
  put64(s, 32, uint64_t(numBlocks));
  put64(s, 40, kv.size());
  put64(s, 48, ck.size());
  put64(s, 56, payloadSum(kv, ck, key.layoutFingerprint));
  put64(s, 64, XXH64(s.data(), 64, 0));
}

std::string encodeTierObject(const TierKey &key, int64_t numBlocks,
                             std::string_view kv, std::string_view checkpoint) {
  std::string s(size_t(kTierHeaderBytes), '\0');
  s.reserve(s.size() + kv.size() + checkpoint.size());
  s.append(kv.data(), kv.size());
  s.append(checkpoint.data(), checkpoint.size());
  sealTierObject(s, key, numBlocks, int64_t(kv.size()));
  return s;
}

TierResult decodeTierObject(std::string_view b, const TierKey &key,
                            const TierGeometry &geo, int64_t numBlocks,
                            TierObjectView &out, bool payloadVerified) {
  auto corrupt = [&](const std::string &m) {
    return TierResult::fail(TierFault::Corrupt, "tier object " + key.text() + ": " + m);
  };
  auto mismatch = [&](const std::string &m) {
    return TierResult::fail(TierFault::Mismatch, "tier object " + key.text() + ": " + m);
  };
  if (int64_t(b.size()) < kTierHeaderBytes)
    return corrupt(std::to_string(b.size()) + " bytes, shorter than the " +
                   std::to_string(kTierHeaderBytes) + "-byte header");
  if (std::memcmp(b.data(), kMagic, 8) != 0)
    return corrupt("no PCTIER01 magic");
  if (get64(b, 64) != XXH64(b.data(), 64, 0))
    return corrupt("header checksum does not match");
  if (get32(b, 8) != kTierFormatVersion)
    return mismatch("format version " + std::to_string(get32(b, 8)) + ", expected " +
                    std::to_string(kTierFormatVersion));
  if (get32(b, 12) != uint32_t(kTierHeaderBytes))
    return corrupt("header size " + std::to_string(get32(b, 12)));
  if (get64(b, 16) != key.layoutFingerprint || get64(b, 16) != geo.layoutFingerprint)
    return mismatch("layout fingerprint " + hex16(get64(b, 16)) + ", expected " +
                    hex16(geo.layoutFingerprint));
  if (get64(b, 24) != key.blockHash)
    return mismatch("block hash " + hex16(get64(b, 24)) + ", expected " +
                    hex16(key.blockHash));
  uint64_t blocks = get64(b, 32), kvBytes = get64(b, 40), ckBytes = get64(b, 48);
  if (numBlocks < 1 || blocks != uint64_t(numBlocks))
    return mismatch(std::to_string(blocks) + " blocks, expected " +
                    std::to_string(numBlocks));
  // Overflow-safe: every size is compared with a small expected value.
  if (geo.kvBlockBytes < 1 || kvBytes != uint64_t(numBlocks) * uint64_t(geo.kvBlockBytes))
    return mismatch(std::to_string(kvBytes) + " KV bytes, expected " +
                    std::to_string(numBlocks) + " x " + std::to_string(geo.kvBlockBytes));
  if (ckBytes != 0 && ckBytes != uint64_t(geo.checkpointBytes))
    return mismatch(std::to_string(ckBytes) + " checkpoint bytes, expected " +
                    std::to_string(geo.checkpointBytes) + " (or none)");
  if (uint64_t(b.size()) - uint64_t(kTierHeaderBytes) != kvBytes + ckBytes)
    return corrupt(std::to_string(b.size()) + " bytes, the header says " +
                   std::to_string(uint64_t(kTierHeaderBytes) + kvBytes + ckBytes));
  std::string_view kv = b.substr(size_t(kTierHeaderBytes), size_t(kvBytes));
  std::string_view ck = b.substr(size_t(kTierHeaderBytes + int64_t(kvBytes)), size_t(ckBytes));
  if (!payloadVerified && payloadSum(kv, ck, key.layoutFingerprint) != get64(b, 56))
    return corrupt("payload checksum does not match");
  out.key = key;
  out.numBlocks = numBlocks;
  out.kv = kv;
  out.checkpoint = ck;
  return TierResult::success();
}

bool tierObjectIntact(std::string_view b) {
  if (int64_t(b.size()) < kTierHeaderBytes || std::memcmp(b.data(), kMagic, 8) != 0 ||
      get64(b, 64) != XXH64(b.data(), 64, 0) || get32(b, 12) != uint32_t(kTierHeaderBytes))
    return false;
  uint64_t kvBytes = get64(b, 40), ckBytes = get64(b, 48);
  uint64_t payload = uint64_t(b.size()) - uint64_t(kTierHeaderBytes);
  if (kvBytes > payload || ckBytes != payload - kvBytes)
    return false;
  return payloadSum(b.substr(size_t(kTierHeaderBytes), size_t(kvBytes)),
                    b.substr(size_t(kTierHeaderBytes) + size_t(kvBytes)),
                    get64(b, 16)) == get64(b, 56);
}

// --- host memory --------------------------------------------------------------

namespace {


/// The host tier's buffers: from a TierHostMemory (ordinary memory when
/// there is none, or when it has none left), handed back by their owners'
/// deleters and recycled by size, so a store after an eviction reuses the
/// evicted buffer rather than pinning new memory. At most `keepBytes` (or
/// two buffers) wait in the free list; the rest go back to their memory.
class HostBuffers : public std::enable_shared_from_this<HostBuffers> {
public:
  HostBuffers(std::shared_ptr<TierHostMemory> memory, int64_t keepBytes)
      : memory_(std::move(memory)), keepBytes_(keepBytes) {}
  ~HostBuffers() {
    for (auto &[size, f] : free_)
      drop(f);
  }
  /// A buffer of `n` bytes; null when no memory is left.
  std::shared_ptr<char> take(size_t n) {
    Buffer b;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(n);
      if (it != free_.end()) {
        b = it->second;
        free_.erase(it);
        freeBytes_ -= int64_t(n);
      }
    }
    if (!b.p && memory_) {
      b.p = memory_->allocate(n);
      b.fromMemory = b.p != nullptr;
    }
    if (!b.p)
      b.p = std::aligned_alloc(64, (std::max<size_t>(n, 1) + 63) / 64 * 64);
    if (!b.p)
      return nullptr;
    std::shared_ptr<HostBuffers> self = shared_from_this();
    return std::shared_ptr<char>(static_cast<char *>(b.p),
                                 [self, b, n](char *) { self->give(b, n); });
  }

private:
  struct Buffer {
    void *p = nullptr;
    bool fromMemory = false;
  };
  void give(Buffer b, size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Up to keepBytes wait, and two buffers of any size whatever the cap
      // (a store right after an eviction takes it straight back).
      if (freeBytes_ + int64_t(n) <= std::max(keepBytes_, 2 * int64_t(n))) {
        free_.emplace(n, b);
        freeBytes_ += int64_t(n);
        return;
      }
    }
    drop(b);
  }
  void drop(Buffer b) {
    if (b.fromMemory)
      memory_->release(b.p);
    else
      std::free(b.p);
  }

  std::shared_ptr<TierHostMemory> memory_;
  int64_t keepBytes_;
  std::mutex mu_;
  std::multimap<size_t, Buffer> free_;
  int64_t freeBytes_ = 0;
};

/// What the host tier keeps beside each key and size.
struct HostObject {
  std::shared_ptr<char> buf; // shared with the TierGets that read it
  bool intact = false;       // tierObjectIntact when stored
};

class HostTier final : public ByteCappedBackend<HostObject> {
public:
  HostTier(int64_t cap, std::shared_ptr<TierHostMemory> memory)
      : ByteCappedBackend(cap),
        buffers_(std::make_shared<HostBuffers>(std::move(memory), cap / 8)) {}
  std::string name() const override { return "host"; }

  void touch(const std::string &key) override {
    std::lock_guard<std::mutex> lock(mu_);
    lru_.use(key);
  }

protected:
  TierResult putChecked(const std::string &key, std::string_view bytes) override {
    if (TierResult fits = checkFits(key, bytes.size()); !fits.ok())
      return fits;
    int64_t size = int64_t(bytes.size());
    {
      // Room first, so the buffer of what is evicted can be reused below.
      std::lock_guard<std::mutex> lock(mu_);
      lru_.evictFor(size);
    }
    std::shared_ptr<char> buf = buffers_->take(bytes.size());
    if (!buf)
      return TierResult::fail(TierFault::Full, "host tier: no memory for object " + key +
                                                   " of " + std::to_string(bytes.size()) + " B");
    std::memcpy(buf.get(), bytes.data(), bytes.size());
    bool intact = tierObjectIntact(bytes); // off the lock: a hash of the whole object
    std::lock_guard<std::mutex> lock(mu_);
    lru_.erase(key);
    lru_.evictFor(size);
    lru_.insert(key, size, HostObject{std::move(buf), intact});
    return TierResult::success();
  }

  TierGet getChecked(const std::string &key) override {
    TierGet g;
    std::lock_guard<std::mutex> lock(mu_);
    const auto *e = lru_.use(key);
    if (!e) {
      g.fault = TierFault::NotFound;
      return g;
    }
    g.bytes = TierBytes(e->value.buf, e->value.buf.get(), size_t(e->bytes));
    g.verified = e->value.intact;
    return g;
  }

  TierResult removeChecked(const std::string &key) override {
    std::lock_guard<std::mutex> lock(mu_);
    lru_.erase(key);
    return TierResult::success();
  }

private:
  std::shared_ptr<HostBuffers> buffers_;
};

// --- stacking -----------------------------------------------------------------

class StackedTier final : public TierBackend {
public:
  explicit StackedTier(std::vector<std::unique_ptr<TierBackend>> l) : levels_(std::move(l)) {}
  std::string name() const override {
    std::string n;
    for (const auto &l : levels_)
      n += (n.empty() ? "" : "+") + l->name();
    return n;
  }
  TierResult put(const std::string &key, std::string_view bytes) override {
    TierResult worst = TierResult::success();
    bool stored = false;
    for (auto &l : levels_) {
      TierResult r = l->put(key, bytes);
      if (r.ok())
        stored = true;
      else if (worst.ok())
        worst = r;
    }
    // Kept somewhere: the store succeeded (a level too small for it, say
    // the host cap, is not a failure of the tier).
    return stored ? TierResult::success() : worst;
  }
  TierGet get(const std::string &key) override {
    TierGet last;
    last.fault = TierFault::NotFound;
    for (size_t i = 0; i < levels_.size(); ++i) {
      TierGet g = levels_[i]->get(key);
      if (g.ok()) {
        bool promoted = i > 0;
        for (size_t j = 0; j < i; ++j) // promote; a refusal is harmless
          promoted = levels_[j]->put(key, g.bytes).ok() && promoted;
        // The levels below keep one LRU order with this one.
        for (size_t j = i + 1; j < levels_.size(); ++j)
          levels_[j]->touch(key);
        if (promoted) {
          // The top level's copy (page-locked on a GPU, checked as it was
          // stored) serves the load, not the one just read.
          TierGet top = levels_[0]->get(key);
          if (top.ok())
            return top;
        }
        return g;
      }
      if (g.fault != TierFault::NotFound)
        last = std::move(g);
    }
    return last;
  }
  TierResult contains(const std::string &key) override {
    TierResult last = TierResult::fail(TierFault::NotFound, "");
    for (auto &l : levels_) {
      TierResult r = l->contains(key);
      if (r.ok())
        return r;
      if (r.fault != TierFault::NotFound)
        last = r;
    }
    return last;
  }
  TierResult remove(const std::string &key) override {
    TierResult worst = TierResult::success();
    for (auto &l : levels_) {
      TierResult r = l->remove(key);
      if (!r.ok() && worst.ok())
        worst = r;
    }
    return worst;
  }
  bool local() const override {
    for (const auto &l : levels_)
      if (!l->local())
        return false;
    return true;
  }
  TierUsage usage() const override {
    // The last level holds everything the others do (write-through).
    return levels_.empty() ? TierUsage{} : levels_.back()->usage();
  }

private:
  std::vector<std::unique_ptr<TierBackend>> levels_;
};

/// A tier's capacity: the one size grammar (poolrt/ByteSize.h), and more
/// than nothing.
std::optional<int64_t> parseCapacity(const std::string &t) {
  std::string why;
  std::optional<int64_t> n = parseByteSize(t, why);
  if (!n || *n < 1)
    return std::nullopt;
  return n;
}

} // namespace

std::unique_ptr<TierBackend> makeHostTier(int64_t capBytes,
                                          std::shared_ptr<TierHostMemory> memory) {
  return std::make_unique<HostTier>(capBytes < 0 ? 0 : capBytes, std::move(memory));
}

std::unique_ptr<TierBackend>
makeStackedTier(std::vector<std::unique_ptr<TierBackend>> levels) {
  return std::make_unique<StackedTier>(std::move(levels));
}

Result<std::unique_ptr<TierBackend>> openTier(const std::string &spec,
                                              std::shared_ptr<TierHostMemory> hostMemory) {
  if (spec.rfind("redis://", 0) == 0) {
    RedisTierOptions o;
    o.url = spec;
    return openRedisTier(o);
  }
  std::vector<std::unique_ptr<TierBackend>> levels;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t plus = spec.find('+', start);
    std::string part = spec.substr(start, plus == std::string::npos ? std::string::npos
                                                                    : plus - start);
    auto bad = [&](const std::string &why) {
      return Error::invalid("tier spec '" + spec + "': '" + part + "': " + why);
    };
    if (part.rfind("host:", 0) == 0) {
      auto cap = parseCapacity(part.substr(5));
      if (!cap)
        return bad("expected host:SIZE (4GiB, 512MiB, bytes)");
      levels.push_back(makeHostTier(*cap, hostMemory));
    } else if (part.rfind("disk:", 0) == 0) {
      size_t colon = part.rfind(':');
      auto cap = colon > 5 ? parseCapacity(part.substr(colon + 1)) : std::nullopt;
      if (!cap || colon <= 5)
        return bad("expected disk:DIR:SIZE");
      DiskTierOptions d;
      d.dir = part.substr(5, colon - 5);
      d.capBytes = *cap;
      auto disk = openDiskTier(d);
      if (!disk.ok())
        return disk.error();
      levels.push_back(disk.take());
    } else {
      return bad("expected host:SIZE, disk:DIR:SIZE or redis://HOST:PORT");
    }
    if (plus == std::string::npos)
      break;
    start = plus + 1;
  }
  if (levels.size() == 1)
    return std::move(levels[0]);
  return makeStackedTier(std::move(levels));
}

} // namespace poolrt
