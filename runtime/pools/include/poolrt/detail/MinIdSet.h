//===- MinIdSet.h - Set of small ids with O(1) lowest member ---*- C++ -*-===//
//
// A hierarchical bitmap: level 0 has one bit per id, each higher level one
// bit per non-empty word of the level below, up to a single root word kept
// inline (so `empty` is one load). The levels live in one flat array. The
// lowest member is found by one count-trailing-zeros per level (3 levels
// below the root cover 16M ids); insert and erase touch at most one word
// per level.
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
#include <cstddef>
#include <cstdint>
#include <vector>

namespace poolrt {
namespace detail {

class MinIdSet {
public:
  MinIdSet() : MinIdSet(0) {}
  explicit MinIdSet(int32_t capacity) : cap(capacity) {
    // Word counts per level, bottom up, until one word (the root) covers
    // the level below; the levels under the root share one flat array.
    int64_t bits = capacity > 0 ? capacity : 1;
    size_t total = 0;
    do { // level 0 always exists, so contains() needs no special case
      int64_t levelWords = (bits + 63) / 64;
      offset[depth++] = uint32_t(total);
      total += size_t(levelWords);
      bits = levelWords;
    } while (bits > 64);
    words.assign(total, 0);
  }

  int32_t capacity() const { return cap; }
  bool empty() const { return root == 0; }

  bool contains(int32_t id) const {
    assert(id >= 0 && id < cap);
    return (word(0, uint64_t(id) >> 6) >> (id & 63)) & 1;
  }

  void insert(int32_t id) {
    assert(id >= 0 && id < cap);
    uint64_t i = uint64_t(id);
    for (int l = 0; l < depth; ++l) {
      uint64_t &w = word(l, i >> 6);
      bool wasEmpty = w == 0;
      w |= uint64_t(1) << (i & 63);
      if (!wasEmpty)
        return;
      i >>= 6;
    }
    root |= uint64_t(1) << i;
  }

  void erase(int32_t id) {
    assert(id >= 0 && id < cap);
    uint64_t i = uint64_t(id);
    for (int l = 0; l < depth; ++l) {
      uint64_t &w = word(l, i >> 6);
      w &= ~(uint64_t(1) << (i & 63));
      if (w != 0)
        return;
      i >>= 6;
    }
    root &= ~(uint64_t(1) << i);
  }

  /// The lowest member, or -1 when empty.
  int32_t lowest() const {
    if (root == 0)
      return -1;
    uint64_t i = uint64_t(__builtin_ctzll(root));
    for (int l = depth; l-- > 0;)
      i = (i << 6) | uint64_t(__builtin_ctzll(word(l, i)));
    return int32_t(i);
  }

  /// Remove and return the lowest member, or -1 when empty. One descent:
  /// the words on the path are the only ones the removal may empty.
  int32_t popLowest() {
    if (root == 0)
      return -1;
    uint64_t *path[kMaxDepth];
    uint64_t i = uint64_t(__builtin_ctzll(root));
    for (int l = depth; l-- > 0;) {
      path[l] = &word(l, i);
      i = (i << 6) | uint64_t(__builtin_ctzll(*path[l]));
    }
    // Clear the id's bit, then each summary bit whose word emptied. The bit
    // to clear in every word on the path is its lowest set bit.
    for (int l = 0; l < depth; ++l) {
      *path[l] &= *path[l] - 1;
      if (*path[l] != 0)
        return int32_t(i);
    }
    root &= root - 1;
    return int32_t(i);
  }

  void clear() {
    for (uint64_t &w : words)
      w = 0;
    root = 0;
  }

private:
  static constexpr int kMaxDepth = 6; // 64^6 bits: every int32 id fits
  uint64_t &word(int level, uint64_t i) { return words[offset[level] + i]; }
  uint64_t word(int level, uint64_t i) const {
    return words[offset[level] + i];
  }

  uint64_t root = 0; // one bit per word of the top level below
  int depth = 0;     // levels below the root
  uint32_t offset[kMaxDepth] = {};
  std::vector<uint64_t> words; // level 0 (one bit per id) first
  int32_t cap;
};

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DETAIL_MINIDSET_H
