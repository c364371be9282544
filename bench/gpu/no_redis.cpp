//===- no_redis.cpp - The Redis backend absent (device builds) ------------===//
//
// The GPU machine has no hiredis: bench/gpu/run.sh links this instead of
// runtime/tier/RedisTier.cpp, so `--tier redis://` is refused there with a
// message, and every other backend is the one that serves here.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Tier.h"

namespace poolrt {

Result<std::unique_ptr<TierBackend>> openRedisTier(const RedisTierOptions &o) {
  return Error::invalid("redis tier '" + o.url.substr(0, 8) +
                        "...': this build has no hiredis (bench/gpu/no_redis.cpp)");
}

} // namespace poolrt
