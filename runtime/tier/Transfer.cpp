//===- Transfer.cpp - The tier's transfer thread --------------------------===//

#include "poolrt/TierTransfer.h"

#include <algorithm>
#include <iterator>

namespace poolrt {

namespace {
using Clock = std::chrono::steady_clock;
double microsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}
} // namespace

void sampleLatency(std::vector<double> &v, double us) {
  constexpr size_t kMax = 4096;
  if (v.size() < kMax)
    v.push_back(us);
  else
    v[size_t(us * 1000) % kMax] = us;
}

double latencyPercentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t i = size_t(q * double(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

TierTransfer::TierTransfer(TierBackend &backend, int64_t maxQueuedBytes)
    : backend_(backend), maxQueuedBytes_(maxQueuedBytes) {
  thread_ = std::thread([this] { loop(); });
}

TierTransfer::~TierTransfer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool TierTransfer::store(std::string key, std::string bytes, bool skipIfHeld) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || queuedBytes_ + int64_t(bytes.size()) > maxQueuedBytes_) {
    ++counters_.storesRefused;
    return false;
  }
  queuedBytes_ += int64_t(bytes.size());
  ++pending_;
  ++counters_.storesQueued;
  Job j;
  j.kind = Kind::Store;
  j.key = std::move(key);
  j.bytes = TierBytes(std::move(bytes));
  j.skipIfHeld = skipIfHeld;
  storing_.emplace(j.key, Storing{j.bytes, !skipIfHeld});
  queue_.push_back(std::move(j));
  wake_.notify_one();
  return true;
}

void TierTransfer::remove(std::string key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_)
    return;
  Job j;
  j.kind = Kind::Remove;
  j.key = std::move(key);
  ++pending_;
  queue_.push_back(std::move(j));
  wake_.notify_one();
}

uint64_t TierTransfer::fetch(std::vector<std::string> keys) {
  std::lock_guard<std::mutex> lock(mu_);
  Job j;
  j.kind = Kind::Fetch;
  j.ticket = nextTicket_++;
  j.keys = std::move(keys);
  uint64_t t = j.ticket;
  ++pending_;
  ++counters_.fetches;
  // Behind the other fetches, ahead of every store and removal.
  auto at = queue_.begin();
  while (at != queue_.end() && at->kind == Kind::Fetch)
    ++at;
  queue_.insert(at, std::move(j));
  wake_.notify_one();
  return t;
}

bool TierTransfer::storing(const std::string &key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return storing_.count(key) > 0;
}

std::optional<TierTransfer::Fetched> TierTransfer::take(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = done_.find(ticket);
  if (it == done_.end())
    return std::nullopt;
  Fetched f = std::move(it->second);
  done_.erase(it);
  return f;
}

void TierTransfer::cancel(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  if (done_.erase(ticket)) { // it finished: drop the result
    ++counters_.fetchesCancelled;
    return;
  }
  cancelled_[ticket] = true;
}

bool TierTransfer::wait(uint64_t ticket, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return fetched_.wait_until(lock, deadline, [&] { return done_.count(ticket) > 0; });
}

void TierTransfer::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_)
      return; // queued jobs are abandoned; drain() first to land them
    Job j = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    if (j.kind == Kind::Store)
      runStore(j);
    else if (j.kind == Kind::Fetch)
      runFetch(j);
    else
      (void)backend_.remove(j.key); // a failure leaves it to the next decode
    lock.lock();
    --pending_;
    if (pending_ == 0)
      idle_.notify_all();
  }
}

void TierTransfer::runStore(Job &j) {
  auto t0 = Clock::now();
  TierResult held = j.skipIfHeld ? backend_.contains(j.key)
                                 : TierResult::fail(TierFault::NotFound, "");
  TierResult r = held.ok() ? TierResult::success() : backend_.put(j.key, j.bytes);
  double us = microsSince(t0);
  std::lock_guard<std::mutex> lock(mu_);
  queuedBytes_ -= int64_t(j.bytes.size());
  // This store's entry (the oldest of its key: stores run in order).
  auto it = storing_.find(j.key);
  if (it != storing_.end())
    storing_.erase(it);
  if (held.ok())
    ++counters_.storesSkipped;
  else if (r.ok()) {
    ++counters_.storesDone;
    counters_.bytesStored += int64_t(j.bytes.size());
    sampleLatency(counters_.storeMicros, us);
  } else
    ++counters_.storesFailed;
}

void TierTransfer::runFetch(Job &j) {
  auto t0 = Clock::now();
  Fetched f;
  for (const std::string &k : j.keys) {
    TierGet g;
    std::optional<TierBytes> replacing;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (cancelled_.count(j.ticket) || stopping_)
        break;
      auto [lo, hi] = storing_.equal_range(k);
      for (auto it = lo; it != hi; ++it)
        if (it->second.replaces)
          replacing = it->second.bytes; // the newest replacing store wins
    }
    if (replacing)
      g.bytes = *replacing;
    else
      g = backend_.get(k);
    if (g.fault == TierFault::NotFound) {
      std::lock_guard<std::mutex> l(mu_);
      auto [lo, hi] = storing_.equal_range(k);
      if (lo != hi) { // queued behind this fetch, or being written
        g = TierGet();
        g.bytes = std::prev(hi)->second.bytes;
      }
    }
    bool ok = g.ok();
    f.results.push_back(std::move(g));
    if (!ok)
      break;
  }
  f.micros = microsSince(t0);
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_.erase(j.ticket)) {
    ++counters_.fetchesCancelled;
    return;
  }
  ++counters_.fetchesDone;
  for (const TierGet &g : f.results)
    counters_.bytesFetched += int64_t(g.bytes.size());
  sampleLatency(counters_.fetchMicros, f.micros);
  done_[j.ticket] = std::move(f);
  fetched_.notify_all();
}

Status TierTransfer::drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!idle_.wait_for(lock, timeout, [&] { return pending_ == 0; }))
    return Error{ErrorKind::Internal,
                 "tier: " + std::to_string(pending_) + " transfers (" +
                     std::to_string(queue_.size()) + " queued) still pending after " +
                     std::to_string(timeout.count()) +
                     " ms; stopping rather than reuse what they read"};
  return Status::success();
}

int64_t TierTransfer::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

TierTransferCounters TierTransfer::counters(bool latencies) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (latencies)
    return counters_;
  TierTransferCounters c;
  c.storesQueued = counters_.storesQueued;
  c.storesDone = counters_.storesDone;
  c.storesSkipped = counters_.storesSkipped;
  c.storesFailed = counters_.storesFailed;
  c.storesRefused = counters_.storesRefused;
  c.fetches = counters_.fetches;
  c.fetchesDone = counters_.fetchesDone;
  c.fetchesCancelled = counters_.fetchesCancelled;
  c.bytesStored = counters_.bytesStored;
  c.bytesFetched = counters_.bytesFetched;
  return c;
}

} // namespace poolrt
