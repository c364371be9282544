//===- MinIdSet.h - Set of small ids with O(1) lowest-member -------*- C++ -*-===//
//
// A hierarchical bitmap: level 0 has one bit per id, each higher level one
// bit per non-empty word of the level below, up to a single word. The
// lowest member is found by one count-trailing-zeros per level (4 levels
// cover 16M ids), insert and erase touch at most one word per level.
//
// It replaces the reference's min-heap with stale entries: the heap can
// only promise "lowest id among the entries that are still valid", which
// needs a validity test per pop and a periodic rebuild; a bitmap holds
// exactly the members, so there is nothing stale to skip.
//
// Silent failure mode: ids at or above the capacity given at construction.
// Debug builds assert; release builds would write past a word.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DETAIL_MINIDSET_H
#define POOLRT_DETAIL_MINIDSET_H

#include <cassert>
#include <cstdint>
#include <vector>

namespace poolrt {
namespace detail {

class MinIdSet {
public:
  MinIdSet() : MinIdSet(0) {}
  explicit MinIdSet(int32_t capacity) : cap(capacity) {
    int64_t bits = capacity > 0 ? capacity : 1;
    do {
      int64_t words = (bits + 63) / 64;
      levels.emplace_back(size_t(words), 0);
      bits = words;
    } while (bits > 1);
  }

  int32_t capacity() const { return cap; }
  bool empty() const { return levels.back()[0] == 0; }

  bool contains(int32_t id) const {
    assert(id >= 0 && id < cap);
    return (levels[0][size_t(id) >> 6] >> (id & 63)) & 1;
  }

  void insert(int32_t id) {
    assert(id >= 0 && id < cap);
    uint64_t i = uint64_t(id);
    for (auto &level : levels) {
      uint64_t &w = level[i >> 6];
      bool wasEmpty = w == 0;
      w |= uint64_t(1) << (i & 63);
      if (!wasEmpty)
        return;
      i >>= 6;
    }
  }

  void erase(int32_t id) {
    assert(id >= 0 && id < cap);
    uint64_t i = uint64_t(id);
    for (auto &level : levels) {
      uint64_t &w = level[i >> 6];
      w &= ~(uint64_t(1) << (i & 63));
      if (w != 0)
        return;
      i >>= 6;
    }
  }

  /// The lowest member, or -1 when empty.
  int32_t lowest() const {
    if (empty())
      return -1;
    uint64_t i = 0;
    for (size_t l = levels.size(); l-- > 0;)
      i = (i << 6) | uint64_t(__builtin_ctzll(levels[l][i]));
    return int32_t(i);
  }

  void clear() {
    for (auto &level : levels)
      for (uint64_t &w : level)
        w = 0;
  }

private:
  std::vector<std::vector<uint64_t>> levels; // levels[0]: one bit per id
  int32_t cap;
};

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DETAIL_MINIDSET_H
