//===- CacheManagerDetail.h - Helpers of CacheManager's files ---*- C++ -*-===//
//
// Helpers shared by the translation units of CacheManager
// (CacheManager.cpp, WindowClasses.cpp, BoundaryMove.cpp). Private to
// PoolRuntime: not installed, not part of the API.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_POOLS_CACHEMANAGERDETAIL_H
#define POOLRT_POOLS_CACHEMANAGERDETAIL_H

#include "poolrt/CacheManager.h"

#include <cstdint>
#include <string>

namespace poolrt {
namespace cachedetail {

/// The State error of an operation `op` on a request that is not
/// allocated (never, or already deallocated): one wording everywhere.
inline Error notAllocated(const char *op, const Request &r) {
  return Error{ErrorKind::State,
               std::string(op) + ": request " + std::to_string(r.id) +
                   " is not allocated (never allocated, or already "
                   "deallocated)"};
}

/// Ensure r.printCache covers `n` (<= hashed) blocks of `blockSize` tokens;
/// computed once per block, like r.hashCache.
void ensureTokenPrints(const Request &r, int64_t n, int64_t blockSize);

} // namespace cachedetail
} // namespace poolrt

#endif // POOLRT_POOLS_CACHEMANAGERDETAIL_H
