//===- ReferenceModel.cpp - A tiny stateful model over the compiled layout ===//

#include "poolrt/serve/ReferenceModel.h"
#include "poolrt/serve/Mix.h"

#include <algorithm>

namespace poolrt {
namespace serve {

namespace {

uint64_t mix(uint64_t a, uint64_t b) { return splitmix(a ^ splitmix(b)); }
/// The weight of position `q` in an attention sum: odd, so no row cancels.
uint64_t weight(int64_t q) { return 2 * uint64_t(q) + 1; }

Error layoutError(const std::string &what) {
  return Error::invalid("reference model: " + what);
}

/// The first and the last of `n` layers (one when n == 1).
std::vector<int64_t> probeLayers(int64_t n) {
  if (n <= 1)
    return {0};
  return {0, n - 1};
}

} // namespace

/// The running values of one forward.
struct ReferenceModel::Acc {
  int64_t start = 0;
  uint64_t pageSum = 0;   // flat: PAGE rows before the position
  uint64_t windowSum = 0; // row space: window rows in the window
  uint64_t compSum = 0;   // row space: compressed rows emitted so far
  std::vector<uint64_t> winSum; // flat window classes: rows in the window
  std::vector<int64_t> winLo;   // the first position winSum holds
  std::vector<uint64_t> recurrent;         // flat state: one per cell
  std::vector<std::vector<uint64_t>> conv; // flat state: its ring
  std::vector<std::vector<uint64_t>> cur, prev; // row space: per compressor, cell
};

ReferenceModel::~ReferenceModel() = default;

Result<std::unique_ptr<ReferenceModel>>
ReferenceModel::create(const SolvedLayout &layout, Device &device, DevicePtr arena) {
  std::unique_ptr<ReferenceModel> m(new ReferenceModel(device, arena));
  m->arenaBytes_ = layout.allocationBytes;
  const SolvedClass *page = layout.page();
  if (!page || page->entries < 1)
    return layoutError("the layout has no PAGE class with entries");
  m->blockSize_ = layout.geometry.blockSize;
  m->window_ = layout.geometry.slidingWindow;
  if (m->blockSize_ < 1)
    return layoutError("block_size is below 1");

  if (layout.rowSpace) {
    Status st = m->setUpRowSpace(layout);
    if (!st.ok())
      return st.error();
    return m;
  }

  Status st = m->setUpFlat(layout, *page);
  if (!st.ok())
    return st.error();
  return m;
}

Status ReferenceModel::setUpRowSpace(const SolvedLayout &layout) {
  const SolvedRowSpace &rs = *layout.rowSpace;
  kind_ = Kind::RowSpace;
  if (!rs.numBlocks || !rs.numSlots || !rs.planeRows || !rs.slotPositions)
    return layoutError("the row space is not planned (no counts)");
  if (rs.planes.empty())
    return layoutError("the row space has no plane");
  if (window_ < 1)
    return layoutError("a row-space model needs a sliding window");
  auto geo = RowSpaceGeometry::create(rs.layerRatios, *rs.numBlocks, *rs.numSlots,
                                      rs.ringSlots, rs.blockSize, *rs.planeRows,
                                      rs.arenaRows, *rs.slotPositions,
                                      rs.slotAlignRows);
  if (!geo.ok())
    return layoutError("row space: " + geo.error().message);
  if (geo->slotRows() != rs.slotRows || geo->envelopeRows() != rs.envelopeRows)
    return layoutError("the row space's slot or envelope rows disagree with "
                       "its own ratios");
  geo_ = geo.take();
  for (const SolvedRowPlane &p : rs.planes) {
    planeOffsets_.push_back(p.offset.value_or(0));
    planeRowBytes_.push_back(p.rowBytes);
  }
  plane0_ = planeOffsets_[0];
  row0_ = planeRowBytes_[0];
  if (row0_ < 8)
    return layoutError("plane 0's rows are narrower than 8 bytes");
  auto planeIndex = [&](const std::string &name) -> int64_t {
    for (size_t i = 0; i < rs.planes.size(); ++i)
      if (rs.planes[i].name == name)
        return int64_t(i);
    return -1;
  };
  const SolvedArena *arena = layout.arenaOf(rs.slotClass);
  if (!arena)
    return layoutError("no state arena for slot class '" + rs.slotClass + "'");
  std::vector<bool> used(arena->fields.size(), false);
  for (const SolvedRowClass &c : rs.classes) {
    if (c.layers.empty() || c.ratio < 0)
      continue;
    int64_t n = int64_t(c.layers.size());
    for (int64_t li : probeLayers(n)) {
      auto base = geo_->layerBaseRow(c.layers[size_t(li)]);
      if (!base.ok())
        return layoutError(base.error().message);
      WindowProbe w;
      w.layer = c.layers[size_t(li)];
      w.params = c.window;
      w.baseRow = *base;
      w.planeOffset = plane0_;
      w.viewRowBytes = row0_;
      windows_.push_back(w);
    }
    if (c.ratio == 0)
      continue;
    if (blockSize_ % c.ratio != 0)
      return layoutError("compress ratio " + std::to_string(c.ratio) +
                         " does not divide the block size");
    // The compressor's state: the unused fields with one layer per layer
    // of the class. The ratio-4 compressor overlaps groups and keeps its
    // state in every checkpointed such field; the others do not overlap
    // (their state is dead at a block boundary) and take the rest.
    bool wantCheckpointed = c.ratio == kCsaRatio;
    std::vector<size_t> picks;
    for (size_t i = 0; i < arena->fields.size(); ++i) {
      const SolvedField &f = arena->fields[i];
      if (!used[i] && !f.window && f.layers == n && f.plane &&
          f.inCheckpoint == wantCheckpointed)
        picks.push_back(i);
    }
    if (picks.empty())
      return layoutError("no " + std::string(wantCheckpointed ? "checkpointed " : "") +
                         "state field holds the ratio-" + std::to_string(c.ratio) +
                         " compressor (" + std::to_string(n) + " layers)");
    for (int64_t li : probeLayers(n)) {
      auto base = geo_->layerBaseRow(c.layers[size_t(li)]);
      if (!base.ok())
        return layoutError(base.error().message);
      CompressProbe cp;
      cp.ratio = c.ratio;
      cp.baseRow = *base;
      cp.overlapping = wantCheckpointed;
      for (size_t i : picks) {
        const SolvedField &f = arena->fields[i];
        int64_t layerBytes = f.bytes / f.layers;
        if (layerBytes < 16)
          return layoutError("field '" + f.name + "' has fewer than 16 bytes a layer");
        int64_t plane = planeIndex(*f.plane);
        if (plane < 0)
          return layoutError("field '" + f.name + "' names an unknown plane");
        cp.cells.push_back({plane, f.offset + li * layerBytes});
      }
      compressors_.push_back(cp);
    }
    for (size_t i : picks)
      used[i] = true;
  }
  for (const SolvedFieldWindow &fw : rs.fieldWindows) {
    const SolvedField *f = layout.field(fw.field);
    int64_t plane = planeIndex(fw.plane);
    if (!f || plane < 0 || fw.rowsPerWindowRow < 1)
      return layoutError("field window '" + fw.field + "' is incomplete");
    for (int64_t li : probeLayers(f->layers)) {
      WindowProbe w;
      w.layer = -1;
      w.params = fw.window;
      w.baseRow = li * fw.layerStrideRows;
      w.planeOffset = planeOffsets_[size_t(plane)];
      w.viewRowBytes = planeRowBytes_[size_t(plane)] * fw.rowsPerWindowRow;
      windows_.push_back(w);
    }
  }
  if (windows_.empty())
    return layoutError("the row space has no layer");
  return Status::success();
}

Status ReferenceModel::setUpFlat(const SolvedLayout &layout, const SolvedClass &page) {
  pageRegion_ = page.regionOffset.value_or(0);
  pageEntryBytes_ = page.entryBytes;
  pageRowBytes_ = page.entryBytes / blockSize_;
  if (pageRowBytes_ < 16)
    return layoutError("a PAGE row (entry_bytes / block_size) is narrower "
                       "than 16 bytes");
  for (const SolvedClass *w : layout.windowClasses()) {
    PageWindow pw;
    pw.pattern = w->attention->pattern();
    pw.region = w->regionOffset.value_or(0);
    pw.entryBytes = w->entryBytes;
    pw.rowBytes = w->entryBytes / blockSize_;
    if (pw.rowBytes < 8 || pw.pattern.tokens < 1)
      return layoutError("window class '" + w->name +
                         "': a row narrower than 8 bytes or an empty window");
    pageWindows_.push_back(pw);
  }
  // Every class of the request's group holds state the forward carries
  // (specs/state-classes.md): probe cells in each, so a fork that leaves
  // one class's entries behind changes the outputs.
  for (const SolvedClass *c : layout.groupClasses()) {
    if (c->requestGroups < 1)
      continue;
    const SolvedArena *arena = layout.arenaOf(c->name);
    if (!arena || arena->fields.empty())
      return layoutError("state class '" + c->name + "' has no fields");
    int64_t stride = arena->slotStride.value_or(c->entryBytes);
    kind_ = Kind::FlatState;
    size_t before = stateCells_.size();
    for (size_t i = 0; i < arena->fields.size(); ++i) {
      const SolvedField &f = arena->fields[i];
      if (f.layers < 1)
        continue;
      int64_t layerBytes = f.bytes / f.layers;
      if (layerBytes < 8)
        continue;
      for (int64_t l : probeLayers(f.layers)) {
        StateCell cell;
        cell.region = c->regionOffset.value_or(0);
        cell.groupBytes = std::max<int64_t>(1, c->entriesPerReq) * stride;
        cell.offset = f.offset + l * layerBytes;
        cell.ring = std::min<int64_t>(3, layerBytes / 8 - 1);
        stateCells_.push_back(cell);
      }
    }
    if (stateCells_.size() == before)
      return layoutError("state class '" + c->name +
                         "' has no field wide enough for the probes");
  }
  return Status::success();
}

int64_t ReferenceModel::cellOffset(const std::pair<int64_t, int64_t> &cell,
                                   int64_t slotBeginRow) const {
  return planeOffsets_[size_t(cell.first)] +
         slotBeginRow * planeRowBytes_[size_t(cell.first)] + cell.second;
}

Status ReferenceModel::inArena(int64_t off) const {
  if (off < 0 || off > arenaBytes_ - 8)
    return Error{ErrorKind::State,
                 "reference model: offset " + std::to_string(off) +
                     " is outside the " + std::to_string(arenaBytes_) +
                     "-byte arena (the layout's offsets disagree with its sizes)"};
  return Status::success();
}

Status ReferenceModel::read(int64_t off, uint64_t &v) {
  Status in = inArena(off);
  if (!in.ok())
    return in;
  ++accesses_;
  return dev_.copyFromDevice(&v, arena_ + uint64_t(off), sizeof v);
}

Status ReferenceModel::write(int64_t off, uint64_t v) {
  Status in = inArena(off);
  if (!in.ok())
    return in;
  ++accesses_;
  return dev_.copyToDevice(arena_ + uint64_t(off), &v, sizeof v);
}

Result<int64_t> ReferenceModel::blockOf(const Request &r, int64_t pos) const {
  int64_t i = pos / blockSize_;
  if (pos < 0 || i >= int64_t(r.blockTable.size()))
    return Error{ErrorKind::State, "reference model: position " + std::to_string(pos) +
                                       " is past the request's " +
                                       std::to_string(r.blockTable.size()) +
                                       " blocks"};
  return int64_t(r.blockTable[size_t(i)].value);
}

Result<int64_t> ReferenceModel::windowRow(const Request &r, size_t c,
                                          int64_t pos) const {
  int64_t i = pos / blockSize_;
  if (c >= r.windowTables.size() || pos < 0 ||
      i >= int64_t(r.windowTables[c].size()) || !r.windowTables[c][size_t(i)].valid())
    return Error{ErrorKind::State,
                 "reference model: position " + std::to_string(pos) +
                     " of window class " + std::to_string(c) +
                     " is in no block the request holds (released or never taken)"};
  const PageWindow &w = pageWindows_[c];
  return w.region + int64_t(r.windowTables[c][size_t(i)].value) * w.entryBytes +
         (pos % blockSize_) * w.rowBytes;
}

#define POOLRT_TRY(expr)                                                      \
  do {                                                                        \
    Status s_ = (expr);                                                       \
    if (!s_.ok())                                                             \
      return s_.error();                                                      \
  } while (0)

Status ReferenceModel::begin(const Request &r, int32_t stateId, int64_t pos,
                             Acc &acc) {
  acc = Acc();
  acc.start = pos;
  if (kind_ != Kind::RowSpace) {
    for (int64_t q = 0; q < pos; ++q) {
      auto b = blockOf(r, q);
      if (!b.ok())
        return b.error();
      int64_t row = pageRegion_ + *b * pageEntryBytes_ + (q % blockSize_) * pageRowBytes_;
      uint64_t v0 = 0, v1 = 0;
      POOLRT_TRY(read(row, v0));
      POOLRT_TRY(read(row + 8, v1));
      acc.pageSum += weight(q) * (v0 + 3 * v1);
    }
    acc.winSum.assign(pageWindows_.size(), 0);
    acc.winLo.assign(pageWindows_.size(), 0);
    for (size_t c = 0; c < pageWindows_.size(); ++c) {
      acc.winLo[c] = pageWindows_[c].pattern.firstAttended(pos);
      for (int64_t q = acc.winLo[c]; q < pos; ++q) {
        auto at = windowRow(r, c, q);
        if (!at.ok())
          return at.error();
        uint64_t v = 0;
        POOLRT_TRY(read(*at, v));
        acc.winSum[c] += weight(q) * v;
      }
    }
    if (kind_ == Kind::FlatState) {
      acc.recurrent.assign(stateCells_.size(), 0);
      acc.conv.assign(stateCells_.size(), {});
      for (size_t c = 0; c < stateCells_.size(); ++c) {
        int64_t group = stateCells_[c].at(stateId) - stateCells_[c].offset;
        acc.conv[c].assign(size_t(stateCells_[c].ring), 0);
        if (pos == 0)
          continue; // a cold request starts from zero
        POOLRT_TRY(read(group + stateCells_[c].offset, acc.recurrent[c]));
        for (int64_t j = 0; j < stateCells_[c].ring; ++j)
          POOLRT_TRY(read(group + stateCells_[c].offset + 8 * (j + 1), acc.conv[c][size_t(j)]));
      }
    }
    return Status::success();
  }
  for (const WindowProbe &w : windows_)
    for (int64_t q = std::max<int64_t>(0, pos - window_ + 1); q < pos; ++q) {
      uint64_t v = 0;
      POOLRT_TRY(read(w.planeOffset + (w.baseRow + w.params.index(stateId, q)) * w.viewRowBytes, v));
      acc.windowSum += weight(q) * v;
    }
  int64_t slotBegin = geo_->slotSpan(stateId).first;
  acc.cur.assign(compressors_.size(), {});
  acc.prev.assign(compressors_.size(), {});
  for (size_t c = 0; c < compressors_.size(); ++c) {
    const CompressProbe &cp = compressors_[c];
    for (int64_t j = 0; j < pos / cp.ratio; ++j) {
      auto b = blockOf(r, j * cp.ratio);
      if (!b.ok())
        return b.error();
      uint64_t v = 0;
      int64_t row = cp.baseRow + *b * geo_->envelopeRows() + (j * cp.ratio % blockSize_) / cp.ratio;
      POOLRT_TRY(read(plane0_ + row * row0_, v));
      acc.compSum += weight(j) * v;
    }
    acc.cur[c].assign(cp.cells.size(), 0);
    acc.prev[c].assign(cp.cells.size(), 0);
    for (size_t f = 0; f < cp.cells.size(); ++f) {
      int64_t cell = cellOffset(cp.cells[f], slotBegin);
      // A group that starts here starts from zero: its state is dead at a
      // group boundary (and at a block boundary, for the non-overlapping
      // compressor, which is why a checkpoint may leave it out).
      if (pos % cp.ratio != 0)
        POOLRT_TRY(read(cell, acc.cur[c][f]));
      if (cp.overlapping && pos >= cp.ratio)
        POOLRT_TRY(read(cell + 8, acc.prev[c][f]));
    }
  }
  return Status::success();
}

Status ReferenceModel::step(const Request &r, int32_t stateId, int64_t pos,
                            int64_t token, Acc &acc, uint64_t &hidden) {
  uint64_t k = mix(uint64_t(token), uint64_t(pos));
  if (kind_ != Kind::RowSpace) {
    uint64_t sMix = 0;
    for (size_t c = 0; c < acc.recurrent.size(); ++c) {
      uint64_t in = mix(k, c + 1);
      uint64_t conv = in;
      for (uint64_t v : acc.conv[c])
        conv += v;
      acc.recurrent[c] = mix(acc.recurrent[c], conv);
      if (!acc.conv[c].empty())
        acc.conv[c][size_t(pos % int64_t(acc.conv[c].size()))] = in;
      sMix = mix(sMix, acc.recurrent[c]);
    }
    uint64_t kv = mix(k, sMix);
    auto b = blockOf(r, pos);
    if (!b.ok())
      return b.error();
    int64_t row = pageRegion_ + *b * pageEntryBytes_ + (pos % blockSize_) * pageRowBytes_;
    POOLRT_TRY(write(row, kv));
    POOLRT_TRY(write(row + 8, kv ^ 0x5555555555555555ull));
    uint64_t v0 = 0, v1 = 0;
    POOLRT_TRY(read(row, v0));
    POOLRT_TRY(read(row + 8, v1));
    acc.pageSum += weight(pos) * (v0 + 3 * v1);
    hidden = mix(kv, acc.pageSum);
    for (size_t c = 0; c < pageWindows_.size(); ++c) {
      // Rows that left the window leave the sum (read back: a block that
      // was released and reused too early would subtract the wrong value).
      int64_t lo = pageWindows_[c].pattern.firstAttended(pos);
      for (; acc.winLo[c] < lo; ++acc.winLo[c]) {
        auto at = windowRow(r, c, acc.winLo[c]);
        if (!at.ok())
          return at.error();
        uint64_t old = 0;
        POOLRT_TRY(read(*at, old));
        acc.winSum[c] -= weight(acc.winLo[c]) * old;
      }
      auto at = windowRow(r, c, pos);
      if (!at.ok())
        return at.error();
      POOLRT_TRY(write(*at, mix(kv, c + 1)));
      uint64_t v = 0;
      POOLRT_TRY(read(*at, v));
      acc.winSum[c] += weight(pos) * v;
      hidden = mix(hidden, acc.winSum[c]);
    }
    return Status::success();
  }
  for (size_t i = 0; i < windows_.size(); ++i) {
    const WindowProbe &w = windows_[i];
    if (pos > acc.start && pos - window_ >= 0) {
      uint64_t old = 0;
      POOLRT_TRY(read(w.planeOffset + (w.baseRow + w.params.index(stateId, pos - window_)) * w.viewRowBytes, old));
      acc.windowSum -= weight(pos - window_) * old;
    }
    int64_t at = w.planeOffset + (w.baseRow + w.params.index(stateId, pos)) * w.viewRowBytes;
    POOLRT_TRY(write(at, mix(k, i + 1)));
    uint64_t v = 0;
    POOLRT_TRY(read(at, v));
    acc.windowSum += weight(pos) * v;
  }
  for (size_t c = 0; c < compressors_.size(); ++c) {
    const CompressProbe &cp = compressors_[c];
    uint64_t rowValue = uint64_t(pos / cp.ratio);
    for (size_t f = 0; f < cp.cells.size(); ++f) {
      acc.cur[c][f] = mix(acc.cur[c][f], k + c * 131 + f);
      rowValue = cp.overlapping ? mix(mix(rowValue, acc.prev[c][f]), acc.cur[c][f])
                                : mix(rowValue, acc.cur[c][f]);
    }
    if ((pos + 1) % cp.ratio != 0)
      continue;
    int64_t j = pos / cp.ratio;
    auto b = blockOf(r, pos);
    if (!b.ok())
      return b.error();
    int64_t row = cp.baseRow + *b * geo_->envelopeRows() + (pos % blockSize_) / cp.ratio;
    POOLRT_TRY(write(plane0_ + row * row0_, rowValue));
    uint64_t v = 0;
    POOLRT_TRY(read(plane0_ + row * row0_, v));
    acc.compSum += weight(j) * v;
    acc.prev[c] = acc.cur[c];
    std::fill(acc.cur[c].begin(), acc.cur[c].end(), 0);
  }
  hidden = mix(mix(k, acc.windowSum), acc.compSum);
  return Status::success();
}

Status ReferenceModel::finish(int32_t stateId, const Acc &acc) {
  if (kind_ == Kind::FlatState) {
    for (size_t c = 0; c < stateCells_.size(); ++c) {
      int64_t group = stateCells_[c].at(stateId) - stateCells_[c].offset;
      POOLRT_TRY(write(group + stateCells_[c].offset, acc.recurrent[c]));
      for (int64_t j = 0; j < stateCells_[c].ring; ++j)
        POOLRT_TRY(write(group + stateCells_[c].offset + 8 * (j + 1), acc.conv[c][size_t(j)]));
    }
  }
  if (kind_ == Kind::RowSpace) {
    int64_t slotBegin = geo_->slotSpan(stateId).first;
    for (size_t c = 0; c < compressors_.size(); ++c) {
      const CompressProbe &cp = compressors_[c];
      for (size_t f = 0; f < cp.cells.size(); ++f) {
        int64_t cell = cellOffset(cp.cells[f], slotBegin);
        POOLRT_TRY(write(cell, acc.cur[c][f]));
        if (cp.overlapping)
          POOLRT_TRY(write(cell + 8, acc.prev[c][f]));
      }
    }
  }
  return Status::success();
}

Status ReferenceModel::junkRows(const Request &r, int32_t stateId, int64_t from,
                                int64_t count) {
  if (kind_ != Kind::RowSpace) {
    // Window classes: rejected drafts leave junk in their rows, which a
    // later forward must overwrite before any query reads them.
    for (size_t c = 0; c < pageWindows_.size(); ++c)
      for (int64_t pos = from; pos < from + count; ++pos) {
        auto at = windowRow(r, c, pos);
        if (!at.ok())
          return at.error();
        POOLRT_TRY(write(*at, mix(0xDEADull, uint64_t(pos))));
      }
    return Status::success();
  }
  for (int64_t pos = from; pos < from + count; ++pos)
    for (const WindowProbe &w : windows_)
      POOLRT_TRY(write(w.planeOffset + (w.baseRow + w.params.index(stateId, pos)) * w.viewRowBytes,
                       mix(0xDEADull, uint64_t(pos))));
  return Status::success();
}

Result<int64_t> ReferenceModel::forward(Request &r, int32_t stateId, int64_t start,
                                        int64_t count, bool extend,
                                        int64_t rejected) {
  if (start < 0 || count < 1 || rejected < 0)
    return Error::invalid("reference model: forward of " + std::to_string(count) +
                          " tokens at " + std::to_string(start));
  if (!extend && start + count > r.numTokens())
    return Error::invalid("reference model: positions [" + std::to_string(start) +
                          ", " + std::to_string(start + count) +
                          ") pass the request's " + std::to_string(r.numTokens()) +
                          " tokens");
  if (extend && start + 1 != r.numTokens())
    return Error::invalid("reference model: a decode forward starts at the last token");
  if (kind_ != Kind::Flat && stateId < 0)
    return Error::invalid("reference model: a stateful model's forward needs "
                          "the request's state group");
  Acc acc;
  POOLRT_TRY(begin(r, stateId, start, acc));
  uint64_t hidden = 0;
  int64_t next = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t pos = start + i;
    POOLRT_TRY(step(r, stateId, pos, r.tokens[size_t(pos)], acc, hidden));
    next = int64_t(hidden % uint64_t(kModelVocab));
    if (extend && i + 1 < count)
      r.tokens.push_back(next);
  }
  POOLRT_TRY(finish(stateId, acc));
  POOLRT_TRY(junkRows(r, stateId, start + count, rejected));
  return next;
}

Result<uint64_t> ReferenceModel::stateChecksum(const Request &r, int32_t stateId,
                                               int64_t pos) {
  if (kind_ != Kind::Flat && stateId < 0)
    return Error::invalid("reference model: a stateful model's checksum needs "
                          "the request's state group");
  Acc acc;
  POOLRT_TRY(begin(r, stateId, pos, acc));
  uint64_t h = mix(uint64_t(pos), acc.pageSum);
  h = mix(h, acc.windowSum);
  h = mix(h, acc.compSum);
  for (uint64_t v : acc.winSum)
    h = mix(h, v);
  for (uint64_t v : acc.recurrent)
    h = mix(h, v);
  for (const auto &ring : acc.conv)
    for (uint64_t v : ring)
      h = mix(h, v);
  for (size_t c = 0; c < acc.cur.size(); ++c)
    for (size_t f = 0; f < acc.cur[c].size(); ++f)
      h = mix(mix(h, acc.cur[c][f]), acc.prev[c][f]);
  return h;
}

#undef POOLRT_TRY

} // namespace serve
} // namespace poolrt
