//===- HashIndex.h - Fixed-capacity open-addressing u64 -> i32 --*- C++ -*-===//
//
// The content index of the pools: 64-bit content hash -> small id. A pool
// knows the most entries it can ever hold (one per block, or one per
// checkpoint record), so the table is sized once, at construction, to at
// most half full and never rehashes: no allocation and no latency spike on
// the hot path, and a lookup is one multiply and, almost always, one cache
// line.
//
// Linear probing with backward-shift deletion, so there are no tombstones
// and a long-running pool does not degrade with churn. A slot is empty when
// its value is -1; keys are arbitrary 64-bit values (every bit pattern is a
// valid key). Keys are mixed with a Fibonacci multiply: content hashes are
// already uniform, but tests and callers also use small sequential keys.
//
// Silent failure mode: inserting more than `maxEntries` distinct keys. The
// table would still work up to its capacity and then loop forever in a
// probe. Callers guarantee the bound; debug builds assert it.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DETAIL_HASHINDEX_H
#define POOLRT_DETAIL_HASHINDEX_H

#include "poolrt/detail/LinearProbe.h"

#include <cassert>
#include <cstdint>
#include <vector>

namespace poolrt {
namespace detail {

class HashIndex {
public:
  static constexpr int32_t kAbsent = -1;

  HashIndex() : HashIndex(0) {}
  explicit HashIndex(int64_t maxEntries) {
    int bits = 4;
    while ((int64_t(1) << bits) < 2 * maxEntries)
      ++bits;
    shift = 64 - bits;
    mask = (uint64_t(1) << bits) - 1;
    slots.assign(size_t(1) << bits, Slot{0, kAbsent});
    limit = maxEntries;
  }

  int64_t size() const { return count; }
  int64_t maxEntries() const { return limit; }

  /// The value stored under `key`, or kAbsent.
  int32_t find(uint64_t key) const {
    for (uint64_t i = home(key);; i = (i + 1) & mask) {
      const Slot &s = slots[i];
      if (s.value == kAbsent)
        return kAbsent;
      if (s.key == key)
        return s.value;
    }
  }

  /// Map `key` to `value` (>= 0); returns the value it replaced, or kAbsent.
  int32_t insertOrAssign(uint64_t key, int32_t value) {
    assert(value >= 0);
    for (uint64_t i = home(key);; i = (i + 1) & mask) {
      Slot &s = slots[i];
      if (s.value == kAbsent) {
        assert(count < limit && "HashIndex over its declared capacity");
        s.key = key;
        s.value = value;
        ++count;
        return kAbsent;
      }
      if (s.key == key) {
        int32_t old = s.value;
        s.value = value;
        return old;
      }
    }
  }

  /// Remove `key`; returns its value, or kAbsent if it was not there.
  int32_t erase(uint64_t key) {
    uint64_t i = home(key);
    for (;; i = (i + 1) & mask) {
      if (slots[i].value == kAbsent)
        return kAbsent;
      if (slots[i].key == key)
        break;
    }
    int32_t old = slots[i].value;
    backwardShiftErase(slots, mask, i,
                       [this](const Slot &s) { return home(s.key); });
    --count;
    return old;
  }

  void clear() {
    clearSlots(slots);
    count = 0;
  }

  /// Visit every (key, value); order carries no meaning.
  template <typename F> void forEach(F f) const {
    for (const Slot &s : slots)
      if (s.value != kAbsent)
        f(s.key, s.value);
  }

private:
  struct Slot {
    uint64_t key;
    int32_t value;
  };
  uint64_t home(uint64_t key) const {
    return (key * 0x9E3779B97F4A7C15ull) >> shift;
  }

  std::vector<Slot> slots;
  uint64_t mask = 0;
  int shift = 60;
  int64_t count = 0;
  int64_t limit = 0;
};

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DETAIL_HASHINDEX_H
