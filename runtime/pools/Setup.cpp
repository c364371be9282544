//===- Setup.cpp - Runtime objects configured from an artifact ------------===//

#include "poolrt/Setup.h"

#include "poolrt/Kernels.h"

#include <algorithm>

namespace poolrt {

namespace {

Error bad(const std::string &what) {
  return Error::invalid("artifact manifest: " + what);
}

} // namespace

Result<CacheManagerConfig> cacheManagerConfig(const SolvedLayout &layout,
                                              const CachePolicy &policy) {
  const SolvedGeometry &geo = layout.geometry;
  if (geo.blockSize < 1)
    return bad("layout.geometry.block_size is not positive");
  if (geo.hashBlockSize != geo.blockSize)
    return bad("layout.geometry.hash_block_size " +
               std::to_string(geo.hashBlockSize) + " differs from block_size " +
               std::to_string(geo.blockSize) +
               " (decode-context parallelism > 1 is not supported)");

  CacheManagerConfig c;
  c.blockSize = geo.blockSize;
  c.policy = policy;
  const SolvedClass *page = layout.page();
  for (const SolvedClass &cls : layout.classes)
    if (cls.isPage() && &cls != page && !cls.isWindow())
      return bad("more than one PAGE class ('" + cls.name + "')");
  if (!page)
    return bad("no PAGE class");
  for (const SolvedClass *w : layout.windowClasses()) {
    const SolvedAttention &a = *w->attention;
    if (a.sharesBlocks && (w->entries != page->entries ||
                           w->entryBytes != page->entryBytes ||
                           w->regionOffset != page->regionOffset))
      return bad("window class '" + w->name + "' shares the blocks of '" +
                 page->name + "' but not their count, size or region");
    if (!a.sharesBlocks && w->entries < a.reserveBlocks)
      return bad("window class '" + w->name + "' has " + std::to_string(w->entries) +
                 " blocks, fewer than one request's reserve of " +
                 std::to_string(a.reserveBlocks));
    c.windowClasses.push_back(
        {w->name, a.pattern(), a.sharesBlocks ? 0 : w->entries, a.reserveBlocks});
  }
  c.windowMarginTokens = geo.specDepth;
  // A request's state group spans every STATE class with a transfer
  // (specs/state-classes.md): several classes must all fork, outside a row
  // space, and then move as one group with the largest successor room.
  std::vector<const SolvedClass *> stateful = layout.groupClasses();
  if (stateful.size() > 1) {
    if (layout.rowSpace)
      return bad("more than one STATE class with a transfer ('" +
                 stateful[1]->name + "') in a row-space model");
    for (const SolvedClass *s : stateful)
      if (s->transfer->kind != TransferKind::Fork)
        return bad("STATE class '" + s->name + "' has a " +
                   std::string(s->transfer->kind == TransferKind::Copy ? "copy"
                                                                       : "none") +
                   " transfer beside another STATE class with a transfer "
                   "(several classes share a request's group only as forks)");
  }
  const SolvedClass *state = stateful.empty() ? nullptr : stateful[0];
  c.numBlocks = page->entries;

  // An artifact's layout carries its kernels: a transfer the runtime
  // performs with a kernel needs that kernel (a bare report has none).
  bool artifact = !layout.kernels.empty();
  if (state) {
    c.numGroups = layout.stateGroupCount();
    const SolvedTransfer &t = *state->transfer;
    if (artifact && t.kind == TransferKind::Copy &&
        (!layout.kernelByKind("image_store") || !layout.kernelByKind("image_restore")))
      return bad("STATE class '" + state->name + "' has a copy transfer, but the "
                 "artifact has no image_store / image_restore kernel");
    if (artifact && t.kind == TransferKind::Fork && c.numGroups > 0)
      for (const SolvedClass *s : stateful)
        if (!layout.groupCopyKernelOf(s->name))
          return bad("STATE class '" + s->name + "' forks state groups, but the "
                     "artifact has no group_copy kernel for it (pool_group_copy_" +
                     s->name + ")");
    if (t.kind == TransferKind::Fork) {
      int64_t room = 0;
      for (const SolvedClass *s : stateful)
        room = std::max(room, s->transfer->tokens);
      auto tr = StateTransfer::fork(room);
      if (!tr.ok())
        return tr.error();
      c.transfer = *tr;
    } else if (t.kind == TransferKind::Copy) {
      const KernelInfo *image = layout.kernelByKind("image_gather");
      int64_t imageBytes = image ? image->itemBytes : state->entryBytes;
      auto spec = PagedStateCheckpointSpec::create(
          page->entryBytes, state->entryBytes, t.layoutId, imageBytes);
      if (!spec.ok())
        return spec.error();
      c.pagedCheckpoints = *spec; // the groups are plain slots
    }
  }

  if (const auto &rs = layout.rowSpace) {
    if (state && state->entriesPerReq > 1)
      return bad("a row-space STATE class with more than one slot per request "
                 "is not supported");
    if (!rs->planeRows || !rs->slotPositions)
      return bad("row_space: plane_rows or slot_positions missing (the "
                 "layout is not planned)");
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
