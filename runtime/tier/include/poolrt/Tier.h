//===- Tier.h - Offload tier: objects and storage backends ------*- C++ -*-===//
//
// The tier keeps what HBM evicts (specs/tier.md): one object per checkpoint
// boundary, holding the PAGE KV of the chunk that ends there and the state
// checkpoint of that boundary, so a stateful hit never restores KV without
// its state. This header has the object codec, the geometry an object's
// sizes come from (read from the artifact, never assumed), and the storage
// backends behind one interface: host memory (LRU, byte cap), local disk
// (one file per object, write-to-temp + rename, LRU by access, survives a
// restart) and Redis (hiredis; a fleet of pool-serve processes shares it).
//
// Nothing here throws. A backend reports a fault (TierFault) with a message
// naming what and where; a backend that is down answers Unavailable within
// its timeout, never hangs.
//
// Lock contract: every backend is safe to call from several threads (one
// mutex each); the transfer thread and the scheduler's lookups share them.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_TIER_H
#define POOLRT_TIER_H

#include "poolrt/Status.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace poolrt {

struct SolvedLayout;

/// Why a tier operation did not do what was asked.
enum class TierFault {
  None,
  NotFound,    // no such object
  Corrupt,     // bytes that are not an object: magic, checksum, truncation
  Mismatch,    // an object of another geometry, boundary or size
  Unavailable, // the backend failed or did not answer (I/O error, dead server)
  Full,        // the store did not fit (disk full, write refused)
  TooLarge,    // larger than the backend's whole cap: never stored
  Invalid,     // a bad argument (key, URL, options)
};
const char *tierFaultName(TierFault f);

struct TierResult {
  TierFault fault = TierFault::None;
  std::string message;
  bool ok() const { return fault == TierFault::None; }
  static TierResult success() { return {}; }
  static TierResult fail(TierFault f, std::string m) { return {f, std::move(m)}; }
};

/// An object's bytes: immutable and shared. A host-tier hit refers to the
/// buffer the tier holds (page-locked on a GPU, so a load copies it to the
/// device at link speed) instead of copying it, and stays valid after the
/// tier evicts or replaces it.
class TierBytes {
public:
  TierBytes() = default;
  explicit TierBytes(std::string s);
  /// `size` bytes at `data`, kept alive by `owner`.
  TierBytes(std::shared_ptr<const void> owner, const char *data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}
  const char *data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {data_, size_}; }
  operator std::string_view() const { return view(); }
  char operator[](size_t i) const { return data_[i]; }
  std::string str() const { return std::string(view()); }
  friend bool operator==(const TierBytes &a, std::string_view b) { return a.view() == b; }
  friend bool operator!=(const TierBytes &a, std::string_view b) { return a.view() != b; }

private:
  std::shared_ptr<const void> owner_;
  const char *data_ = "";
  size_t size_ = 0;
};
std::ostream &operator<<(std::ostream &os, const TierBytes &b);

struct TierGet {
  TierFault fault = TierFault::None;
  std::string message;
  TierBytes bytes; // the object's bytes when ok()
  /// The bytes are an intact object whose checksums were verified when
  /// they entered this process's memory (the host tier checks every store)
  /// and have not left it since: a decoder need not hash the payload again.
  bool verified = false;
  bool ok() const { return fault == TierFault::None; }
};

/// What an object of one artifact holds, from the artifact's kernels and
/// classes (tierGeometryOf): the only sizes a decoder accepts.
struct TierGeometry {
  uint64_t layoutFingerprint = 0;
  int64_t blockSize = 0;      // tokens per PAGE block
  int64_t kvBlockBytes = 0;   // one block's PAGE KV (the block gather's item)
  /// The checkpoint image of one boundary: a copy class's PAGE-unit image
  /// (the image gather's item), the group bytes of every fork class, or 0
  /// for a stateless model.
  int64_t checkpointBytes = 0;
  bool stateful() const { return checkpointBytes > 0; }
};
/// The tier geometry of an artifact's layout. InvalidArgument when the
/// layout has no block gather kernel (a bare report, or window classes,
/// which the tier does not offload yet).
Result<TierGeometry> tierGeometryOf(const SolvedLayout &layout);

/// The key of the object that ends at a boundary: the geometry's layout
/// fingerprint and the chained block hash of the boundary's last block.
struct TierKey {
  uint64_t layoutFingerprint = 0;
  uint64_t blockHash = 0;
  /// "poolc/<fingerprint hex>/<hash hex>": the fingerprint is the prefix,
  /// so geometries never share objects.
  std::string text() const;
  /// The prefix every key of `fingerprint` starts with.
  static std::string prefix(uint64_t fingerprint);
};

/// The object codec. Layout (little-endian), 72-byte header then payload:
///   0  "PCTIER01"        8  u32 format version (1)  12 u32 header bytes (72)
///   16 u64 layout fingerprint  24 u64 block hash  32 u64 blocks
///   40 u64 KV bytes  48 u64 checkpoint bytes
///   56 u64 XXH64(payload, seed = fingerprint)  64 u64 XXH64(header[0,64))
///   72 KV bytes, then the checkpoint bytes.
struct TierObjectView {
  TierKey key;
  int64_t numBlocks = 0;
  std::string_view kv, checkpoint; // into the decoded bytes
};
constexpr int64_t kTierHeaderBytes = 72;
constexpr uint32_t kTierFormatVersion = 1;
std::string encodeTierObject(const TierKey &key, int64_t numBlocks,
                             std::string_view kv, std::string_view checkpoint);
/// The same object built in place, without a copy of its payload: the
/// caller writes the KV at kTierHeaderBytes and the checkpoint after it
/// into `object` (kTierHeaderBytes + kvBytes + checkpoint bytes long), then
/// seals it, which writes the header, sizes and checksums.
void sealTierObject(std::string &object, const TierKey &key, int64_t numBlocks,
                    int64_t kvBytes);
/// Decodes and checks `bytes` against what the caller expects: the key it
/// asked for, `numBlocks` blocks of `geo.kvBlockBytes` and either no
/// checkpoint or one of `geo.checkpointBytes` (a save of several chunks
/// carries the checkpoint of its last chunk only; a stateful hit must end
/// at an object that has one). Corrupt for bytes
/// that are not an intact object, Mismatch for an intact object of another
/// key, geometry or size. With `payloadVerified` (TierGet::verified) the
/// header is checked in full and the payload's checksum is not recomputed.
TierResult decodeTierObject(std::string_view bytes, const TierKey &key,
                            const TierGeometry &geo, int64_t numBlocks,
                            TierObjectView &out, bool payloadVerified = false);
/// Whether `bytes` are an intact object of any key and geometry: the magic,
/// the header's checksum, the sizes it states and the payload's checksum.
bool tierObjectIntact(std::string_view bytes);

struct TierUsage {
  int64_t objects = 0, bytes = 0;
  int64_t capBytes = 0; // 0: the backend has no cap of ours (Redis)
  int64_t evictions = 0;
};

/// One storage backend. Keys are TierKey::text() strings: [A-Za-z0-9/.-],
/// 1 to 200 characters (others are Invalid).
class TierBackend {
public:
  virtual ~TierBackend();
  virtual std::string name() const = 0;
  /// Stores (or replaces) an object; LRU-evicts to fit the cap. TooLarge
  /// when it exceeds the whole cap; Full / Unavailable when the medium
  /// refuses it (nothing half-written is ever readable).
  virtual TierResult put(const std::string &key, std::string_view bytes) = 0;
  /// The object's bytes (refreshing its LRU position), NotFound, or
  /// Unavailable.
  virtual TierGet get(const std::string &key) = 0;
  /// None when held, NotFound, or Unavailable.
  virtual TierResult contains(const std::string &key) = 0;
  virtual TierResult remove(const std::string &key) = 0;
  virtual TierUsage usage() const = 0;
  /// Marks the object most recently used without reading it (a stack's
  /// lower levels, when an upper one served it). Default: nothing.
  virtual void touch(const std::string &key) {}
  /// Whether it answers from this machine's memory or disk, so a lookup
  /// may run on the step thread; a remote one (Redis) is only ever called
  /// from the transfer thread, so a dead or silent server cannot stall a
  /// step.
  virtual bool local() const { return true; }
};

bool validTierKey(const std::string &key);
/// The Invalid result every backend gives for a key validTierKey refuses.
TierResult invalidTierKey(const std::string &key);

/// Where the host tier keeps its objects' bytes: ordinary memory, or memory
/// a device copies from at full link speed (Device::allocateHost through
/// poolrt/TierLoad.h). Called from any thread.
class TierHostMemory {
public:
  virtual ~TierHostMemory();
  virtual std::string name() const = 0;
  /// nullptr when none can be had (the tier then uses ordinary memory).
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *p) = 0;
};

/// Host memory, LRU, capped in bytes. Its buffers come from `memory`
/// (ordinary memory when null) and are recycled: objects of one geometry
/// have one or two sizes, so a store after an eviction reuses the evicted
/// buffer instead of pinning new memory. Every store is checked with
/// tierObjectIntact, so a hit of an intact object is TierGet::verified.
std::unique_ptr<TierBackend>
makeHostTier(int64_t capBytes, std::shared_ptr<TierHostMemory> memory = nullptr);

struct DiskTierOptions {
  std::string dir;      // created if missing
  int64_t capBytes = 0; // >= 1
  bool fsync = true;    // fsync each object and the directory
  /// Tests only: called after the first half of an object's bytes reached
  /// its temporary file (a crash there must leave nothing servable).
  std::function<void()> midWriteHook;
};
/// Local disk: one file per object under `dir`, written to a temporary
/// name and renamed, so a store killed at any point leaves no object;
/// opening removes such leftovers and rebuilds the LRU from access times.
Result<std::unique_ptr<TierBackend>> openDiskTier(const DiskTierOptions &o);

struct RedisTierOptions {
  /// redis://[:PASSWORD@]HOST:PORT[/DB] (HOST an address or name).
  std::string url;
  int64_t timeoutMs = 1000; // connect and each command
};
/// Redis through hiredis: SET / GET / EXISTS / DEL on the keys as given
/// (their fingerprint prefix keeps geometries apart). A dead or silent
/// server answers Unavailable within the timeout; the next call reconnects.
Result<std::unique_ptr<TierBackend>> openRedisTier(const RedisTierOptions &o);

/// Backends stacked fastest first (host over disk, the default): get tries
/// each in order and copies a lower hit into the levels above; put writes
/// every level (a level that refuses it is reported, the others keep it).
std::unique_ptr<TierBackend>
makeStackedTier(std::vector<std::unique_ptr<TierBackend>> levels);

/// `--tier` specs: "host:SIZE" , "disk:DIR:SIZE", "host:SIZE+disk:DIR:SIZE"
/// or "redis://...". SIZE as in --budget (4GiB, 512MiB, bytes). A host
/// level keeps its bytes in `hostMemory` (ordinary memory when null).
Result<std::unique_ptr<TierBackend>>
openTier(const std::string &spec, std::shared_ptr<TierHostMemory> hostMemory = nullptr);

} // namespace poolrt

#endif // POOLRT_TIER_H
