//===- LinearProbe.h - What the pools' hash tables share --------*- C++ -*-===//
//
// HashIndex and TaggedIndex are both linear-probing tables of slots with an
// `int32_t value` member, empty when value == -1, that delete by backward
// shift: no tombstones, so a long-running pool does not degrade with churn.
// They differ in what a slot keeps to find its home (the key, or a tag of
// it); the deletion is the same and lives here once.
//
// Silent failure mode: `homeOf` must return the slot a member was inserted
// at first (its home), the same function the table probes from. Any other
// function moves members before their home, and later lookups for them stop
// at a hole and miss.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DETAIL_LINEARPROBE_H
#define POOLRT_DETAIL_LINEARPROBE_H

#include <cstdint>
#include <vector>

namespace poolrt {
namespace detail {

/// Empty occupied slot `i` of a table of `mask + 1` slots, pulling later
/// members of its probe run into the hole unless that would move one before
/// its home slot.
template <typename Slot, typename HomeOf>
inline void backwardShiftErase(std::vector<Slot> &slots, uint64_t mask,
                               uint64_t i, HomeOf homeOf) {
  uint64_t hole = i;
  for (uint64_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    const Slot &s = slots[j];
    if (s.value == -1)
      break;
    uint64_t h = homeOf(s);
    // Is h cyclically in (hole, j]? Then slot j stays.
    bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (!stays) {
      slots[hole] = s;
      hole = j;
    }
  }
  slots[hole].value = -1;
}

/// Empty every slot.
template <typename Slot> inline void clearSlots(std::vector<Slot> &slots) {
  for (Slot &s : slots)
    s.value = -1;
}

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DETAIL_LINEARPROBE_H
