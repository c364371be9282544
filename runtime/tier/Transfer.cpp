//===- Transfer.cpp - The tier's transfer thread --------------------------===//

#include "poolrt/TierTransfer.h"

namespace poolrt {

namespace {
using Clock = std::chrono::steady_clock;
double microsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}
/// Latency samples: the first 4,096 kept, then each new one replaces a
/// slot, so memory and the copy a scrape makes stay bounded.
void sample(std::vector<double> &v, double us) {
  constexpr size_t kMax = 4096;
  if (v.size() < kMax)
    v.push_back(us);
  else
    v[size_t(us * 1000) % kMax] = us;
}
} // namespace

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
  j.key = std::move(key);
  j.bytes = std::move(bytes);
  j.skipIfHeld = skipIfHeld;
  queue_.push_back(std::move(j));
  wake_.notify_one();
  return true;
}

uint64_t TierTransfer::fetch(std::vector<std::string> keys) {
  std::lock_guard<std::mutex> lock(mu_);
  Job j;
  j.ticket = nextTicket_++;
  j.keys = std::move(keys);
  uint64_t t = j.ticket;
  ++pending_;
  ++counters_.fetches;
  queue_.push_back(std::move(j));
  wake_.notify_one();
  return t;
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
    auto t0 = Clock::now();
    if (j.ticket == 0) {
      TierResult held = j.skipIfHeld ? backend_.contains(j.key)
                                     : TierResult::fail(TierFault::NotFound, "");
      TierResult r = held.ok() ? TierResult::success() : backend_.put(j.key, j.bytes);
      double us = microsSince(t0);
      lock.lock();
      queuedBytes_ -= int64_t(j.bytes.size());
      if (held.ok())
        ++counters_.storesSkipped;
      else if (r.ok()) {
        ++counters_.storesDone;
        counters_.bytesStored += int64_t(j.bytes.size());
        sample(counters_.storeMicros, us);
      } else
        ++counters_.storesFailed;
    } else {
      Fetched f;
      for (const std::string &k : j.keys) {
        {
          std::lock_guard<std::mutex> l(mu_);
          if (cancelled_.count(j.ticket) || stopping_)
            break;
        }
        TierGet g = backend_.get(k);
        bool ok = g.ok();
        f.results.push_back(std::move(g));
        if (!ok)
          break;
      }
      f.micros = microsSince(t0);
      lock.lock();
      if (cancelled_.erase(j.ticket)) {
        ++counters_.fetchesCancelled;
      } else {
        ++counters_.fetchesDone;
        for (const TierGet &g : f.results)
          counters_.bytesFetched += int64_t(g.bytes.size());
        sample(counters_.fetchMicros, f.micros);
        done_[j.ticket] = std::move(f);
        fetched_.notify_all();
      }
    }
    --pending_;
    if (pending_ == 0)
      idle_.notify_all();
  }
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
