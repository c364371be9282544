//===- Ranks.cpp - Several engines over one trace, one per rank -----------===//

#include "poolrt/serve/Ranks.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace poolrt {
namespace serve {

EngineSnapshot &EngineSnapshot::operator+=(const EngineSnapshot &o) {
  int64_t EngineSnapshot::*const members[] = {
      &EngineSnapshot::requestsTotal,   &EngineSnapshot::requestsFinished,
      &EngineSnapshot::requestsRefused, &EngineSnapshot::requestsRunning,
      &EngineSnapshot::requestsWaiting, &EngineSnapshot::promptTokens,
      &EngineSnapshot::generatedTokens, &EngineSnapshot::forwardTokens,
      &EngineSnapshot::preemptions,     &EngineSnapshot::steps,
      &EngineSnapshot::prefillSteps,    &EngineSnapshot::decodeSteps,
      &EngineSnapshot::imageStores,     &EngineSnapshot::imageRestores,
      &EngineSnapshot::forkCopies,      &EngineSnapshot::boundaryMoves,
      &EngineSnapshot::blockCopies,     &EngineSnapshot::slotCopies,
      &EngineSnapshot::draftsOffered,   &EngineSnapshot::draftsAccepted,
      &EngineSnapshot::blocksTotal,     &EngineSnapshot::blocksFree,
      &EngineSnapshot::blocksIndexed,   &EngineSnapshot::blocksUsed,
      &EngineSnapshot::groupsTotal,     &EngineSnapshot::groupsFree,
      &EngineSnapshot::prefixQueryTokens, &EngineSnapshot::prefixHitTokens,
      &EngineSnapshot::tierLookups,     &EngineSnapshot::tierHitTokens,
      &EngineSnapshot::tierLoadsFailed, &EngineSnapshot::tierLoadsLate,
      &EngineSnapshot::tierObjectsRefused, &EngineSnapshot::tierStoresQueued,
      &EngineSnapshot::tierStoresDone,  &EngineSnapshot::tierStoresFailed,
      &EngineSnapshot::tierStoresRefused, &EngineSnapshot::tierBytesStored,
      &EngineSnapshot::tierBytesLoaded};
  for (int64_t EngineSnapshot::*m : members)
    this->*m += o.*m;
  stats += o.stats;
  funnel += o.funnel;
  return *this;
}

RankSplit splitTrace(const Trace &trace, int64_t ranks) {
  RankSplit out;
  size_t n = size_t(ranks < 1 ? 1 : ranks);
  out.traces.assign(n, Trace());
  out.origin.assign(n, {});
  for (Trace &t : out.traces) {
    t.source = trace.source;
    t.format = trace.format;
  }
  std::vector<size_t> rankOf(trace.requests.size(), 0), localIndex(trace.requests.size(), 0);
  size_t roots = 0;
  for (size_t i = 0; i < trace.requests.size(); ++i) {
    TraceRequest r = trace.requests[i];
    bool follows = r.followUpOf >= 0 && size_t(r.followUpOf) < i;
    size_t rank = follows ? rankOf[size_t(r.followUpOf)] : roots++ % n;
    if (follows)
      r.followUpOf = int64_t(localIndex[size_t(r.followUpOf)]);
    else
      r.followUpOf = -1;
    r.seedIndex = r.seedIndex >= 0 ? r.seedIndex : int64_t(i);
    rankOf[i] = rank;
    localIndex[i] = out.traces[rank].requests.size();
    out.traces[rank].requests.push_back(std::move(r));
    out.origin[rank].push_back(i);
  }
  return out;
}

RankSet::~RankSet() {
  engines_.clear(); // before the devices they run on
  tier_.reset();    // its page-locked buffers before rank 0's device
}

Result<std::unique_ptr<RankSet>> RankSet::create(const Artifact &artifact,
                                                 const std::string &deviceName,
                                                 const ServeOptions &options,
                                                 int64_t ranks) {
  if (ranks < 1 || ranks > 64)
    return Error::invalid("ranks must be 1..64, got " + std::to_string(ranks));
  std::unique_ptr<RankSet> set(new RankSet());
  for (int64_t i = 0; i < ranks; ++i) {
    auto dev = openDevice(deviceName);
    if (!dev.ok())
      return dev.error();
    set->devices_.push_back(dev.take());
  }
  ServeOptions o = options;
  if (!o.tier.empty() && !o.sharedTier && ranks > 1 && o.policy.prefixCaching) {
    auto t = openTier(o.tier, hostMemoryOf(*set->devices_[0]));
    if (!t.ok())
      return t.error();
    set->tier_ = t.take();
    o.sharedTier = set->tier_;
  }
  for (int64_t i = 0; i < ranks; ++i) {
    auto e = Engine::create(artifact, *set->devices_[size_t(i)], o);
    if (!e.ok()) {
      Error err = e.error();
      if (ranks > 1)
        err.message = "rank " + std::to_string(i) + ": " + err.message;
      return err;
    }
    set->engines_.push_back(e.take());
  }
  set->origin_.assign(size_t(ranks), {});
  return set;
}

void RankSet::submit(const Trace &trace) {
  RankSplit split = splitTrace(trace, int64_t(engines_.size()));
  for (size_t r = 0; r < engines_.size(); ++r) {
    engines_[r]->submit(split.traces[r]);
    for (size_t i : split.origin[r])
      origin_[r].push_back(submitted_ + i);
  }
  submitted_ += trace.requests.size();
}

Status RankSet::run(const std::function<void()> &progress) {
  if (engines_.size() == 1)
    return engines_[0]->run(progress);
  std::vector<Status> result(engines_.size(), Status::success());
  std::atomic<size_t> running{engines_.size()};
  std::vector<std::thread> threads;
  for (size_t r = 0; r < engines_.size(); ++r)
    threads.emplace_back([this, r, &result, &running] {
      result[r] = engines_[r]->run();
      --running;
    });
  while (running.load() > 0) {
    if (progress)
      progress();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (std::thread &t : threads)
    t.join();
  if (progress)
    progress();
  for (size_t r = 0; r < result.size(); ++r)
    if (!result[r].ok()) {
      Error e = result[r].error();
      e.message = "rank " + std::to_string(r) + ": " + e.message;
      return e;
    }
  return Status::success();
}

std::vector<EngineSnapshot> RankSet::snapshots() const {
  std::vector<EngineSnapshot> out;
  for (const auto &e : engines_)
    out.push_back(e->snapshot());
  return out;
}

EngineSnapshot RankSet::total() const {
  EngineSnapshot sum;
  for (const auto &e : engines_)
    sum += e->snapshot();
  return sum;
}

std::vector<RequestOutcome> RankSet::outcomes() const {
  std::vector<RequestOutcome> out(submitted_);
  for (size_t r = 0; r < engines_.size(); ++r) {
    const std::vector<RequestOutcome> &o = engines_[r]->outcomes();
    for (size_t i = 0; i < o.size() && i < origin_[r].size(); ++i)
      out[origin_[r][i]] = o[i];
  }
  return out;
}

std::vector<double> RankSet::stepOverheadMicros() const {
  std::vector<double> all;
  for (const auto &e : engines_)
    all.insert(all.end(), e->stepOverheadMicros().begin(), e->stepOverheadMicros().end());
  return all;
}

} // namespace serve
} // namespace poolrt
