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

struct TierGet {
  TierFault fault = TierFault::None;
  std::string message;
  std::string bytes; // the object's bytes when ok()
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
/// Decodes and checks `bytes` against what the caller expects: the key it
/// asked for, `numBlocks` blocks of `geo.kvBlockBytes` and either no
/// checkpoint or one of `geo.checkpointBytes` (a save of several chunks
/// carries the checkpoint of its last chunk only; a stateful hit must end
/// at an object that has one). Corrupt for bytes
/// that are not an intact object, Mismatch for an intact object of another
/// key, geometry or size.
TierResult decodeTierObject(std::string_view bytes, const TierKey &key,
                            const TierGeometry &geo, int64_t numBlocks,
                            TierObjectView &out);

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
};

bool validTierKey(const std::string &key);
/// The Invalid result every backend gives for a key validTierKey refuses.
TierResult invalidTierKey(const std::string &key);

/// Host memory, LRU, capped in bytes.
std::unique_ptr<TierBackend> makeHostTier(int64_t capBytes);

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
/// or "redis://...". SIZE as in --budget (4GiB, 512MiB, bytes).
Result<std::unique_ptr<TierBackend>> openTier(const std::string &spec);

} // namespace poolrt

#endif // POOLRT_TIER_H
