//===- TierSession.h - One engine's offload tier session --------*- C++ -*-===//
//
// The offload tier (specs/tier.md) as one engine serves it: the backend,
// the transfer thread that moves its bytes, the objects' geometry and size,
// the device side (TierDevice) and the restores' latency samples, and what
// each request has in flight (TierSeqState: a fetch, its deadline, the
// objects loaded and waiting for their admission, what is stored).
//
// The scheduler (Engine) decides when; the session does the tier's part
// and bumps the tier's counters in the snapshot it is handed. Everything
// it needs of the scheduler (the request, the cache manager, the device)
// is passed in; what is the scheduler's own (a fork copy, the request's
// outcome) stays in Engine.
//
// Private to the serve library. Lock contract: the step thread only (the
// transfer thread is the session's own).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_TIERSESSION_H
#define POOLRT_SERVE_TIERSESSION_H

#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/SolvedLayout.h"
#include "poolrt/Tier.h"
#include "poolrt/TierTransfer.h"
#include "poolrt/serve/Engine.h"
#include "poolrt/serve/TierDevice.h"

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace poolrt {
namespace serve {

/// One request's tier state (Engine's Seq holds one).
struct TierSeqState {
  uint64_t ticket = 0;            // a fetch in flight (0: none)
  std::chrono::steady_clock::time_point deadline;
  std::vector<int64_t> boundaries; // what the fetch asked for, in tokens
  bool tried = false;             // this admission looked the tier up
  int retries = 0;                // lookups again after the HBM hit shrank
  int64_t savedTo = 0;            // boundaries up to here are stored (or skipped)
  int64_t demand = 0;             // a boundary whose KV the tier has, not its state
  struct TierRestore {
    int64_t from = 0, to = 0;         // tokens: the HBM hit, the last boundary
    struct Object {
      int64_t boundary = 0; // tokens: where it ends
      TierBytes bytes;      // validated, shared with the tier
      TierObjectView view;  // into bytes
    };
    std::vector<Object> objects; // in boundary order
  };
  std::optional<TierRestore> restore;
};

/// What a restore loaded, in tokens: from the HBM hit to the last boundary.
struct TierLoad {
  int64_t from = 0, to = 0;
};

class TierSession {
public:
  /// The tier `options` name (options.tier, or options.sharedTier), for
  /// the cache manager `cache` (blocks of `blockSize` tokens; `stateful`:
  /// it keeps state groups) over `layout`, whose arena (at `arenaBase`)
  /// `launcher` runs the kernels of on `device`. Invalid: an object size
  /// the blocks or checkpoints cannot cut, a state that cannot be
  /// checkpointed, a backend that cannot open.
  static Result<std::unique_ptr<TierSession>>
  create(const SolvedLayout &layout, Device &device, KernelLauncher &launcher,
         DevicePtr arenaBase, const CacheManager &cache, int64_t blockSize,
         bool stateful, const ServeOptions &options);
  ~TierSession();
  TierSession(const TierSession &) = delete;
  TierSession &operator=(const TierSession &) = delete;

  /// Tokens of one tier object.
  int64_t chunkTokens() const { return chunk_; }
  /// Stops the transfer thread (after its current job); the destructor
  /// does so too. Nothing may be asked of the session after it but to go.
  void stopTransfer();

  /// Tokens cached once the tier's objects after `cached` are loaded
  /// (`cached` when none), or -1 while their fetch is in flight; counts
  /// lookups and failed, late and refused loads in `counters`.
  Result<int64_t> admit(TierSeqState &t, const Request &r, int64_t cached,
                        bool mayWait, const CacheManager &cache,
                        EngineSnapshot &counters);
  /// Admitted (allocated) with `cached` tokens of HBM hit: what the hit
  /// covers was stored by whoever computed it.
  void admitted(TierSeqState &t, int64_t cached) const;
  /// The objects `admit` kept (t.restore, taken) into `r`'s blocks and
  /// group, synchronized on `device`, and published: what was loaded, or
  /// none (no blocks to land in: recompute). The caller then runs the
  /// request's fork copy and calls restored().
  Result<std::optional<TierLoad>> restore(TierSeqState &t, Request &r,
                                          CacheManager &cache, Device &device,
                                          EngineSnapshot &counters);
  /// After a restore's fork copy: the hit counted, and stored.
  void restored(TierSeqState &t, const TierLoad &load,
                EngineSnapshot &counters) const;
  /// Queues stores of the boundaries of `r` up to `end` not yet stored;
  /// `stateAtEnd`: the request's state holds `end`'s tokens.
  Status save(TierSeqState &t, const Request &r, int64_t end, bool stateAtEnd,
              CacheManager &cache, EngineSnapshot &counters);
  /// A prefill chunk cut to end at the last tier boundary of the prompt.
  int64_t cut(const TierSeqState &t, const Request &r, int64_t start,
              int64_t chunk, CacheManager &cache) const;
  /// The transfer thread's store counters into `counters`.
  void publishCounters(EngineSnapshot &counters) const;
  /// Waits for queued stores (ServeOptions::tierDrainTimeoutMs).
  Status drain();
  /// The tier's latencies (microseconds, one per job).
  TierLatencies latencyMicros() const;

private:
  TierSession() = default;
  Result<int64_t> lookUpAgain(TierSeqState &t, const Request &r, int64_t cached,
                              bool mayWait, const CacheManager &cache,
                              EngineSnapshot &counters);

  // Declared in the reverse of the order they go (~TierSession).
  std::unique_ptr<TierDevice> device_; // gathers saves, scatters loads
  std::shared_ptr<TierBackend> backend_;
  std::unique_ptr<TierTransfer> transfer_;
  TierGeometry geo_;
  int64_t chunk_ = 0;     // tokens
  int64_t blockSize_ = 0; // tokens
  int64_t loadDeadlineMs_ = 0, drainTimeoutMs_ = 0;
  std::vector<double> restoreMicros_; // one per load, on the device
};

} // namespace serve
} // namespace poolrt

#endif // POOLRT_SERVE_TIERSESSION_H
