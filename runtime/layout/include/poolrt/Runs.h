//===- Runs.h - (start, count) run lists ------------------------*- C++ -*-===//
#ifndef POOLRT_RUNS_H
#define POOLRT_RUNS_H

#include "poolrt/Status.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace poolrt {

using Run = std::pair<int64_t, int64_t>; // (start, count)

/// Merge runs that abut. Input must ascend without overlap: a run starting
/// before the end of the previous merged run is an error (a checkpoint image
/// built from overlapping runs would copy bytes twice into different image
/// offsets), as is a negative start or count. Zero-length runs merge in.
Result<std::vector<Run>> mergeAbutting(const std::vector<Run> &runs);

} // namespace poolrt

#endif // POOLRT_RUNS_H
