//===- SolvedLayout.h - Everything the compiler solved, typed ---*- C++ -*-===//
//
// The one bridge between the compiler and everything that reads its result
// (the runtime, the tools, the explorer). It has one writer and one reader:
//
//   * codegen fills it from the solved IR (codegen/Solved.cpp,
//     solvedLayoutOf) and serialises it, as the JSON report and as the
//     artifact manifest (codegen/Manifest.cpp);
//   * readSolvedLayout / parseManifest / parseReport (runtime/layout/
//     SolvedLayout.cpp) parse that JSON back into this struct, once, with
//     every refusal in one place.
//
// Nothing else names a report or manifest key: the runtime reads
// `layout.page()->entries`, never `"entries"`. Members mirror the report
// schema (specs/report-schema.md); every integer is an exact int64.
//
// Plain C++17, no LLVM/MLIR, no exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SOLVEDLAYOUT_H
#define POOLRT_SOLVEDLAYOUT_H

#include "poolrt/Artifact.h"
#include "poolrt/Attention.h"
#include "poolrt/RowSpace.h"
#include "poolrt/Status.h"
#include "poolrt/SubPool.h"
#include "poolrt/TransferKind.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace poolrt {

/// The manifest format this code writes and reads.
constexpr const char *kManifestFormat = "poolpack-manifest/1";
/// The report schema this code writes and reads.
constexpr const char *kReportSchema = "poolc-report/1";

/// [offset, length] in bytes (or rows, where noted).
struct ByteRange {
  int64_t offset = 0, length = 0;
  bool operator==(const ByteRange &o) const {
    return offset == o.offset && length == o.length;
  }
};

struct SolvedPlaneDecl {
  std::string name;
  int64_t rowBytes = 0;
  std::string dtype;
};

struct SolvedGeometry {
  int64_t blockSize = 0;
  int64_t hashBlockSize = 0;
  int64_t slidingWindow = 0;
  int64_t specDepth = 0;
  int64_t numLayers = 0;
  std::vector<int64_t> layerRatios;
  std::vector<SolvedPlaneDecl> planes;
};

struct SolvedInputs {
  int64_t budgetBytes = 0;
  int64_t maxNumSeqs = 0;
  std::optional<int64_t> ppMinBlocks;
  /// Declared parameters after overrides, in name order.
  std::vector<std::pair<std::string, int64_t>> params;
  /// Declared dtype parameters (`kv_dtype: fp8_e4m3`) after overrides, in
  /// name order; the report lists them among "params", as strings.
  std::vector<std::pair<std::string, std::string>> dtypeParams;
};

struct SolvedTransfer {
  TransferKind kind = TransferKind::None;
  int64_t tokens = 0;   // fork
  std::string layoutId; // copy
};

/// A class's pool: the declaration's own type (SubPool.h), as the manifest
/// carries it.
using PoolKind = Pool;

/// A window PAGE class's pattern and what the compiler solved for it
/// (specs/window-classes.md). Only window classes (sliding, chunked) carry
/// one; the full-attention PAGE class has none.
struct SolvedAttention {
  AttentionKind kind = AttentionKind::Sliding;
  int64_t tokens = 0;        // W (sliding) or C (chunked)
  int64_t forwardTokens = 0; // a forward's new tokens the reserve covers
  int64_t reserveBlocks = 0; // blocks per running request
  int64_t cachePercent = 0;  // its pool's share of the budget past reserves
  /// Draws its blocks from the full class's pool (one block id space; the
  /// pages are the same size) instead of a pool of its own.
  bool sharesBlocks = false;

  AttentionPattern pattern() const { return {kind, tokens}; }
};

struct SolvedClass {
  std::string name;
  PoolKind pool = PoolKind::Page;
  int64_t entries = 0;
  int64_t entryBytes = 0;
  int64_t reservedBytes = 0;
  int64_t entriesPerReq = 0;
  int64_t extraEntries = 0;
  /// STATE: the requests whose state the class holds at once (its groups of
  /// entries_per_req entries; a cushion of extra entries that is not a
  /// whole group is not a group). PAGE: 0. Solved by the compiler; the
  /// runtime sizes its state-group pool from it.
  int64_t requestGroups = 0;
  std::string bytesSource; // declared | derived | declared+derived
  std::optional<SolvedTransfer> transfer;
  std::optional<SolvedAttention> attention; // window PAGE classes only
  std::optional<int64_t> regionOffset;
  bool needsRebase = false;

  bool isPage() const { return pool == PoolKind::Page; }
  bool isWindow() const { return attention.has_value(); }
};

struct SolvedField {
  std::string name;
  std::optional<std::string> plane;
  int64_t offset = 0, end = 0, bytes = 0, layers = 0;
  std::vector<int64_t> shape;
  std::string dtype;
  double fill = 0; // may be +-inf
  int64_t align = 0;
  bool inCheckpoint = false;
  bool window = false;
};

struct SolvedArena {
  std::string className;
  int64_t entryBytes = 0;
  std::optional<int64_t> slotStride; // null in a row space
  std::vector<SolvedField> fields;
  /// Without a row space: one list of ranges inside an entry.
  std::vector<ByteRange> checkpointRanges;
  /// In a row space: one list per plane (then perPlane is true).
  bool perPlane = false;
  std::vector<std::vector<ByteRange>> planeCheckpointRanges;
  int64_t checkpointBytes = 0;
};

/// Where a kernel finds a window row (semantics §3.7): the row space's own
/// type, as the manifest carries it (one concept, one type).
using SolvedWindow = WindowParams;

struct SolvedRowPlane {
  std::string name;
  int64_t rowBytes = 0;
  std::string dtype;
  std::vector<std::string> fields;
  int64_t slackBytes = 0, blockBytes = 0, slotBytes = 0;
  std::optional<int64_t> planeBytes, offset;
  std::vector<ByteRange> imageRanges;
  bool wideOffsets = false, needsRebase = false;
};

struct SolvedRowClass {
  int64_t ratio = 0;
  std::string name;
  std::vector<int64_t> layers;
  int64_t blockRows = 0, ringStride = 0, envelopeOffset = 0, envelopeRows = 0,
          entryOffset = 0, entryRows = 0;
  SolvedWindow window;
};

struct SolvedFieldWindow {
  std::string field, plane;
  int64_t rowsPerWindowRow = 0, offsetRows = 0, layerStrideRows = 0;
  SolvedWindow window;
};

struct SolvedRowSpace {
  std::string pageClass, slotClass;
  int64_t blockSize = 0, ringSlots = 0;
  std::vector<int64_t> layerRatios;
  int64_t arenaRows = 0, slotAlignRows = 0, envelopeRows = 0, entryRows = 0,
          slotRows = 0, rowBytes = 0;
  std::vector<SolvedRowPlane> planes;
  int64_t planeSlackBytes = 0;
  double planeSlackFraction = 0;
  std::vector<SolvedRowClass> classes;
  std::vector<ByteRange> entryRowRuns; // [row, count]
  std::vector<SolvedFieldWindow> fieldWindows;
  int64_t imageBytes = 0;
  std::optional<int64_t> unitsPerCheckpoint;
  std::optional<int64_t> numBlocks, numSlots, planeRows, slotPositions, maxRow;

  const SolvedRowPlane *plane(const std::string &name) const;
};

// --- Kernels (the manifest's kernel descriptions) ---------------------------

struct KernelSegment {
  int64_t srcOff = 0, srcStride = 0, dstOff = 0, dstStride = 0, bytes = 0;
  /// The tuple position each side reads its id from; -1: the item index
  /// (the staging side).
  int srcId = -1, dstId = -1;
  std::string what; // e.g. "plane nope slot"
};

/// One position of an item's id tuple.
struct KernelIdSlot {
  std::string entity; // what the id names; ids of one entity share a space
  int64_t idMax = 0;  // ids lie in [0, idMax)
  bool read = false, written = false;
};

struct KernelInfo {
  std::string name, kind, entity;
  int idsPerItem = 0; // == idTuple.size(), at least 1
  int64_t idMax = 0;  // ids of `entity` lie in [0, idMax)
  std::vector<KernelIdSlot> idTuple;
  int64_t itemBytes = 0;
  int64_t stagingStride = 0; // 0: no staging side
  bool srcIsStaging = false, dstIsStaging = false;
  /// How the manifest names each side's id ("pair[0]", "list[i]", ...).
  std::string srcIdName, dstIdName;
  int64_t vecBytes = 16;
  bool rebase = false;
  std::vector<KernelSegment> segments;
};

/// The first kernel of `kernels` whose `member` (&KernelInfo::name or
/// ::kind) is `value`, or nullptr: the one lookup SolvedLayout and
/// KernelSet share.
const KernelInfo *findKernel(const std::vector<KernelInfo> &kernels,
                             std::string KernelInfo::*member,
                             const std::string &value);

/// The x width of the grid a launch of `k` over `items` items gets (the
/// launcher's and the GPU bench's one rule): enough 256-thread blocks that
/// each thread moves about one vector of the item's segments together, at
/// most 16 blocks per SM of a 132-SM part across the items. The kernels
/// are grid-stride loops (a table kernel deals the item's segments, end to
/// end, to its blocks in tiles or chunks, codegen/KernelGen.cpp), so any
/// width is correct; the total rather than the widest segment sizes it
/// because a table kernel spreads its blocks over all the segments.
int64_t launchGridX(const KernelInfo &k, int64_t items);

struct SolvedTarget {
  std::string target, section, format;
  int64_t bytes = 0;
};

/// Everything solved for one model at one budget.
struct SolvedLayout {
  // --- the report ---
  std::string model;
  std::string source; // provenance: the input path (not fingerprinted)
  SolvedInputs inputs;
  SolvedGeometry geometry;
  std::vector<SolvedClass> classes;
  std::vector<SolvedArena> arenas;
  std::optional<std::string> pagedClass;
  int64_t pagedEntries = 0;
  int64_t totalReservedBytes = 0;
  int64_t unreservedBytes = 0;
  int64_t allocationBytes = 0;
  int64_t allocationOverBudgetBytes = 0;
  std::optional<SolvedRowSpace> rowSpace;
  /// layoutFingerprint() of everything above but provenance and inputs:
  /// computed once by the compiler (solvedLayoutOf), written in the report,
  /// the manifest and the header (kLayoutFingerprint), and checked by the
  /// reader against the geometry it reads.
  uint64_t layoutFingerprint = 0;

  // --- what only an artifact's manifest adds ---
  std::string fingerprint; // "0x" + 16 hex digits; empty for a bare report
  int64_t blockThreads = 0;
  std::vector<SolvedTarget> targets;
  std::vector<KernelInfo> kernels;
  std::string headerSection;

  const SolvedClass *classNamed(const std::string &name) const;
  /// The (full-attention) PAGE class, or nullptr.
  const SolvedClass *page() const;
  /// The window PAGE classes (sliding, chunked), in declaration order.
  std::vector<const SolvedClass *> windowClasses() const;
  /// The STATE classes with a transfer declared (none, fork or copy).
  std::vector<const SolvedClass *> transferClasses() const;
  /// The STATE classes a request's state group spans (specs/state-classes.md):
  /// every class with a transfer. Group g is entries [g*epr, (g+1)*epr) of
  /// each (epr: its entries_per_req), so one id addresses all of them and
  /// they are checkpointed, forked and resumed together.
  std::vector<const SolvedClass *> groupClasses() const { return transferClasses(); }
  /// Groups a request can hold: the fewest request groups of groupClasses()
  /// (0 without one).
  int64_t stateGroupCount() const;
  /// The group_copy kernel of STATE class `className` (its name is
  /// pool_group_copy_<class>), or nullptr.
  const KernelInfo *groupCopyKernelOf(const std::string &className) const;
  const SolvedArena *arenaOf(const std::string &className) const;
  /// Bytes per entry of class `c`'s own region at its region_offset: its
  /// entry_bytes, except the row space's PAGE class, whose envelope lives
  /// in the planes and whose region holds only its declared bytes. 0 for a
  /// class without a region (in the planes).
  int64_t regionEntryBytes(const SolvedClass &c) const;
  const SolvedField *field(const std::string &name,
                           const SolvedArena **arena = nullptr) const;
  const KernelInfo *kernelByKind(const std::string &kind) const;

  bool operator==(const SolvedLayout &) const;
  bool operator!=(const SolvedLayout &o) const { return !(*this == o); }
};

/// The first member where `a` and `b` differ ("row_space.planes[1].offset"),
/// or "" when equal. For tests and for messages.
std::string firstDifference(const SolvedLayout &a, const SolvedLayout &b);

/// The layout fingerprint: XXH64 over every solved member in walk order
/// (the same walk as firstDifference), leaving out provenance (`source`),
/// the inputs that asked for the layout, and what only an artifact adds
/// (kernels, targets, the artifact fingerprint). Two layouts that place
/// every byte identically have the same one. The address header carries
/// it (kLayoutFingerprint), so a kernel compiled against the header can be
/// matched with the artifact it runs on: the runtime recomputes it from
/// the manifest it read, never trusting a stored copy.
uint64_t layoutFingerprint(const SolvedLayout &layout);
/// "0x" + 16 lower-case hex digits.
std::string layoutFingerprintText(uint64_t fp);

/// Parses the JSON report (`poolc --emit=report`). Kernels, targets and the
/// fingerprint stay empty.
Result<SolvedLayout> parseReport(const std::string &json);

/// Parses an artifact's manifest section: the layout, the kernels and the
/// targets, every member type-checked and range-checked.
Result<SolvedLayout> parseManifest(const std::string &json);

/// The manifest of `artifact`, parsed (parseManifest), and its targets
/// checked against the artifact's sections.
Result<SolvedLayout> readSolvedLayout(const Artifact &artifact);

} // namespace poolrt

#endif // POOLRT_SOLVEDLAYOUT_H
