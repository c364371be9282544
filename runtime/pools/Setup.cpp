//===- Setup.cpp - Runtime objects configured from an artifact ------------===//

#include "poolrt/Setup.h"

#include "poolrt/Servable.h"

#include <algorithm>

namespace poolrt {

Result<CacheManagerConfig> cacheManagerConfig(const SolvedLayout &layout,
                                              const CachePolicy &policy) {
  // What the runtime can serve is one rule (poolrt/Servable.h), the one the
  // compiler refuses with; past it, this only assembles the configuration.
  if (Status s = checkServable(layout); !s.ok())
    return s.error();
  const SolvedGeometry &geo = layout.geometry;
  CacheManagerConfig c;
  c.blockSize = geo.blockSize;
  c.policy = policy;
  const SolvedClass *page = layout.page();
  for (const SolvedClass *w : layout.windowClasses()) {
    const SolvedAttention &a = *w->attention;
    c.windowClasses.push_back(
        {w->name, a.pattern(), a.sharesBlocks ? 0 : w->entries, a.reserveBlocks});
  }
  c.windowMarginTokens = geo.specDepth;
  std::vector<const SolvedClass *> stateful = layout.groupClasses();
  const SolvedClass *state = stateful.empty() ? nullptr : stateful[0];
  c.numBlocks = page->entries;
  if (state) {
    c.numGroups = layout.stateGroupCount();
    const SolvedTransfer &t = *state->transfer;
    const KernelInfo *store = layout.kernelByKind("image_store");
    const KernelInfo *restore = layout.kernelByKind("image_restore");
    const KernelInfo *image = layout.kernelByKind("image_gather");
    if (t.kind == TransferKind::Fork && policy.forkCheckpointsInPageUnits &&
        !layout.rowSpace && stateful.size() == 1 && store && restore && image &&
        store->idsPerItem > 1) {
      // A fork class whose artifact stores images in PAGE units (codegen's
      // forkImageKernels): its checkpoints are the PAGE-unit store's, the
      // groups plain slots. The units per image are the kernel's.
      auto spec = PagedStateCheckpointSpec::create(
          page->entryBytes, state->entryBytes, "fork:" + state->name,
          image->itemBytes, store->idsPerItem - 1);
      if (!spec.ok())
        return spec.error();
      c.pagedCheckpoints = *spec;
    } else if (t.kind == TransferKind::Fork) {
      // The group moves as one, with the largest successor room.
      int64_t room = 0;
      for (const SolvedClass *s : stateful)
        room = std::max(room, s->transfer->tokens);
      auto tr = StateTransfer::fork(room);
      if (!tr.ok())
        return tr.error();
      c.transfer = *tr;
    } else if (t.kind == TransferKind::Copy) {
      // Page unit = a PAGE entry; image = the image_gather kernel's item
      // bytes, or the whole slot without one.
      int64_t imageBytes = image ? image->itemBytes : state->entryBytes;
      // An artifact's units per image are the manifest's (the compiler
      // solved them from the image runs its image_gather copies); create()
      // refuses a count that image does not span. A bare report has no
      // image kernel and prices the whole slot, so it derives its own.
      std::optional<int64_t> units;
      if (image && layout.rowSpace)
        units = layout.rowSpace->unitsPerCheckpoint;
      auto spec = PagedStateCheckpointSpec::create(
          page->entryBytes, state->entryBytes, t.layoutId, imageBytes, units);
      if (!spec.ok())
        return spec.error();
      c.pagedCheckpoints = *spec; // the groups are plain slots
    }
  }
  if (const auto &rs = layout.rowSpace) {
    PoolBoundaryGeometry g;
    g.envelopeRows = rs->envelopeRows;
    g.slotRows = rs->slotRows;
    g.planeRows = *rs->planeRows;
    g.slotPositions = *rs->slotPositions;
    g.maxBlocks = c.numBlocks; // the rider regions hold this many
    c.boundary = g;
  }
  return c;
}

Result<CacheManagerConfig> cacheManagerConfig(const Artifact &artifact,
                                              const CachePolicy &policy) {
  auto layout = readSolvedLayout(artifact);
  if (!layout.ok())
    return layout.error();
  return cacheManagerConfig(*layout, policy);
}

} // namespace poolrt
