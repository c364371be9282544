//===- Setup.h - Runtime objects configured from an artifact -----*- C++ -*-===//
//
// One source of truth: every count the pools need (block size, blocks,
// state groups, the state transfer, the PAGE-unit checkpoint image, the
// shared row space) is read from the artifact's manifest, as the compiler
// solved it. The caller chooses only run-time policy.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SETUP_H
#define POOLRT_SETUP_H

#include "poolrt/Artifact.h"
#include "poolrt/CacheManager.h"
#include "poolrt/SolvedLayout.h"

namespace poolrt {

/// The cache manager configuration an artifact implies:
///   * block size from the geometry (hash block = block: decode-context
///     parallelism 1; anything else is refused);
///   * blocks from the PAGE class's entries, groups from the STATE class's
///     request_groups (both as the compiler solved them);
///   * the STATE class's transfer: none, fork(tokens), or copy, which
///     becomes PAGE-unit checkpoints (page unit = a PAGE entry, image = the
///     image_gather kernel's item bytes, or the whole slot without one);
///   * the boundary geometry when the model has a row space.
/// A layout the runtime cannot serve is refused first, by the rule the
/// compiler refuses with (checkServable, poolrt/Servable.h). Errors name the
/// class or manifest key that is missing or inconsistent.
Result<CacheManagerConfig> cacheManagerConfig(const SolvedLayout &layout,
                                              const CachePolicy &policy = {});
/// The same, from the artifact's manifest (readSolvedLayout).
Result<CacheManagerConfig> cacheManagerConfig(const Artifact &artifact,
                                              const CachePolicy &policy = {});

} // namespace poolrt

#endif
