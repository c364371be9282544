//===- TierTransfer.h - The tier's transfer thread --------------*- C++ -*-===//
//
// Moves host bytes between the step thread and a tier backend on a thread
// of its own, so a store never blocks a step and a slow backend only makes
// a load late. Device memory never crosses: the step thread gathers a
// boundary's KV and checkpoint into host bytes before it queues a store,
// and scatters a fetched object itself, so no transfer can outlive the
// blocks it read or race the blocks it writes.
//
// One lifetime per job: a job is counted pending from the moment it is
// queued until its result exists (queued -> running -> done), so drain()
// sees every job, including one queued but not yet picked up (the seed's
// P1-1), and fails (fail-stop) when its timeout passes, never returning as
// if the jobs had finished.
//
// Lock contract: every member may be called from any thread; results are
// taken by the thread that asked.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_TIERTRANSFER_H
#define POOLRT_TIERTRANSFER_H

#include "poolrt/Tier.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace poolrt {

struct TierTransferCounters {
  int64_t storesQueued = 0, storesDone = 0, storesSkipped = 0, storesFailed = 0,
          storesRefused = 0; // refused: the queue's byte cap was full
  int64_t fetches = 0, fetchesDone = 0, fetchesCancelled = 0;
  int64_t bytesStored = 0, bytesFetched = 0;
  std::vector<double> storeMicros, fetchMicros; // one per finished job
};

/// Latency samples: the first 4,096 kept, then each new one replaces a
/// slot, so memory and the copy a scrape makes stay bounded.
void sampleLatency(std::vector<double> &v, double us);
/// The q-quantile (0..1) of latency samples, nearest rank; 0 when empty.
double latencyPercentile(std::vector<double> v, double q);

class TierTransfer {
public:
  /// `maxQueuedBytes`: stores queued and not yet written may hold this
  /// many bytes; a store past it is refused (counted), never blocking.
  TierTransfer(TierBackend &backend, int64_t maxQueuedBytes);
  ~TierTransfer(); // stops the thread after its current job

  /// Queues a store of `bytes` under `key`. With `skipIfHeld` it is
  /// skipped when the backend holds the key already (an object without a
  /// checkpoint never replaces one that may have it). false when refused
  /// (queue full, or stopping).
  bool store(std::string key, std::string bytes, bool skipIfHeld = true);
  /// Queues a removal (an object a decoder refused), so a remote backend
  /// is never called from the step thread.
  void remove(std::string key);

  /// Queues a fetch of `keys` in order, stopping at the first that is not
  /// held (or fails): the result has one TierGet per key tried. Returns a
  /// ticket for take() / cancel(). A fetch goes ahead of queued stores (a
  /// load waits on it; a store does not), and a key whose store is queued
  /// or running is served from that store's bytes, so going first never
  /// loses an object the backend does not hold yet.
  uint64_t fetch(std::vector<std::string> keys);
  /// Whether a store of `key` is queued or running: a lookup that asks the
  /// backend alone would miss an object a fetch can read.
  bool storing(const std::string &key) const;
  struct Fetched {
    std::vector<TierGet> results;
    double micros = 0;
  };
  /// The result once the fetch is done (then forgotten), else nullopt.
  std::optional<Fetched> take(uint64_t ticket);
  /// Gives up on a fetch (its load is late): it stops after its current
  /// key and its result is dropped.
  void cancel(uint64_t ticket);
  /// Blocks until the fetch is done or `deadline` passes; true when done.
  bool wait(uint64_t ticket, std::chrono::steady_clock::time_point deadline);

  /// Waits until every queued and running job is done. Error (Internal,
  /// naming what is left) when `timeout` passes first: the caller must
  /// stop, not go on as if the jobs had landed.
  Status drain(std::chrono::milliseconds timeout);
  int64_t pending() const;
  /// The counters; the latency samples only when `latencies` (a scrape
  /// per step need not copy them).
  TierTransferCounters counters(bool latencies = true) const;

private:
  enum class Kind { Store, Remove, Fetch };
  struct Job {
    Kind kind = Kind::Store;
    uint64_t ticket = 0; // a fetch's
    std::string key;
    TierBytes bytes;
    bool skipIfHeld = true;
    std::vector<std::string> keys;
  };
  void runStore(Job &j);
  void runFetch(Job &j);
  void loop();

  TierBackend &backend_;
  int64_t maxQueuedBytes_;
  mutable std::mutex mu_;
  std::condition_variable wake_, idle_, fetched_;
  std::deque<Job> queue_;
  int64_t queuedBytes_ = 0;
  int64_t pending_ = 0; // queued + running
  bool stopping_ = false;
  uint64_t nextTicket_ = 1;
  std::map<uint64_t, Fetched> done_;
  std::map<uint64_t, bool> cancelled_;
  /// Stores queued or running, by key, in order: what a fetch reads before
  /// the backend has them. A replacing store (skipIfHeld false: it carries
  /// a checkpoint) is read first; one that yields to a held object only
  /// when the backend does not hold the key.
  struct Storing {
    TierBytes bytes;
    bool replaces = false;
  };
  std::multimap<std::string, Storing> storing_;
  TierTransferCounters counters_;
  std::thread thread_;
};

} // namespace poolrt

#endif
