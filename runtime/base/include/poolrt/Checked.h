//===- Checked.h - Overflow-checked 64-bit arithmetic -----------*- C++ -*-===//
//
// Every byte count in a layout is a product of declared numbers (layers x
// shape x itemsize, entries x entry bytes, ...). A silent wrap would size a
// pool from garbage, so all of it goes through these helpers, which report
// overflow instead of wrapping.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_CHECKED_H
#define POOLRT_CHECKED_H

#include "poolrt/Status.h"

#include <cstdint>
#include <string>

namespace poolrt {

/// The largest block (and hash block) size a model may declare: 2^20
/// tokens. Block ids are int32, so tokens = blocks x block_size stays below
/// 2^51 and every token count fits 64 bits with room to add.
constexpr int64_t kMaxBlockSize = int64_t(1) << 20;

inline bool mulOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}
inline bool addOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_add_overflow(a, b, &out);
}
inline bool subOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_sub_overflow(a, b, &out);
}

inline Result<int64_t> checkedMul(int64_t a, int64_t b, const char *what) {
  int64_t r;
  if (mulOverflows(a, b, r))
    return Error::invalid(std::string(what) + ": " + std::to_string(a) +
                          " * " + std::to_string(b) +
                          " overflows 64-bit arithmetic");
  return r;
}

inline Result<int64_t> checkedAdd(int64_t a, int64_t b, const char *what) {
  int64_t r;
  if (addOverflows(a, b, r))
    return Error::invalid(std::string(what) + ": " + std::to_string(a) +
                          " + " + std::to_string(b) +
                          " overflows 64-bit arithmetic");
  return r;
}

/// Round `n` (>= 0) up to a multiple of `align` (> 0); fails on overflow.
inline Result<int64_t> checkedAlignUp(int64_t n, int64_t align,
                                      const char *what) {
  int64_t bumped;
  if (addOverflows(n, align - 1, bumped))
    return Error::invalid(std::string(what) + ": aligning " +
                          std::to_string(n) + " overflows 64-bit arithmetic");
  return bumped / align * align;
}

/// ceil(a / b) for a >= 0 and b > 0 where a + b - 1 cannot overflow (the
/// token, block and byte counts a layout has already bounded). The one
/// ceiling division: nothing writes (a + b - 1) / b by hand.
constexpr int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// `a` rounded up to a multiple of `b`, under ceilDiv's preconditions.
constexpr int64_t alignUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

/// Floor division for a possibly negative numerator (Python's //).
inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

} // namespace poolrt

#endif // POOLRT_CHECKED_H
