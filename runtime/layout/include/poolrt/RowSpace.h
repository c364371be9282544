//===- RowSpace.h - The shared row space of DeepSeek-V4-style pools -*- C++ -*-===//
//
// A row is one token's KV at one layer. Every plane (fp8: NoPE 512 B + RoPE
// 128 B; bf16: one 1024 B plane) materializes the same rows at its own width,
// so one row index means the same thing in every plane. A plane is
//
//   row 0 -- num_blocks envelopes (compressed history) -- gap -- slots -- plane_rows
//
// Blocks grow up from row 0, slots sit at the top (slot position j occupies
// [j*slot_rows, (j+1)*slot_rows)); growing one side takes rows from the gap.
// Layers are grouped by compress ratio into classes (dense 0: window only;
// CSA 4; HCA 128; absent -1: not in the row space, its window is a state
// field). The envelope (one block's compressed rows) orders HCA then CSA;
// the entry (one slot's windows, after the slot's state arena) orders dense,
// HCA, CSA. A class's layers interleave their window rows in runs of its
// layer stride so that a layer's rows sit at a fixed offset from its base
// row: every formula depends on a layer only through its index in its class.
//
// Silent failure modes: an address that depends on the (blocks, slots) split
// moves when the boundary moves (fix plane_rows for an elastic pool); a
// negative position addresses foreign rows (positions are >= 0 here, Q7).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_ROWSPACE_H
#define POOLRT_ROWSPACE_H

#include "poolrt/Runs.h"
#include "poolrt/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace poolrt {

constexpr int64_t kDenseRatio = 0, kCsaRatio = 4, kHcaRatio = 128,
                  kAbsentRatio = -1;

/// Layer-independent part of a window row: positions are cut into runs of
/// `stride` and the runs of the class's `layers` layers interleave.
int64_t ringOffsetFor(int64_t layers, int64_t stride, int64_t q);
/// Rows a class's windows reach, (L-1)*S + ring_offset(R-1) + 1; minimal.
int64_t entryRowsFor(int64_t layers, int64_t stride, int64_t ringSlots);
/// Exactly the rows some (layer, position) reaches, relative to the class.
std::vector<Run> entryRowRunsFor(int64_t layers, int64_t stride,
                                 int64_t ringSlots);

/// Rows of a slot: the state arena, then the windows, rounded up to the
/// slot alignment. Errors on overflow or an alignment below 1.
Result<int64_t> slotRowsFor(int64_t arenaRows, int64_t entryRows,
                            int64_t slotAlignRows);

/// Rows of the tight plane that holds `numBlocks` blocks of `envelopeRows`
/// rows and `numSlots` slots of `slotRows` rows: the slots plus the blocks
/// rounded up to whole slots (the reference allocates its planes so). The
/// one formula for RowSpaceGeometry::create without plane_rows and for the
/// compiler's carving (poolrt/Plan.h). Errors on negative counts, on
/// overflow, and past 2^43 rows.
Result<int64_t> tightPlaneRows(int64_t numBlocks, int64_t envelopeRows,
                               int64_t numSlots, int64_t slotRows);

struct ClassLayout {
  int64_t ratio = 0;
  std::vector<int64_t> layers; // global layer ids, ascending
  int64_t blockRows = 0;       // block_size / ratio; 0 for dense
  int64_t ringStride = 0;      // ring_slots for dense, else block_rows
  int64_t ringSlots = 0;
  int64_t envelopeOffset = 0;
  int64_t envelopeRows = 0;
  int64_t entryOffset = 0;
  int64_t entryRows = 0;

  int64_t numLayers() const { return int64_t(layers.size()); }
  std::vector<Run> entryRowRuns() const {
    return entryRowRunsFor(numLayers(), ringStride, ringSlots);
  }
};

/// Everything a kernel needs to find a window row of one class.
struct WindowParams {
  int64_t ringStart = 0;
  int64_t slotRows = 0;
  int64_t ringSlots = 0;
  int64_t ringStride = 0;
  int64_t runRows = 0;
  /// Row of absolute position `pos` (>= 0) in physical slot `slot`,
  /// relative to the class's layer base row.
  int64_t index(int64_t slot, int64_t pos) const {
    int64_t q = pos % ringSlots;
    return slot * slotRows + ringStart + (q / ringStride) * runRows +
           q % ringStride;
  }
  std::string str() const;
};

class RowSpaceGeometry {
public:
  static Result<RowSpaceGeometry>
  create(std::vector<int64_t> ratios, int64_t numBlocks, int64_t numSlots,
         int64_t ringSlots, int64_t blockSize,
         std::optional<int64_t> planeRows = std::nullopt, int64_t arenaRows = 0,
         std::optional<int64_t> slotPositions = std::nullopt,
         int64_t slotAlignRows = 2);

  /// Same ratios, ring, block size, arena, alignment and slot numbering with
  /// a new (blocks, slots) split (Q9: slot_positions is carried over).
  Result<RowSpaceGeometry> withCapacity(int64_t numBlocks, int64_t numSlots,
                                        std::optional<int64_t> planeRows =
                                            std::nullopt) const;

  const std::vector<int64_t> &ratios() const { return ratios_; }
  const std::vector<ClassLayout> &classes() const { return classes_; } // entry order
  const ClassLayout *classFor(int64_t ratio) const;
  Result<const ClassLayout *> layerClass(int64_t layer) const;

  int64_t numBlocks() const { return numBlocks_; }
  int64_t numSlots() const { return numSlots_; }
  int64_t ringSlots() const { return ringSlots_; }
  int64_t blockSize() const { return blockSize_; }
  int64_t arenaRows() const { return arenaRows_; }
  int64_t slotAlignRows() const { return slotAlignRows_; }
  int64_t envelopeRows() const { return envelopeRows_; }
  int64_t entryRows() const { return entryRows_; }
  int64_t slotRows() const { return slotRows_; }
  int64_t planeRows() const { return planeRows_; }
  int64_t heldSlots() const { return planeRows_ / slotRows_; }
  int64_t slotPositions() const { return slotPositions_; }
  int64_t slotOrigin() const { return slotPositions_ - heldSlots(); }

  Result<int64_t> layerBaseRow(int64_t layer) const;
  Result<int64_t> compressIndex(int64_t layer, int64_t block, int64_t row) const;
  Result<int64_t> physicalSlot(int64_t group) const;
  /// [start, end) rows of a physical slot, and of its state arena.
  std::pair<int64_t, int64_t> slotSpan(int64_t slot) const;
  std::pair<int64_t, int64_t> arenaSpan(int64_t slot) const;
  /// KeyError (Lookup) for a class the geometry does not have.
  Result<WindowParams> windowParams(int64_t ratio) const;
  Result<int64_t> windowIndex(int64_t layer, int64_t slot, int64_t ringPos) const;
  /// Window rows carried as a state field at `fieldOffsetRows` (plane rows
  /// from the slot start), read through the plane retyped to k rows wide.
  Result<WindowParams> fieldWindowParams(int64_t fieldOffsetRows,
                                         int64_t rowsPerWindowRow) const;
  /// Rows of an entry (relative to the entry start, after the arena) some
  /// position reaches, merged where they abut.
  std::vector<Run> entryRowRuns() const;

  // Byte helpers for a plane of `rowBytes` per row (64-bit, unchecked:
  // create() proved plane_rows * 2^20 fits).
  int64_t planeBytes(int64_t rowBytes) const { return planeRows_ * rowBytes; }
  int64_t blockBytes(int64_t rowBytes) const { return envelopeRows_ * rowBytes; }
  int64_t slotBytes(int64_t rowBytes) const { return slotRows_ * rowBytes; }

private:
  std::vector<int64_t> ratios_;
  std::vector<ClassLayout> classes_;
  int64_t numBlocks_ = 0, numSlots_ = 0, ringSlots_ = 0, blockSize_ = 0,
          arenaRows_ = 0, slotAlignRows_ = 2, envelopeRows_ = 0,
          entryRows_ = 0, slotRows_ = 0, planeRows_ = 0, slotPositions_ = 0;
  bool slotPositionsGiven_ = false;
};

} // namespace poolrt

#endif // POOLRT_ROWSPACE_H
