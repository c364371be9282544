//===- Ranks.h - Several engines over one trace, one per rank -----*- C++ -*-===//
//
// A data-parallel deployment in one process: `ranks` engines, each with its
// own device handle, arena, pools and prefix cache, each stepping on its
// own thread. The trace is split by conversation: root request i goes to
// rank i % ranks and every turn that follows it goes with it (its prefix
// lives there). The ranks share one offload tier (each has its own
// transfer thread): a prefix one rank stored loads on another. Draft acceptance is seeded by the trace index, so a
// request's output is the same whichever rank runs it, and outputs are
// returned in trace order: a replay on N ranks gives the same --outputs as
// on one.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_RANKS_H
#define POOLRT_SERVE_RANKS_H

#include "poolrt/serve/Engine.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace poolrt {
namespace serve {

/// `trace` split over `ranks`: the requests of each rank (follow-up indices
/// remapped, seedIndex set to the trace index) and, for each, its index in
/// `trace`.
struct RankSplit {
  std::vector<Trace> traces;
  std::vector<std::vector<size_t>> origin;
};
RankSplit splitTrace(const Trace &trace, int64_t ranks);

class RankSet {
public:
  /// Opens `deviceName` once per rank and creates an engine on each.
  static Result<std::unique_ptr<RankSet>> create(const Artifact &artifact,
                                                 const std::string &deviceName,
                                                 const ServeOptions &options,
                                                 int64_t ranks);
  ~RankSet();

  void submit(const Trace &trace);
  /// Runs every rank to the end (one thread each when there are several);
  /// `progress` is called from the calling thread, after every step with
  /// one rank, every 50 ms with several. The first rank's error, if any.
  Status run(const std::function<void()> &progress = {});

  size_t size() const { return engines_.size(); }
  Engine &rank(size_t i) { return *engines_[i]; }
  const Engine &rank(size_t i) const { return *engines_[i]; }
  const Device &device(size_t i) const { return *devices_[i]; }
  /// Safe while running (each engine's snapshot is taken under its lock).
  std::vector<EngineSnapshot> snapshots() const;
  EngineSnapshot total() const;
  /// Every request of the submitted traces, in trace order.
  std::vector<RequestOutcome> outcomes() const;
  /// Every rank's per-step host overhead, together.
  std::vector<double> stepOverheadMicros() const;

private:
  RankSet() = default;
  std::vector<std::unique_ptr<Device>> devices_;
  /// One tier for every rank (in rank 0's device's host memory): a prefix
  /// one rank stored loads on another.
  std::shared_ptr<TierBackend> tier_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<std::vector<size_t>> origin_; // per rank: trace index of each outcome
  size_t submitted_ = 0;
};

} // namespace serve
} // namespace poolrt

#endif
