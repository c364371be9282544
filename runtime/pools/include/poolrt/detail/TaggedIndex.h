//===- TaggedIndex.h - Compact index keyed through its values --*- C++ -*-===//
//
// A content index (64-bit hash -> id) for tables whose ids already record
// their own key: BlockPool's block b holds its hash in its metadata, so a
// slot needs only the id and a 32-bit tag, 8 bytes instead of 16. Half the
// bytes per slot buys a lower load factor in the same memory, and the load
// factor is what the hot path pays for: on a prefix-cache trace, linear
// probing at 1/2 load spent most of the pool's time mispredicting probe
// loops (1.6 slots per lookup, 3.3 per deletion); at 1/8 it is 1.06 and
// 1.26, and the pool runs about twice as fast.
//
// The tag is the top 32 bits of the Fibonacci-mixed key; the home slot is
// the tag's top `bits` bits, so deletion's backward shift needs neither the
// key nor a multiply. A tag match is confirmed by `keyOf(id) == key` (a
// different key with the same tag is possible, rare, and harmless). Deletion
// and re-pointing are by (key, id): they never read keyOf.
//
// Contract (the silent failure mode): while an id is in the table,
// keyOf(id) must return the key it was inserted under. Change an id's key
// only after erasing it (or by inserting the new key for another id, which
// replaces the entry). Debug builds assert the capacity bound; more entries
// than `maxEntries` would eventually fill the table and loop a probe forever.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DETAIL_TAGGEDINDEX_H
#define POOLRT_DETAIL_TAGGEDINDEX_H

#include "poolrt/detail/LinearProbe.h"

#include <cassert>
#include <cstdint>
#include <vector>

namespace poolrt {
namespace detail {

class TaggedIndex {
public:
  static constexpr int32_t kAbsent = -1;

  TaggedIndex() : TaggedIndex(0) {}
  /// Room for `maxEntries`, at a load of at most 1/`slotsPerEntry`.
  explicit TaggedIndex(int64_t maxEntries, int slotsPerEntry = 8) {
    bits = 4;
    while (bits < 32 && (int64_t(1) << bits) < slotsPerEntry * maxEntries)
      ++bits;
    mask = (uint64_t(1) << bits) - 1;
    slots.assign(size_t(1) << bits, Slot{0, kAbsent});
    limit = maxEntries;
  }

  int64_t size() const { return count; }

  template <typename KeyOf> int32_t find(uint64_t key, KeyOf keyOf) const {
    uint32_t t = tagOf(key);
    for (uint64_t i = homeOf(t);; i = (i + 1) & mask) {
      const Slot &s = slots[i];
      if (s.value == kAbsent)
        return kAbsent;
      if (s.tag == t && keyOf(s.value) == key)
        return s.value;
    }
  }

  /// Map `key` to `value` (>= 0; keyOf(value) must already be `key`);
  /// returns the id it replaced, or kAbsent.
  template <typename KeyOf>
  int32_t insertOrAssign(uint64_t key, int32_t value, KeyOf keyOf) {
    assert(value >= 0);
    uint32_t t = tagOf(key);
    for (uint64_t i = homeOf(t);; i = (i + 1) & mask) {
      Slot &s = slots[i];
      if (s.value == kAbsent) {
        assert(count < limit && "TaggedIndex over its declared capacity");
        s.tag = t;
        s.value = value;
        ++count;
        return kAbsent;
      }
      if (s.tag == t && (s.value == value || keyOf(s.value) == key)) {
        int32_t old = s.value;
        s.value = value;
        return old;
      }
    }
  }

  /// Remove the entry (key, value); false if there is none.
  bool erase(uint64_t key, int32_t value) {
    uint64_t i = locate(key, value);
    if (i == kNowhere)
      return false;
    backwardShiftErase(slots, mask, i,
                       [this](const Slot &s) { return homeOf(s.tag); });
    --count;
    return true;
  }

  /// The entry (key, from) now names `to` (the content moved).
  bool repoint(uint64_t key, int32_t from, int32_t to) {
    uint64_t i = locate(key, from);
    if (i == kNowhere)
      return false;
    slots[i].value = to;
    return true;
  }

  void clear() {
    clearSlots(slots);
    count = 0;
  }

  /// Start loading the cache line where a probe for `key` begins.
  void prefetch(uint64_t key) const {
    __builtin_prefetch(&slots[homeOf(tagOf(key))]);
  }

  /// Visit every stored id with its tag; order carries no meaning.
  template <typename F> void forEach(F f) const {
    for (const Slot &s : slots)
      if (s.value != kAbsent)
        f(s.tag, s.value);
  }
  static uint32_t tagOf(uint64_t key) {
    return uint32_t((key * 0x9E3779B97F4A7C15ull) >> 32);
  }

private:
  struct Slot {
    uint32_t tag;
    int32_t value;
  };
  static constexpr uint64_t kNowhere = ~uint64_t(0);
  uint64_t homeOf(uint32_t tag) const { return uint64_t(tag) >> (32 - bits); }
  uint64_t locate(uint64_t key, int32_t value) const {
    uint32_t t = tagOf(key);
    for (uint64_t i = homeOf(t);; i = (i + 1) & mask) {
      const Slot &s = slots[i];
      if (s.value == kAbsent)
        return kNowhere;
      if (s.value == value && s.tag == t)
        return i;
    }
  }

  std::vector<Slot> slots;
  uint64_t mask = 0;
  int bits = 4;
  int64_t count = 0;
  int64_t limit = 0;
};

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DETAIL_TAGGEDINDEX_H
