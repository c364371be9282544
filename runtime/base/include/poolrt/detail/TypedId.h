//===- TypedId.h - Strongly typed small ids ---------------------*- C++ -*-===//
//
// One template for the runtime's ids (BlockId, GroupId, CheckpointId,
// SlotIndex): an integer that only compares with ids of its own kind, so a
// block id cannot be passed where a group id is expected. Each kind is an
// alias over a distinct tag type:
//
//   using BlockId = detail::TypedId<struct BlockIdTag, int32_t>;
//
// Construction from an integer is explicit; a default-constructed id is the
// invalid sentinel, value -1 (the reference's "none"). `value` stays a
// public member: the pools index their flat arrays with it.
//
// Silent failure mode: `valid()` is only `value >= 0`. An id past the end of
// its table is "valid" here; the owning pool range-checks it.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DETAIL_TYPEDID_H
#define POOLRT_DETAIL_TYPEDID_H

#include <type_traits>

namespace poolrt {
namespace detail {

template <typename Tag, typename Rep> struct TypedId {
  static_assert(std::is_integral_v<Rep> && std::is_signed_v<Rep>,
                "the invalid sentinel is -1");
  Rep value = Rep(-1);

  constexpr TypedId() = default;
  constexpr explicit TypedId(Rep v) : value(v) {}
  constexpr bool valid() const { return value >= 0; }

  friend constexpr bool operator==(TypedId a, TypedId b) {
    return a.value == b.value;
  }
  friend constexpr bool operator!=(TypedId a, TypedId b) {
    return a.value != b.value;
  }
  friend constexpr bool operator<(TypedId a, TypedId b) {
    return a.value < b.value;
  }
};

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DETAIL_TYPEDID_H
