//===- Ladder.h - The checkpoint ladder of a chosen prompt, as run ----*- C++ -*-===//
//
// Where a stateful model keeps its checkpoints depends on rules spread over
// admission, chunking and decode (spec 8.6): grid rungs every `interval`
// tokens up to the last one that leaves the successor its room, a demand
// rung where a hit was refused for want of a checkpoint (and the prefill
// chunk cut to end on it), and the decode spacing rule. Rather than restate
// them, checkpointLadder runs them: a fresh CacheManager of the artifact's
// counts serves three requests one after another, each alone in the batch,
// with the scheduler's per-pass calls (Engine::schedule / execute at
// --num-spec 0): completePreviousStateBatch, admission, allocate,
// chunkedPrefillSize + finalizePrefillChunk, takeStateMaintenanceOps,
// hashBlocks, then decode through appendSlots + hashDecodeBlocks, and
// deallocate when the request finishes.
//
//   first      the chosen prompt (P tokens) and its output (D tokens): the
//              grid rungs and the decode spacing;
//   follow-up  the same P tokens and a tail of T new ones: the hit stops at
//              the first request's last checkpoint, the demand asks for the
//              rest, and the chunk that reaches it is cut there;
//   repeat     the same P tokens and another tail: it hits the demand rung.
//
// No kernel runs (takeStateMaintenanceOps' copies are dropped): what is
// shown is the bookkeeping, which is what decides where checkpoints are.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_LADDER_H
#define POOLRT_LADDER_H

#include "poolrt/CacheManager.h"
#include "poolrt/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace poolrt {

struct LadderQuery {
  int64_t promptTokens = 0;      // P: the chosen prompt length (>= 1)
  int64_t outputTokens = 1;      // D: tokens each request generates (>= 1)
  int64_t tailTokens = 0;        // T: the follow-up's new tokens (>= 0)
  int64_t maxBatchedTokens = 2048; // the scheduler's token budget per pass
};

/// One prefill forward of a request: tokens [start, end).
struct LadderChunk {
  int64_t start = 0, end = 0;
  bool cutForDemand = false; // finalizePrefillChunk ended it on the demand
  bool checkpoint = false;   // a class kept the checkpoint at `end`
};

struct LadderRequest {
  std::string role;      // "first", "follow-up" or "repeat"
  int64_t promptTokens = 0;
  /// Admission: the hit, what the index held before the checkpoint gate,
  /// the demand recorded (0: none) and the last grid rung (0: none).
  int64_t hitTokens = 0, indexedTokens = 0, demandPos = 0, limitTokens = 0;
  std::string reason;    // Admission::reason ("" or "checkpoint missing")
  std::vector<LadderChunk> prefill;
  /// Positions where a decode step kept a checkpoint (the spacing rule).
  std::vector<int64_t> decodeCheckpoints;
  int64_t outputTokens = 0; // generated before it finished
  /// Checkpoint fates while the request ran (CacheFunnel::fates): landed,
  /// refused for want of a free group, and older ones spent to make room.
  int64_t kept = 0, dropped = 0, evicted = 0;

  /// The positions where a prefill chunk kept a checkpoint (its end).
  std::vector<int64_t> checkpoints() const {
    std::vector<int64_t> v;
    for (const LadderChunk &c : prefill)
      if (c.checkpoint)
        v.push_back(c.end);
    return v;
  }
};

struct Ladder {
  int64_t interval = 0;  // after snapping to the block size (0: ladder off)
  int64_t blockSize = 0;
  std::string transfer;  // "fork", "copy (PAGE units)", "none" or "stateless"
  int64_t groups = 0;    // state groups (the checkpoints' home under fork)
  std::string note;      // the snap warning, or why there is no ladder
  std::vector<LadderRequest> requests;
};

/// Runs the three requests on a cache manager built from `config` (the
/// artifact's counts, the caller's policy). InvalidArgument for a query
/// out of range; State when the pool cannot hold a request alone (it
/// names the request and what ran out) or a call of the scheduler's
/// sequence fails.
Result<Ladder> checkpointLadder(const CacheManagerConfig &config,
                                const LadderQuery &query);

} // namespace poolrt

#endif // POOLRT_LADDER_H
