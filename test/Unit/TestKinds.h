//===- TestKinds.h - Checking which kind of error a refusal is ------------===//
//
// A rejection test that only checks !ok() passes for the wrong refusal too
// (an internal error where a bad argument was meant). EXPECT_ERROR_KIND
// names the kind it wanted and the one it got ("ok" when nothing failed).
//
//===----------------------------------------------------------------------===//
#ifndef POOLC_TEST_UNIT_TESTKINDS_H
#define POOLC_TEST_UNIT_TESTKINDS_H

#include "poolrt/Status.h"

#include <string>

namespace poolc_test {
template <typename R> std::string kindOf(const R &r) {
  return r.ok() ? std::string("ok") : poolrt::errorKindName(r.error().kind);
}
} // namespace poolc_test

#define EXPECT_ERROR_KIND(expr, kind)                                          \
  EXPECT_EQ(::poolc_test::kindOf(expr),                                        \
            std::string(::poolrt::errorKindName(::poolrt::ErrorKind::kind)))

#endif
