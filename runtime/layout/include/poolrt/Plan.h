//===- Plan.h - Carve one allocation from a pool plan ------------*- C++ -*-===//
//
// planPools (SubPool.h) gives every class its count; this carves the counts
// into the one device allocation every region lives in:
//
//   * in a row space the planes come first, each plane_rows * width bytes,
//     plane_rows tight: the slots plus the blocks rounded up to whole slots
//     (tightPlaneRows, the reference's allocation); the PAGE class's explicit
//     bytes (an indexer riding the block table) and every other class follow
//     as regions of their own;
//   * otherwise the PAGE region first, then each STATE class's arena in
//     declaration order;
//   * every region start and the total are 256-aligned (planRegions).
//
// The row space's rows (envelope and slot) are read from what
// pool-solve-row-space solved, never re-derived here: one solve is the
// source, and the counts only choose the split.
//
// Silent failure mode: the counts are the reference's, so the carved total
// may pass the budget (region padding, blocks rounded up to whole slots);
// fitAllocation is the opt-in that gives up PAGE entries until it does not.
//
// Plain C++17, no MLIR; fallible calls return a Result, nothing throws.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_PLAN_H
#define POOLRT_PLAN_H

#include "poolrt/Status.h"
#include "poolrt/SubPool.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace poolrt {

/// What a solved row space fixes before any count is known (the
/// pool.row_space op). The carving uses `envelopeRows` and `slotRows`; the
/// rest only proves they are the solver's: a stale or edited op is refused
/// rather than carved.
struct RowSpaceRows {
  std::string pageClass, slotClass;
  int64_t envelopeRows = 0; // rows of one block
  int64_t slotRows = 0;     // rows of one slot
  std::vector<int64_t> planeWidths; // bytes per row, one per plane
  int64_t arenaRows = 0, entryRows = 0, slotAlignRows = 2;
  int64_t classEnvelopeRows = 0; // the classes' envelopes, added up
};

/// One entry class's claim on the allocation, in declaration order.
struct RegionClaim {
  std::string name;
  /// The bytes declared explicitly (not derived). In a row space, the PAGE
  /// class's explicit bytes ride the block table in a region of their own.
  std::optional<int64_t> explicitBytes;
};

/// Everything about the allocation that does not depend on the counts.
struct AllocationShape {
  std::vector<RegionClaim> classes;
  std::optional<RowSpaceRows> rowSpace;
};

/// The (blocks, slots) split of a row space's planes.
struct RowSpaceSplit {
  int64_t numBlocks = 0, numSlots = 0;
  int64_t planeRows = 0;     // rows of every plane
  int64_t slotPositions = 0; // slot positions the plane numbers (= held slots)
};

struct Carving {
  std::optional<RowSpaceSplit> rowSpace;
  std::vector<int64_t> planeOffsets; // one per plane (row space only)
  /// Per AllocationShape::classes entry: its region's offset, or nullopt
  /// where the class lives entirely in the planes.
  std::vector<std::optional<int64_t>> regionOffsets;
  int64_t total = 0; // bytes of the one allocation, 256-aligned
};

/// Which declaration an error belongs to, so a caller can point at it.
enum class PlanFault { Allocation, RowSpace };

/// Carve `plan`'s counts into one allocation of `shape`. On error, `fault`
/// (if given) says whether the row space or the allocation as a whole is at
/// fault.
Result<Carving> carveAllocation(const PoolPlan &plan,
                                const AllocationShape &shape,
                                PlanFault *fault = nullptr);

struct FittedPlan {
  PoolPlan plan;
  Carving carving;
};

/// `plan` carved; if `fit` and the carving passes `budget`, the plan with the
/// largest PAGE count whose carving does not (0 PAGE entries at worst: the
/// STATE floor is never given up).
Result<FittedPlan> carveWithinBudget(const PoolPlan &plan,
                                     const AllocationShape &shape,
                                     int64_t budget, bool fit,
                                     PlanFault *fault = nullptr);

} // namespace poolrt

#endif // POOLRT_PLAN_H
