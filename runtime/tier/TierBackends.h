//===- TierBackends.h - What the tier backends share (private) -*- C++ -*-===//
//
// The one key check (KeyCheckedBackend: every backend's put / get /
// contains / remove refuse a key validTierKey refuses, with invalidTierKey's
// message, before touching anything) and the byte-capped LRU of the host
// and disk tiers under their mutex (ByteCappedBackend: the cap check,
// contains and usage over a ByteLru).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_TIER_TIERBACKENDS_H
#define POOLRT_TIER_TIERBACKENDS_H

#include "ByteLru.h"

#include "poolrt/Tier.h"

#include <mutex>
#include <string>

namespace poolrt {

/// A failed result as a TierGet (its fault and message, no bytes).
inline TierGet tierGetFailure(const TierResult &r) {
  TierGet g;
  g.fault = r.fault;
  g.message = r.message;
  return g;
}

/// A backend whose operations on a key check it here, once, and then call
/// the *Checked hooks with a valid one. touch is not checked: a key that is
/// not valid is never held, so touching it does nothing anyway.
class KeyCheckedBackend : public TierBackend {
public:
  TierResult put(const std::string &key, std::string_view bytes) final;
  TierGet get(const std::string &key) final;
  TierResult contains(const std::string &key) final;
  TierResult remove(const std::string &key) final;

protected:
  virtual TierResult putChecked(const std::string &key, std::string_view bytes) = 0;
  virtual TierGet getChecked(const std::string &key) = 0;
  virtual TierResult containsChecked(const std::string &key) = 0;
  virtual TierResult removeChecked(const std::string &key) = 0;
};

/// A backend that indexes its objects in a ByteLru capped at `capBytes`,
/// under one mutex: `Value` is what it keeps beside each key and size.
template <typename Value> class ByteCappedBackend : public KeyCheckedBackend {
public:
  explicit ByteCappedBackend(int64_t capBytes) : lru_(capBytes) {}

  TierUsage usage() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return {int64_t(lru_.size()), lru_.bytes(), lru_.cap(), lru_.evictions()};
  }

protected:
  TierResult containsChecked(const std::string &key) override {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.contains(key) ? TierResult::success()
                              : TierResult::fail(TierFault::NotFound, "");
  }

  /// TooLarge for an object larger than the whole cap (never stored, and
  /// nothing is evicted for it); success otherwise.
  TierResult checkFits(const std::string &key, size_t bytes) const {
    if (int64_t(bytes) <= lru_.cap()) // the cap never changes: no lock
      return TierResult::success();
    return TierResult::fail(TierFault::TooLarge,
                            name() + " tier: object " + key + " of " + std::to_string(bytes) +
                                " B exceeds the cap of " + std::to_string(lru_.cap()) + " B");
  }

  mutable std::mutex mu_;
  ByteLru<std::string, Value> lru_; // under mu_
};

} // namespace poolrt

#endif // POOLRT_TIER_TIERBACKENDS_H
