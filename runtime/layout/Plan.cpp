//===- Plan.cpp - Carve one allocation from a pool plan -------------------===//

#include "poolrt/Plan.h"

#include "poolrt/Checked.h"
#include "poolrt/RowSpace.h"
#include "poolrt/StateArena.h"

namespace poolrt {

namespace {

Error fail(PlanFault *fault, PlanFault where, Error e) {
  if (fault)
    *fault = where;
  return e;
}

/// `plan` with `pagedEntries` PAGE entries, carved.
Result<FittedPlan> carvedWith(const PoolPlan &plan, int64_t pagedEntries,
                              const AllocationShape &shape, PlanFault *fault) {
  auto counts = plan.withPagedEntries(pagedEntries);
  if (!counts)
    return fail(fault, PlanFault::Allocation, counts.error());
  auto carved = carveAllocation(counts.value(), shape, fault);
  if (!carved)
    return carved.error();
  return FittedPlan{counts.take(), carved.take()};
}

} // namespace

Result<Carving> carveAllocation(const PoolPlan &plan,
                                const AllocationShape &shape,
                                PlanFault *fault) {
  Carving out;
  std::vector<int64_t> sizes;
  const RowSpaceRows *rs = shape.rowSpace ? &*shape.rowSpace : nullptr;
  if (rs) {
    auto slotRows = slotRowsFor(rs->arenaRows, rs->entryRows, rs->slotAlignRows);
    if (!slotRows || *slotRows != rs->slotRows ||
        rs->classEnvelopeRows != rs->envelopeRows || rs->slotRows < 1)
      return fail(fault, PlanFault::RowSpace,
                  Error::invalid("disagrees with its own geometry: re-run "
                                 "pool-solve-row-space"));
    const PlannedClass *pc = plan.find(rs->pageClass);
    const PlannedClass *sc = plan.find(rs->slotClass);
    if (!pc || !sc)
      return fail(fault, PlanFault::RowSpace,
                  Error::invalid("names classes the model does not plan"));
    auto rows =
        tightPlaneRows(pc->entries, rs->envelopeRows, sc->entries, rs->slotRows);
    if (!rows)
      return fail(fault, PlanFault::RowSpace, rows.error());
    out.rowSpace = RowSpaceSplit{pc->entries, sc->entries, *rows,
                                 *rows / rs->slotRows};
    for (int64_t w : rs->planeWidths) {
      auto bytes = checkedMul(*rows, w, "plane bytes");
      if (!bytes)
        return fail(fault, PlanFault::RowSpace, bytes.error());
      sizes.push_back(*bytes);
    }
  }
  // Regions after the planes: the PAGE class first, then the STATE classes,
  // each in declaration order. `owner[i]` is the claim of region i.
  std::vector<size_t> owner;
  out.regionOffsets.assign(shape.classes.size(), std::nullopt);
  for (bool pagePass : {true, false})
    for (size_t i = 0; i < shape.classes.size(); ++i) {
      const RegionClaim &claim = shape.classes[i];
      const PlannedClass *pc = plan.find(claim.name);
      if (!pc)
        return fail(fault, PlanFault::Allocation,
                    Error{ErrorKind::Internal,
                          "entry class '" + claim.name + "' is not planned"});
      if ((pc->pool == Pool::Page) != pagePass || pc->sharesBlocks)
        continue; // a shared window class lives in the full class's region
      int64_t bytes = pc->reservedBytes;
      if (rs && claim.name == rs->slotClass)
        continue; // in the planes
      if (rs && claim.name == rs->pageClass) {
        if (!claim.explicitBytes)
          continue; // entirely in the planes
        bytes = pc->entries * *claim.explicitBytes; // <= reserved bytes
      }
      sizes.push_back(bytes);
      owner.push_back(i);
    }
  auto regions = planRegions(sizes);
  if (!regions)
    return fail(fault, PlanFault::Allocation, regions.error());
  size_t planes = sizes.size() - owner.size();
  out.planeOffsets.assign(regions->offsets.begin(),
                          regions->offsets.begin() + planes);
  for (size_t r = 0; r < owner.size(); ++r)
    out.regionOffsets[owner[r]] = regions->offsets[planes + r];
  out.total = regions->total;
  std::optional<int64_t> fullOffset;
  for (size_t i = 0; i < shape.classes.size(); ++i) {
    const PlannedClass *pc = plan.find(shape.classes[i].name);
    if (pc && pc->pool == Pool::Page && !pc->isWindow())
      fullOffset = out.regionOffsets[i];
  }
  for (size_t i = 0; i < shape.classes.size(); ++i) {
    const PlannedClass *pc = plan.find(shape.classes[i].name);
    if (pc && pc->sharesBlocks)
      out.regionOffsets[i] = fullOffset;
  }
  return out;
}

Result<FittedPlan> carveWithinBudget(const PoolPlan &plan,
                                     const AllocationShape &shape,
                                     int64_t budget, bool fit,
                                     PlanFault *fault) {
  auto carved = carveAllocation(plan, shape, fault);
  if (!carved)
    return carved.error();
  if (!fit || carved->total <= budget || !plan.pagedClass())
    return FittedPlan{plan, carved.take()};
  // The carving grows with the PAGE count: search the largest that fits.
  int64_t lo = 0, hi = plan.pagedEntries();
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    auto trial = carvedWith(plan, mid, shape, fault);
    if (!trial)
      return trial.error();
    if (trial->carving.total <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return carvedWith(plan, lo, shape, fault);
}

} // namespace poolrt
