//===- RowSpace.cpp - The shared row space of DeepSeek-V4-style pools -----===//

#include "poolrt/RowSpace.h"
#include "poolrt/Checked.h"

#include <algorithm>

namespace poolrt {

namespace {
/// Planes past 2^43 rows would overflow rows * (row bytes up to 2^20).
constexpr int64_t kMaxPlaneRows = int64_t(1) << 43;
} // namespace

int64_t ringOffsetFor(int64_t layers, int64_t stride, int64_t q) {
  return (q / stride) * (layers * stride) + (q % stride);
}

int64_t entryRowsFor(int64_t layers, int64_t stride, int64_t ringSlots) {
  return (layers - 1) * stride + ringOffsetFor(layers, stride, ringSlots - 1) +
         1;
}

std::vector<Run> entryRowRunsFor(int64_t layers, int64_t stride,
                                 int64_t ringSlots) {
  std::vector<Run> runs;
  int64_t whole = ringSlots / stride, partial = ringSlots % stride;
  if (whole > 0)
    runs.push_back({0, whole * layers * stride});
  if (partial > 0)
    for (int64_t i = 0; i < layers; ++i)
      runs.push_back({whole * layers * stride + i * stride, partial});
  return runs;
}

std::string WindowParams::str() const {
  return "WindowParams(ring_start=" + std::to_string(ringStart) +
         ", slot_rows=" + std::to_string(slotRows) +
         ", ring_slots=" + std::to_string(ringSlots) +
         ", ring_stride=" + std::to_string(ringStride) +
         ", run_rows=" + std::to_string(runRows) + ")";
}

Result<int64_t> slotRowsFor(int64_t arenaRows, int64_t entryRows,
                            int64_t slotAlignRows) {
  if (slotAlignRows < 1)
    return Error::invalid("slot_align_rows must be positive, got " +
                          std::to_string(slotAlignRows));
  auto rows = checkedAdd(arenaRows, entryRows, "slot rows");
  return rows ? checkedAlignUp(*rows, slotAlignRows, "slot rows") : rows;
}

Result<int64_t> tightPlaneRows(int64_t numBlocks, int64_t envelopeRows,
                               int64_t numSlots, int64_t slotRows) {
  if (numBlocks < 0 || numSlots < 0)
    return Error::invalid("num_blocks and num_slots must not be negative, got " +
                          std::to_string(numBlocks) + " and " +
                          std::to_string(numSlots));
  if (envelopeRows < 0 || slotRows < 1)
    return Error::invalid("a row space needs envelope_rows >= 0 and slot_rows "
                          ">= 1, got " + std::to_string(envelopeRows) +
                          " and " + std::to_string(slotRows));
  auto blockRows = checkedMul(numBlocks, envelopeRows, "block rows");
  if (!blockRows)
    return blockRows.error();
  int64_t blockSlots = ceilDiv(*blockRows, slotRows);
  auto slots = checkedAdd(numSlots, blockSlots, "plane slots");
  if (!slots)
    return slots.error();
  auto rows = checkedMul(*slots, slotRows, "plane rows");
  if (!rows)
    return rows.error();
  if (*rows > kMaxPlaneRows)
    return Error::invalid("plane of " + std::to_string(*rows) +
                          " rows exceeds 2^43 rows");
  return *rows;
}

Result<RowSpaceGeometry>
RowSpaceGeometry::create(std::vector<int64_t> ratios, int64_t numBlocks,
                         int64_t numSlots, int64_t ringSlots, int64_t blockSize,
                         std::optional<int64_t> planeRows, int64_t arenaRows,
                         std::optional<int64_t> slotPositions,
                         int64_t slotAlignRows) {
  if (ratios.empty())
    return Error::invalid("a V4 pool needs at least one layer");
  std::vector<int64_t> unknown;
  for (int64_t r : ratios)
    if (r != kDenseRatio && r != kCsaRatio && r != kHcaRatio &&
        r != kAbsentRatio &&
        std::find(unknown.begin(), unknown.end(), r) == unknown.end())
      unknown.push_back(r);
  if (!unknown.empty()) {
    std::sort(unknown.begin(), unknown.end());
    std::string list = "[";
    for (size_t i = 0; i < unknown.size(); ++i)
      list += (i ? ", " : "") + std::to_string(unknown[i]);
    return Error::invalid("unknown V4 compress ratios " + list + "]");
  }
  if (slotAlignRows < 1)
    return Error::invalid("slot_align_rows must be positive, got " +
                          std::to_string(slotAlignRows));
  if (ringSlots < 1)
    return Error::invalid("ring_slots must be positive, got " +
                          std::to_string(ringSlots));
  if (arenaRows < 0)
    return Error::invalid("arena_rows must not be negative, got " +
                          std::to_string(arenaRows));
  // Q6: the reference divides by zero or floors silently here.
  if (std::all_of(ratios.begin(), ratios.end(),
                  [](int64_t r) { return r == kAbsentRatio; }))
    return Error::invalid("every layer is absent: a row space needs at least "
                          "one layer that keeps KV in it");
  if (blockSize < 1)
    return Error::invalid("block_size must be positive, got " +
                          std::to_string(blockSize));
  for (int64_t r : ratios)
    if (r > 0 && blockSize % r != 0)
      return Error::invalid("block_size " + std::to_string(blockSize) +
                            " is not a multiple of compress ratio " +
                            std::to_string(r));
  if (numBlocks < 0 || numSlots < 0)
    return Error::invalid("num_blocks and num_slots must not be negative, got " +
                          std::to_string(numBlocks) + " and " +
                          std::to_string(numSlots));
  // Bound every row count so that rows * (row bytes up to 2^20) and all the
  // products below stay inside 64 bits.
  constexpr int64_t kMaxRows = int64_t(1) << 40;
  if (ringSlots > kMaxRows || arenaRows > kMaxRows || slotAlignRows > kMaxRows ||
      int64_t(ratios.size()) > kMaxRows / std::max<int64_t>(ringSlots, blockSize))
    return Error::invalid("row space dimensions exceed 2^40 rows");

  RowSpaceGeometry g;
  g.ratios_ = ratios;
  g.numBlocks_ = numBlocks;
  g.numSlots_ = numSlots;
  g.ringSlots_ = ringSlots;
  g.blockSize_ = blockSize;
  g.arenaRows_ = arenaRows;
  g.slotAlignRows_ = slotAlignRows;

  for (int64_t ratio : {kDenseRatio, kHcaRatio, kCsaRatio}) { // entry order
    ClassLayout c;
    c.ratio = ratio;
    for (size_t l = 0; l < ratios.size(); ++l)
      if (ratios[l] == ratio)
        c.layers.push_back(int64_t(l));
    if (c.layers.empty())
      continue;
    c.blockRows = ratio == kDenseRatio ? 0 : blockSize / ratio;
    c.ringStride = ratio == kDenseRatio ? ringSlots : c.blockRows;
    c.ringSlots = ringSlots;
    c.envelopeRows = c.numLayers() * c.blockRows;
    c.entryRows = entryRowsFor(c.numLayers(), c.ringStride, ringSlots);
    g.classes_.push_back(c);
  }
  int64_t envOff = 0;
  for (int64_t ratio : {kHcaRatio, kCsaRatio}) // envelope order
    for (ClassLayout &c : g.classes_)
      if (c.ratio == ratio) {
        c.envelopeOffset = envOff;
        envOff += c.envelopeRows;
      }
  g.envelopeRows_ = envOff;
  int64_t entryOff = 0;
  for (ClassLayout &c : g.classes_) {
    c.entryOffset = entryOff;
    entryOff += c.entryRows;
  }
  g.entryRows_ = entryOff;
  g.slotRows_ = slotRowsFor(arenaRows, g.entryRows_, slotAlignRows).value();

  auto blockRowsTotal = checkedMul(numBlocks, g.envelopeRows_, "block rows");
  if (!blockRowsTotal)
    return blockRowsTotal.error();
  if (planeRows) {
    g.planeRows_ = *planeRows;
  } else {
    auto rows =
        tightPlaneRows(numBlocks, g.envelopeRows_, numSlots, g.slotRows_);
    if (!rows)
      return rows.error();
    g.planeRows_ = *rows;
  }
  int64_t held = g.planeRows_ >= 0 ? g.planeRows_ / g.slotRows_ : -1;
  int64_t gapRows = 0;
  bool fits = held >= numSlots &&
              !mulOverflows(held - numSlots, g.slotRows_, gapRows) &&
              gapRows >= *blockRowsTotal;
  if (!fits)
    return Error::invalid(
        "plane of " + std::to_string(g.planeRows_) + " rows cannot hold " +
        std::to_string(numBlocks) + " blocks (" +
        std::to_string(g.envelopeRows_) + " rows each) plus " +
        std::to_string(numSlots) + " slots (" + std::to_string(g.slotRows_) +
        " rows each)");
  if (g.planeRows_ > kMaxPlaneRows)
    return Error::invalid("plane of " + std::to_string(g.planeRows_) +
                          " rows exceeds 2^43 rows");
  g.slotPositionsGiven_ = slotPositions.has_value();
  g.slotPositions_ = slotPositions.value_or(held);
  if (g.slotPositions_ < held)
    return Error::invalid("plane of " + std::to_string(g.planeRows_) +
                          " rows holds " + std::to_string(held) +
                          " slots, more than the " +
                          std::to_string(g.slotPositions_) +
                          " positions it was told to number by");
  return g;
}

Result<RowSpaceGeometry>
RowSpaceGeometry::withCapacity(int64_t numBlocks, int64_t numSlots,
                               std::optional<int64_t> planeRows) const {
  return create(ratios_, numBlocks, numSlots, ringSlots_, blockSize_, planeRows,
                arenaRows_,
                slotPositionsGiven_ ? std::optional<int64_t>(slotPositions_)
                                    : std::nullopt,
                slotAlignRows_);
}

const ClassLayout *RowSpaceGeometry::classFor(int64_t ratio) const {
  for (const ClassLayout &c : classes_)
    if (c.ratio == ratio)
      return &c;
  return nullptr;
}

Result<const ClassLayout *> RowSpaceGeometry::layerClass(int64_t layer) const {
  if (layer < 0 || layer >= int64_t(ratios_.size()))
    return Error::invalid("layer " + std::to_string(layer) + " outside 0.." +
                          std::to_string(ratios_.size()));
  if (ratios_[layer] == kAbsentRatio)
    return Error::invalid("layer " + std::to_string(layer) +
                          " keeps no KV in this row space; its window is a "
                          "state field, so it has no class, no base row and "
                          "no view");
  return classFor(ratios_[layer]);
}

static int64_t layerIndex(const ClassLayout &c, int64_t layer) {
  return std::lower_bound(c.layers.begin(), c.layers.end(), layer) -
         c.layers.begin();
}

Result<int64_t> RowSpaceGeometry::layerBaseRow(int64_t layer) const {
  auto c = layerClass(layer);
  if (!c)
    return c.error();
  const ClassLayout &cl = **c;
  int64_t i = layerIndex(cl, layer);
  if (cl.ratio == kDenseRatio)
    return i * ringSlots_;
  return cl.envelopeOffset + i * cl.blockRows;
}

Result<int64_t> RowSpaceGeometry::compressIndex(int64_t layer, int64_t block,
                                                int64_t row) const {
  auto c = layerClass(layer);
  if (!c)
    return c.error();
  const ClassLayout &cl = **c;
  if (cl.ratio == kDenseRatio)
    return Error::invalid("layer " + std::to_string(layer) +
                          " is dense and keeps no compressed KV");
  if (row < 0 || row >= cl.blockRows)
    return Error::invalid("row " + std::to_string(row) + " outside 0.." +
                          std::to_string(cl.blockRows) + " for ratio " +
                          std::to_string(cl.ratio));
  if (block < 0 || block >= numBlocks_)
    return Error::invalid("block " + std::to_string(block) + " outside 0.." +
                          std::to_string(numBlocks_));
  return block * envelopeRows_ + row;
}

Result<int64_t> RowSpaceGeometry::physicalSlot(int64_t group) const {
  if (group < 0 || group >= numSlots_)
    return Error::invalid("group " + std::to_string(group) + " outside 0.." +
                          std::to_string(numSlots_));
  return slotPositions_ - 1 - group;
}

std::pair<int64_t, int64_t> RowSpaceGeometry::slotSpan(int64_t slot) const {
  int64_t start = (slot - slotOrigin()) * slotRows_;
  return {start, start + slotRows_};
}

std::pair<int64_t, int64_t> RowSpaceGeometry::arenaSpan(int64_t slot) const {
  int64_t start = (slot - slotOrigin()) * slotRows_;
  return {start, start + arenaRows_};
}

Result<WindowParams> RowSpaceGeometry::windowParams(int64_t ratio) const {
  const ClassLayout *c = classFor(ratio);
  if (!c)
    return Error{ErrorKind::Lookup, std::to_string(ratio)};
  int64_t anchor = ratio == kDenseRatio ? 0 : c->envelopeOffset;
  WindowParams p;
  p.ringStart =
      arenaRows_ + c->entryOffset - anchor - slotOrigin() * slotRows_;
  p.slotRows = slotRows_;
  p.ringSlots = ringSlots_;
  p.ringStride = c->ringStride;
  p.runRows = c->numLayers() * c->ringStride;
  return p;
}

Result<int64_t> RowSpaceGeometry::windowIndex(int64_t layer, int64_t slot,
                                              int64_t ringPos) const {
  if (ringPos < 0 || ringPos >= ringSlots_)
    return Error::invalid("ring position " + std::to_string(ringPos) +
                          " outside 0.." + std::to_string(ringSlots_));
  // A physical slot the plane holds: positions slotOrigin() up to
  // slotPositions() (anything else would name rows outside the plane).
  if (slot < slotOrigin() || slot >= slotPositions_)
    return Error::invalid("slot " + std::to_string(slot) + " outside " +
                          std::to_string(slotOrigin()) + ".." +
                          std::to_string(slotPositions_));
  auto c = layerClass(layer);
  if (!c)
    return c.error();
  auto p = windowParams((*c)->ratio);
  if (!p)
    return p.error();
  return p->index(slot, ringPos);
}

Result<WindowParams>
RowSpaceGeometry::fieldWindowParams(int64_t fieldOffsetRows,
                                    int64_t rowsPerWindowRow) const {
  int64_t k = rowsPerWindowRow;
  if (k < 1)
    return Error::invalid("rows per window row must be positive, got " +
                          std::to_string(k));
  if (fieldOffsetRows < 0)
    return Error::invalid("field offset must not be negative, got " +
                          std::to_string(fieldOffsetRows));
  if (slotRows_ % k != 0)
    return Error::invalid("slot of " + std::to_string(slotRows_) +
                          " rows does not divide by the " + std::to_string(k) +
                          " plane rows one window row takes");
  if (fieldOffsetRows % k != 0)
    return Error::invalid("field offset of " + std::to_string(fieldOffsetRows) +
                          " rows does not divide by the " + std::to_string(k) +
                          " plane rows one window row takes");
  WindowParams p;
  p.ringStart = fieldOffsetRows / k - slotOrigin() * (slotRows_ / k);
  p.slotRows = slotRows_ / k;
  p.ringSlots = ringSlots_;
  p.ringStride = ringSlots_;
  p.runRows = ringSlots_;
  return p;
}

std::vector<Run> RowSpaceGeometry::entryRowRuns() const {
  std::vector<Run> all;
  for (const ClassLayout &c : classes_)
    for (Run r : c.entryRowRuns())
      all.push_back({r.first + c.entryOffset, r.second});
  // Classes are laid out in ascending, disjoint order: merging cannot fail.
  auto merged = mergeAbutting(all);
  return merged.ok() ? merged.value() : all;
}

} // namespace poolrt
