//===- SolvedLayoutDiff.cpp - Member-by-member comparison ------------------===//
//
// firstDifference walks two layouts member by member and names the first
// one that differs by its report path. The round-trip tests use it to
// compare what the compiler solved with what the manifest reader read.
//
// The same walk, hashing one layout, gives its layout fingerprint.
//
//===----------------------------------------------------------------------===//

#include "poolrt/SolvedLayout.h"

#include <cstring>
#include <vector>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
#include <type_traits>

namespace poolrt {

namespace {

/// What the walk does at its leaves: compare two layouts (Differ) or hash
/// one (Hasher, which walks a layout against itself).
class DiffLeaf {
public:
  std::string found;

  bool done() const { return !found.empty(); }
  void mark(const std::string &path) {
    if (found.empty())
      found = path;
  }
  void leaf(const std::string &p, int64_t a, int64_t b) {
    if (a != b)
      mark(p + " (" + std::to_string(a) + " vs " + std::to_string(b) + ")");
  }
  void leaf(const std::string &p, bool a, bool b) {
    if (a != b)
      mark(p);
  }
  void leaf(const std::string &p, double a, double b) {
    // Bitwise: a report keeps the exact double (and +-inf).
    if (std::memcmp(&a, &b, sizeof a) != 0)
      mark(p);
  }
  void leaf(const std::string &p, const std::string &a, const std::string &b) {
    if (a != b)
      mark(p + " ('" + a + "' vs '" + b + "')");
  }
  /// Whether the walk goes into the elements.
  bool sizes(const std::string &p, size_t a, size_t b) {
    if (a == b)
      return true;
    mark(p + " (length " + std::to_string(a) + " vs " + std::to_string(b) + ")");
    return false;
  }
  bool presence(const std::string &p, bool a, bool b) {
    if (a == b)
      return a;
    mark(p + " (null in one)");
    return false;
  }
};

/// XXH64 over every value in walk order, with lengths and presence, so two
/// layouts hash equal exactly when they are equal member by member (the
/// members under `skip` aside).
class HashLeaf {
public:
  HashLeaf() { XXH64_reset(&st, 0); }
  std::vector<std::string> skip; // path prefixes left out
  XXH64_state_t st;

  bool done() const { return false; }
  bool skipped(const std::string &p) const {
    for (const std::string &s : skip)
      if (p.compare(0, s.size(), s) == 0 &&
          (p.size() == s.size() || p[s.size()] == '.' || p[s.size()] == '['))
        return true;
    return false;
  }
  void put(const void *d, size_t n) { XXH64_update(&st, d, n); }
  void leaf(const std::string &p, int64_t a, int64_t) {
    if (!skipped(p))
      put(&a, sizeof a);
  }
  void leaf(const std::string &p, bool a, bool) { leaf(p, int64_t(a), 0); }
  void leaf(const std::string &p, double a, double) {
    if (!skipped(p))
      put(&a, sizeof a);
  }
  void leaf(const std::string &p, const std::string &a, const std::string &) {
    leaf(p, int64_t(a.size()), 0);
    if (!skipped(p))
      put(a.data(), a.size());
  }
  bool sizes(const std::string &p, size_t a, size_t) {
    leaf(p, int64_t(a), 0);
    return true;
  }
  bool presence(const std::string &p, bool a, bool) {
    leaf(p, a, false);
    return a;
  }
};

/// Walks two layouts member by member; the Leaf decides what a member is.
template <class Leaf> class Walker : public Leaf {
public:
  void cmp(const std::string &p, int64_t a, int64_t b) { this->leaf(p, a, b); }
  void cmp(const std::string &p, int a, int b) { this->leaf(p, int64_t(a), int64_t(b)); }
  void cmp(const std::string &p, bool a, bool b) { this->leaf(p, a, b); }
  void cmp(const std::string &p, double a, double b) { this->leaf(p, a, b); }
  void cmp(const std::string &p, const std::string &a, const std::string &b) {
    this->leaf(p, a, b);
  }
  void cmp(const std::string &p, const ByteRange &a, const ByteRange &b) {
    cmp(p + "[0]", a.offset, b.offset);
    cmp(p + "[1]", a.length, b.length);
  }
  template <typename E>
  auto cmp(const std::string &p, E a, E b)
      -> std::enable_if_t<std::is_enum_v<E>> {
    this->leaf(p, int64_t(a), int64_t(b));
  }
  template <typename T>
  void cmp(const std::string &p, const std::optional<T> &a,
           const std::optional<T> &b) {
    if (this->presence(p, a.has_value(), b.has_value()))
      cmp(p, *a, *b);
  }
  template <typename T>
  void cmp(const std::string &p, const std::vector<T> &a,
           const std::vector<T> &b) {
    if (!this->sizes(p, a.size(), b.size()))
      return;
    for (size_t i = 0; i < a.size() && !this->done(); ++i)
      cmp(p + "[" + std::to_string(i) + "]", a[i], b[i]);
  }
  template <typename A, typename B>
  void cmp(const std::string &p, const std::pair<A, B> &a,
           const std::pair<A, B> &b) {
    cmp(p + ".first", a.first, b.first);
    cmp(p + ".second", a.second, b.second);
  }

#define M(member, key) cmp(p + "." key, a.member, b.member)
  void cmp(const std::string &p, const SolvedPlaneDecl &a,
           const SolvedPlaneDecl &b) {
    M(name, "name");
    M(rowBytes, "row_bytes");
    M(dtype, "dtype");
  }
  void cmp(const std::string &p, const SolvedTransfer &a,
           const SolvedTransfer &b) {
    M(kind, "kind");
    M(tokens, "tokens");
    M(layoutId, "layout_id");
  }
  void cmp(const std::string &p, const SolvedAttention &a,
           const SolvedAttention &b) {
    M(kind, "kind");
    M(tokens, "tokens");
    M(forwardTokens, "forward_tokens");
    M(reserveBlocks, "reserve_blocks");
    M(cachePercent, "cache_percent");
    M(sharesBlocks, "shares_blocks");
  }
  void cmp(const std::string &p, const SolvedClass &a, const SolvedClass &b) {
    M(name, "name");
    M(pool, "pool");
    M(entries, "entries");
    M(entryBytes, "entry_bytes");
    M(reservedBytes, "reserved_bytes");
    M(entriesPerReq, "entries_per_req");
    M(extraEntries, "extra_entries");
    M(requestGroups, "request_groups");
    M(bytesSource, "bytes_source");
    M(transfer, "transfer");
    // Walked only where a class has one, so layouts without window
    // classes keep the fingerprints they always had.
    if (a.attention || b.attention)
      M(attention, "attention");
    M(regionOffset, "region_offset");
    M(needsRebase, "needs_rebase");
  }
  void cmp(const std::string &p, const SolvedField &a, const SolvedField &b) {
    M(name, "name");
    M(plane, "plane");
    M(offset, "offset");
    M(end, "end");
    M(bytes, "bytes");
    M(layers, "layers");
    M(shape, "shape");
    M(dtype, "dtype");
    M(fill, "fill");
    M(align, "align");
    M(inCheckpoint, "in_checkpoint");
    M(window, "window");
  }
  void cmp(const std::string &p, const SolvedArena &a, const SolvedArena &b) {
    M(className, "class");
    M(entryBytes, "entry_bytes");
    M(slotStride, "slot_stride");
    M(fields, "fields");
    M(perPlane, "checkpoint_ranges(per plane)");
    M(checkpointRanges, "checkpoint_ranges");
    M(planeCheckpointRanges, "checkpoint_ranges");
    M(checkpointBytes, "checkpoint_bytes");
  }
  void cmp(const std::string &p, const SolvedWindow &a, const SolvedWindow &b) {
    M(ringStart, "ring_start");
    M(slotRows, "slot_rows");
    M(ringSlots, "ring_slots");
    M(ringStride, "ring_stride");
    M(runRows, "run_rows");
  }
  void cmp(const std::string &p, const SolvedRowPlane &a,
           const SolvedRowPlane &b) {
    M(name, "name");
    M(rowBytes, "row_bytes");
    M(dtype, "dtype");
    M(fields, "fields");
    M(slackBytes, "slack_bytes");
    M(blockBytes, "block_bytes");
    M(slotBytes, "slot_bytes");
    M(planeBytes, "plane_bytes");
    M(offset, "offset");
    M(imageRanges, "image_ranges");
    M(wideOffsets, "wide_offsets");
    M(needsRebase, "needs_rebase");
  }
  void cmp(const std::string &p, const SolvedRowClass &a,
           const SolvedRowClass &b) {
    M(ratio, "ratio");
    M(name, "name");
    M(layers, "layers");
    M(blockRows, "block_rows");
    M(ringStride, "ring_stride");
    M(envelopeOffset, "envelope_offset");
    M(envelopeRows, "envelope_rows");
    M(entryOffset, "entry_offset");
    M(entryRows, "entry_rows");
    M(window, "window");
  }
  void cmp(const std::string &p, const SolvedFieldWindow &a,
           const SolvedFieldWindow &b) {
    M(field, "field");
    M(plane, "plane");
    M(rowsPerWindowRow, "rows_per_window_row");
    M(offsetRows, "offset_rows");
    M(layerStrideRows, "layer_stride_rows");
    M(window, "window");
  }
  void cmp(const std::string &p, const SolvedRowSpace &a,
           const SolvedRowSpace &b) {
    M(pageClass, "page_class");
    M(slotClass, "slot_class");
    M(blockSize, "block_size");
    M(ringSlots, "ring_slots");
    M(layerRatios, "layer_ratios");
    M(arenaRows, "arena_rows");
    M(slotAlignRows, "slot_align_rows");
    M(envelopeRows, "envelope_rows");
    M(entryRows, "entry_rows");
    M(slotRows, "slot_rows");
    M(rowBytes, "row_bytes");
    M(planes, "planes");
    M(planeSlackBytes, "plane_slack_bytes");
    M(planeSlackFraction, "plane_slack_fraction");
    M(classes, "classes");
    M(entryRowRuns, "entry_row_runs");
    M(fieldWindows, "field_windows");
    M(imageBytes, "image_bytes");
    M(unitsPerCheckpoint, "units_per_checkpoint");
    M(numBlocks, "num_blocks");
    M(numSlots, "num_slots");
    M(planeRows, "plane_rows");
    M(slotPositions, "slot_positions");
    M(maxRow, "max_row");
  }
  void cmp(const std::string &p, const KernelSegment &a,
           const KernelSegment &b) {
    M(srcOff, "src_off");
    M(srcStride, "src_stride");
    M(srcId, "src_id");
    M(dstOff, "dst_off");
    M(dstStride, "dst_stride");
    M(dstId, "dst_id");
    M(bytes, "bytes");
    M(what, "what");
  }
  void cmp(const std::string &p, const KernelIdSlot &a, const KernelIdSlot &b) {
    M(entity, "entity");
    M(idMax, "id_range");
    M(read, "access(read)");
    M(written, "access(write)");
  }
  void cmp(const std::string &p, const KernelInfo &a, const KernelInfo &b) {
    M(name, "name");
    M(kind, "kind");
    M(entity, "entity");
    M(idsPerItem, "ids_per_item");
    M(idMax, "id_range");
    M(idTuple, "id_tuple");
    M(itemBytes, "item_bytes");
    M(stagingStride, "staging_stride");
    M(srcIsStaging, "src.space");
    M(dstIsStaging, "dst.space");
    M(srcIdName, "src.id");
    M(dstIdName, "dst.id");
    M(vecBytes, "vec_bytes");
    M(rebase, "rebase");
    M(segments, "segments");
  }
  void cmp(const std::string &p, const SolvedTarget &a, const SolvedTarget &b) {
    M(target, "target");
    M(section, "section");
    M(format, "format");
    M(bytes, "bytes");
  }
  void cmp(const std::string &p, const SolvedLayout &a, const SolvedLayout &b) {
    M(model, "model");
    M(source, "source");
    M(inputs.budgetBytes, "inputs.budget_bytes");
    M(inputs.maxNumSeqs, "inputs.max_num_seqs");
    M(inputs.ppMinBlocks, "inputs.pp_min_blocks");
    M(inputs.params, "inputs.params");
    M(inputs.dtypeParams, "inputs.dtype_params");
    M(geometry.blockSize, "geometry.block_size");
    M(geometry.hashBlockSize, "geometry.hash_block_size");
    M(geometry.slidingWindow, "geometry.sliding_window");
    M(geometry.specDepth, "geometry.spec_depth");
    M(geometry.numLayers, "geometry.num_layers");
    M(geometry.layerRatios, "geometry.layer_ratios");
    M(geometry.planes, "geometry.planes");
    M(classes, "entry_classes");
    M(arenas, "arenas");
    M(pagedClass, "paged_class");
    M(pagedEntries, "paged_entries");
    M(totalReservedBytes, "total_reserved_bytes");
    M(unreservedBytes, "unreserved_bytes");
    M(allocationBytes, "allocation_bytes");
    M(allocationOverBudgetBytes, "allocation_over_budget_bytes");
    M(rowSpace, "row_space");
    cmp(p + ".layout_fingerprint", int64_t(a.layoutFingerprint), // a bit pattern
        int64_t(b.layoutFingerprint));
    M(fingerprint, "fingerprint");
    M(blockThreads, "block_threads");
    M(targets, "targets");
    M(kernels, "kernels");
    M(headerSection, "header_section");
  }
#undef M
};

} // namespace

std::string firstDifference(const SolvedLayout &a, const SolvedLayout &b) {
  Walker<DiffLeaf> d;
  d.cmp("", a, b);
  if (!d.found.empty() && d.found[0] == '.')
    return d.found.substr(1);
  return d.found;
}

bool SolvedLayout::operator==(const SolvedLayout &o) const {
  return firstDifference(*this, o).empty();
}

uint64_t layoutFingerprint(const SolvedLayout &layout) {
  Walker<HashLeaf> h;
  // Provenance, the inputs that asked for the layout and what only an
  // artifact adds: none of it moves a byte.
  h.skip = {".source", ".inputs", ".layout_fingerprint", ".fingerprint", ".block_threads",
            ".targets", ".kernels", ".header_section"};
  h.cmp("", layout, layout);
  return XXH64_digest(&h.st);
}

std::string layoutFingerprintText(uint64_t fp) {
  static const char *hex = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 15; i >= 0; --i)
    s += hex[(fp >> (4 * i)) & 15];
  return s;
}

} // namespace poolrt
