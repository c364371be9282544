//===- CheckpointStore.h - Where a model's checkpoints live -------*- C++ -*-===//
//
// The one rule for which models keep fork checkpoints as images in PAGE
// units (specs/checkpoint-placement.md): codegen emits image_store /
// image_restore for them (forkImageKernels), the text report says so, and
// the runtime follows the kernels the artifact carries.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_CHECKPOINTSTORE_H
#define POOLRT_CHECKPOINTSTORE_H

#include "poolrt/TransferKind.h"

#include <cstdint>

namespace poolrt {

/// A flat model (no row space, no window class) whose one STATE class
/// forks one entry per request: its image is that entry's carried ranges,
/// cut into whole PAGE entries. Drafts (entries_per_req > 1) and several
/// STATE classes keep a state group per checkpoint.
inline bool forkImagesInPageUnits(int64_t stateClasses, TransferKind kind,
                                  int64_t entriesPerReq, bool rowSpace,
                                  bool windowClasses) {
  return !rowSpace && !windowClasses && stateClasses == 1 &&
         kind == TransferKind::Fork && entriesPerReq == 1;
}

} // namespace poolrt

#endif
