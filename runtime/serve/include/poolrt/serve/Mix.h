//===- Mix.h - The one 64-bit mixer the serving loop uses --------*- C++ -*-===//
//
// SplitMix64's finalizer: synthetic trace tokens, the reference model's
// arithmetic and the seeded draft acceptance all draw from it, so a trace,
// a model run and an acceptance sequence are reproducible everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_MIX_H
#define POOLRT_SERVE_MIX_H

#include <cstdint>

namespace poolrt {
namespace serve {

inline uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace serve
} // namespace poolrt

#endif
