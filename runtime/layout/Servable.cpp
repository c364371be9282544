//===- Servable.cpp - What the runtime can serve, written once ------------===//

#include "poolrt/Servable.h"

#include "poolrt/SolvedLayout.h"

#include <limits>

namespace poolrt {

namespace {

ServeRefusal at(const ServeShapeClass &c, std::string message,
                bool atTransfer = false) {
  ServeRefusal r;
  r.subject = c.name;
  r.atTransfer = atTransfer;
  r.message = std::move(message);
  return r;
}

/// Several STATE classes with a transfer share a request's group and are
/// checkpointed together (specs/state-classes.md): only as forks, and not
/// in a row space, whose slot is one class moved by the boundary.
std::optional<ServeRefusal> checkSharedGroup(const ServeShape &s) {
  const ServeShapeClass *first = nullptr;
  for (const ServeShapeClass &c : s.classes) {
    if (c.page || !c.transfer)
      continue;
    if (!first) {
      first = &c;
      continue;
    }
    TransferKind ka = *first->transfer, kb = *c.transfer;
    if (ka == TransferKind::Fork && kb == TransferKind::Fork && !s.rowSpace)
      continue;
    std::string m = "STATE class '" + c.name + "' declares a " +
                    transferKindName(kb) + " transfer, and '" + first->name +
                    "' a " + transferKindName(ka) + " one: ";
    if (s.rowSpace)
      m += "a row-space model resumes one STATE class per request (its "
           "slot); give the other classes no transfer, or merge them";
    else
      m += "several STATE classes share a request's state group only when "
           "every one forks (a copy image and a fork group, or a class that "
           "cannot be checkpointed, do not move together); give the other "
           "classes no transfer, or make them forks";
    ServeRefusal r = at(c, m, /*atTransfer=*/true);
    r.noteClass = first->name;
    r.noteText = "the first STATE class with a transfer";
    return r;
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> hashBlockSizeRefusal(int64_t blockSize,
                                                int64_t hashBlockSize) {
  if (hashBlockSize == blockSize)
    return std::nullopt;
  return "must equal block_size " + std::to_string(blockSize) +
         " (decode-context parallelism > 1 is not supported)";
}

std::optional<std::string> windowReserveRefusal(const AttentionPattern &pattern,
                                                int64_t reserveBlocks,
                                                int64_t margin, int64_t blockSize) {
  if (!pattern.isWindow() || pattern.tokens < 1)
    return std::string("needs a sliding or chunked pattern of >= 1 token");
  int64_t ring = pattern.ringBlocks(margin, blockSize);
  if (reserveBlocks <= ring)
    return "a reserve of " + std::to_string(reserveBlocks) +
           " blocks per request leaves no room past its ring of " +
           std::to_string(ring) + " blocks";
  return std::nullopt;
}

std::optional<ServeRefusal> checkServableShape(const ServeShape &s) {
  const ServeShapeClass *full = nullptr, *window = nullptr, *transfer = nullptr;
  bool anyPage = false;
  for (const ServeShapeClass &c : s.classes) {
    anyPage |= c.page;
    if (c.page && c.window && !window)
      window = &c;
    if (!c.page && c.transfer && !transfer)
      transfer = &c;
    if (c.page && !c.window) {
      if (full)
        return at(c, "more than one full-attention PAGE class ('" + full->name +
                         "' and '" + c.name + "'): the runtime keeps one block "
                         "pool for a request's KV");
      full = &c;
    }
  }
  if (!anyPage) {
    ServeRefusal r;
    r.message = "model '" + s.model +
                "' declares no PAGE entry class: an artifact needs one, since the "
                "runtime keeps every request's KV and its prefix hashes in PAGE "
                "blocks (a report can still be made: --emit=report)";
    return r;
  }
  if (auto r = checkSharedGroup(s))
    return r;
  for (const ServeShapeClass &c : s.classes) {
    if (c.page || !c.transfer)
      continue;
    if (!s.rowSpace && *c.transfer == TransferKind::Copy)
      return at(c,
                "STATE class '" + c.name +
                    "' has a copy transfer: its checkpoint image is copied into "
                    "PAGE units by kernels made from a row space's image runs, and "
                    "this model has no row space (planes and layers); use a fork "
                    "transfer, or declare the state in a row space",
                true);
    if (s.rowSpace && *c.transfer == TransferKind::Fork && c.slot)
      return at(c,
                "STATE class '" + c.name +
                    "' is the row space's slot and has a fork transfer: a slot's "
                    "checkpoint is an image copied into PAGE units (kind: copy), or "
                    "none; the runtime has no fork of a row-space slot",
                true);
  }
  if (s.rowSpace)
    for (const ServeShapeClass &c : s.classes)
      if (!c.page && c.slot && c.entriesPerReq > 1)
        return at(c, "STATE class '" + c.name +
                         "' is the row space's slot and asks for " +
                         std::to_string(c.entriesPerReq) +
                         " entries per request: the runtime gives a row-space "
                         "request one slot (its state holds speculation in the "
                         "ring, not in more slots)");
  if (window && (transfer || s.rowSpace))
    return at(*window,
              "window class '" + window->name +
                  "' (sliding or chunked attention) runs beside a full PAGE "
                  "class only in a stateless model without a row space: this "
                  "model has " +
                  (transfer ? "STATE class '" + transfer->name + "' with a transfer"
                            : std::string("a row space")));
  return std::nullopt;
}

ServeShape serveShapeOf(const SolvedLayout &layout) {
  ServeShape s;
  s.model = layout.model;
  s.rowSpace = layout.rowSpace.has_value();
  for (const SolvedClass &c : layout.classes) {
    ServeShapeClass sc;
    sc.name = c.name;
    sc.page = c.isPage();
    sc.window = c.isWindow();
    if (c.transfer && !c.isPage())
      sc.transfer = c.transfer->kind;
    sc.slot = layout.rowSpace && layout.rowSpace->slotClass == c.name;
    sc.entriesPerReq = c.entriesPerReq;
    s.classes.push_back(std::move(sc));
  }
  return s;
}

namespace {

Error bad(const std::string &what) {
  return Error::invalid("artifact manifest: " + what);
}

Status checkWindows(const SolvedLayout &layout, const SolvedClass &page) {
  const SolvedGeometry &geo = layout.geometry;
  if (!layout.windowClasses().empty() && geo.specDepth < 0)
    return bad("layout.geometry.spec_depth " + std::to_string(geo.specDepth) +
               " is negative");
  for (const SolvedClass *w : layout.windowClasses()) {
    const SolvedAttention &a = *w->attention;
    if (a.sharesBlocks && (w->entries != page.entries ||
                           w->entryBytes != page.entryBytes ||
                           w->regionOffset != page.regionOffset))
      return bad("window class '" + w->name + "' shares the blocks of '" +
                 page.name + "' but not their count, size or region");
    if (!a.sharesBlocks && w->entries < a.reserveBlocks)
      return bad("window class '" + w->name + "' has " + std::to_string(w->entries) +
                 " blocks, fewer than one request's reserve of " +
                 std::to_string(a.reserveBlocks));
    if (auto why = windowReserveRefusal(a.pattern(), a.reserveBlocks,
                                        geo.specDepth, geo.blockSize))
      return bad("window class '" + w->name + "': " + *why);
  }
  return Status::success();
}

/// The group classes' transfers: each fork has room, a copy's image fits
/// its slot and names its layout, and an artifact carries the kernels.
Status checkTransfers(const SolvedLayout &layout, const SolvedClass &page) {
  std::vector<const SolvedClass *> stateful = layout.groupClasses();
  if (stateful.empty())
    return Status::success();
  const SolvedClass &state = *stateful[0];
  int64_t groups = layout.stateGroupCount();
  if (groups < 0 || groups > std::numeric_limits<int32_t>::max())
    return bad("STATE class '" + state.name + "': " + std::to_string(groups) +
               " request groups, outside [0, 2147483647]");
  bool artifact = !layout.kernels.empty();
  const SolvedTransfer &t = *state.transfer;
  if (t.kind == TransferKind::Fork) {
    for (const SolvedClass *s : stateful) {
      if (s->transfer->tokens < 1)
        return bad("STATE class '" + s->name + "' forks with " +
                   std::to_string(s->transfer->tokens) +
                   " tokens of room; a fork needs at least one");
      if (artifact && groups > 0 && !layout.groupCopyKernelOf(s->name))
        return bad("STATE class '" + s->name + "' forks state groups, but the "
                   "artifact has no group_copy kernel for it (pool_group_copy_" +
                   s->name + ")");
    }
  } else if (t.kind == TransferKind::Copy) {
    if (artifact &&
        (!layout.kernelByKind("image_store") || !layout.kernelByKind("image_restore")))
      return bad("STATE class '" + state.name + "' has a copy transfer, but the "
                 "artifact has no image_store / image_restore kernel");
    if (t.layoutId.empty())
      return bad("STATE class '" + state.name +
                 "' has a copy transfer with an empty layout id");
    const KernelInfo *image = layout.kernelByKind("image_gather");
    int64_t imageBytes = image ? image->itemBytes : state.entryBytes;
    if (page.entryBytes < 1 || state.entryBytes < 1 || imageBytes < 1)
      return bad("STATE class '" + state.name + "': a copy checkpoint needs "
                 "positive PAGE entry, slot and image bytes");
    if (imageBytes > state.entryBytes)
      return bad("STATE class '" + state.name + "': image of " +
                 std::to_string(imageBytes) + " B exceeds the " +
                 std::to_string(state.entryBytes) + " B a slot holds");
  }
  if (layout.rowSpace && state.entriesPerReq > 1)
    return bad("a row-space STATE class with more than one slot per request "
               "is not supported");
  return Status::success();
}

} // namespace

Status checkServable(const SolvedLayout &layout) {
  const SolvedGeometry &geo = layout.geometry;
  if (geo.blockSize < 1)
    return bad("layout.geometry.block_size is not positive");
  if (auto why = hashBlockSizeRefusal(geo.blockSize, geo.hashBlockSize))
    return bad("layout.geometry.hash_block_size " +
               std::to_string(geo.hashBlockSize) + " " + *why);
  if (auto r = checkServableShape(serveShapeOf(layout)))
    return bad(r->message);
  const SolvedClass *page = layout.page();
  if (!page)
    return bad("no full-attention PAGE class");
  if (page->entries < 1)
    return bad("PAGE class '" + page->name + "' has " +
               std::to_string(page->entries) +
               " blocks; a request needs at least one");
  if (Status s = checkWindows(layout, *page); !s.ok())
    return s;
  if (Status s = checkTransfers(layout, *page); !s.ok())
    return s;
  if (const auto &rs = layout.rowSpace) {
    if (!rs->planeRows || !rs->slotPositions)
      return bad("row_space: plane_rows or slot_positions missing (the "
                 "layout is not planned)");
    if (rs->envelopeRows < 1 || rs->slotRows < 1 || *rs->planeRows < 1)
      return bad("row_space: envelope_rows, slot_rows and plane_rows must be "
                 "positive");
  }
  return Status::success();
}

} // namespace poolrt
