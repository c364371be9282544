//===- ReferenceModel.h - A tiny stateful model over the compiled layout -*- C++ -*-===//
//
// A deterministic model whose every byte of cache lives where the compiler
// put it, so a prefix hit gives the same answer as a cold run only if the
// layout, the pools and the generated kernels are all right. Integer
// arithmetic in a fixed order (a 64-bit mixer), driven by the artifact's
// SolvedLayout, so it runs on every bundled model:
//
//   * PAGE, flat models: a KV row per token (two 8-byte probes) in the row
//     of its block (`region + block * entry_bytes + (pos % block_size) *
//     entry_bytes / block_size`); every forward reads every earlier row of
//     the request back through its block table (a position-weighted sum).
//   * fork classes (GDN, KDA): per probe layer (first and last) of each
//     state field, a recurrent value and a three-cell conv ring in the
//     request's group, read at the start of a forward, written at its end;
//     a cold request (position 0) starts from zero, never from the bytes a
//     previous owner left.
//   * copy classes (DeepSeek-V4 row space): a window row per token and
//     probe layer of every class in the sliding-window ring of its slot,
//     the ratio-4 compressor (overlapping: each compressed row mixes the
//     previous group's sum, which lives in a checkpointed state field) and
//     the ratio-128 compressor (not overlapping: its state is dead at a
//     block boundary, so it is reset there and never read across one),
//     compressed rows emitted into the PAGE block every `ratio` tokens;
//     window-as-field layers (DSpark drafts) through their retyped view.
//
// The next token is a hash of the final hidden value, so a wrong byte of
// state changes the whole continuation. Rejected speculative positions
// write junk window rows past the last committed position (as a real
// verifier does) that no later read may see.
//
// The model reads and writes through Device (host, CUDA, HIP); it is a
// reference for correctness, not a fast kernel.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_REFERENCEMODEL_H
#define POOLRT_SERVE_REFERENCEMODEL_H

#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/RowSpace.h"
#include "poolrt/serve/Model.h"
#include "poolrt/SolvedLayout.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace poolrt {
namespace serve {

/// Output token ids lie in [0, kModelVocab).
constexpr int64_t kModelVocab = int64_t(1) << 20;

class ReferenceModel : public Model {
public:
  /// Errors name what the layout lacks (no PAGE class, a row narrower than
  /// the probes, a compressed class without a state field, ...).
  static Result<std::unique_ptr<ReferenceModel>>
  create(const SolvedLayout &layout, Device &device, DevicePtr arena);

  /// Forward the tokens at positions [start, start + count) of `r` (its
  /// tokens must hold them) with state in `stateId` (the slot kernels' id:
  /// a physical slot in a row space, a group otherwise; ignored without
  /// state). Returns the token sampled after the last position. When
  /// `extend` is true the model feeds its own samples: position start+i+1
  /// is appended to r.tokens (a decode step of 1 + accepted drafts), so
  /// count - 1 tokens are appended and the returned one is the bonus.
  /// `rejected` junk window rows follow the last position (a verifier's
  /// rejected drafts).
  Result<int64_t> forward(Request &r, int32_t stateId, int64_t start,
                          int64_t count, bool extend = false,
                          int64_t rejected = 0) override;

  /// A checksum of everything a forward at position `pos` would read:
  /// the attention sums over the rows before `pos` and the state as loaded
  /// for it. Equal states give equal checksums.
  Result<uint64_t> stateChecksum(const Request &r, int32_t stateId,
                                 int64_t pos) override;

  bool hasState() const { return kind_ != Kind::Flat; }
  /// 8-byte reads and writes so far (each is one device copy).
  int64_t accesses() const override { return accesses_; }
  std::string describe() const override { return "reference (manifest)"; }
  bool isRowSpace() const { return kind_ == Kind::RowSpace; }

  ~ReferenceModel() override;

private:
  enum class Kind { Flat, FlatState, RowSpace };
  ReferenceModel(Device &d, DevicePtr a) : dev_(d), arena_(a) {}
  struct Acc; // the running sums of a forward
  Status setUpRowSpace(const SolvedLayout &layout);
  Status setUpFlat(const SolvedLayout &layout, const SolvedClass &page);
  /// Every access is bounds-checked against the arena: a crafted layout
  /// gets an error, never a write outside the allocation.
  Status inArena(int64_t off) const;
  Status read(int64_t off, uint64_t &v);
  Status write(int64_t off, uint64_t v);
  Result<int64_t> blockOf(const Request &r, int64_t pos) const;
  Status begin(const Request &r, int32_t stateId, int64_t pos, Acc &acc);
  Status step(const Request &r, int32_t stateId, int64_t pos, int64_t token,
              Acc &acc, uint64_t &hidden);
  Status finish(int32_t stateId, const Acc &acc);
  Status junkRows(const Request &r, int32_t stateId, int64_t from, int64_t count);
  int64_t cellOffset(const std::pair<int64_t, int64_t> &cell,
                     int64_t slotBeginRow) const;

  Device &dev_;
  DevicePtr arena_;
  int64_t arenaBytes_ = 0, accesses_ = 0;
  Kind kind_ = Kind::Flat;
  int64_t blockSize_ = 0, window_ = 0;
  // Flat PAGE rows.
  int64_t pageRegion_ = 0, pageEntryBytes_ = 0, pageRowBytes_ = 0;
  // Window PAGE classes (flat, beside the full class): a query reads the
  // class's rows of [firstAttended(pos), pos] through its own table.
  struct PageWindow {
    AttentionPattern pattern;
    int64_t region = 0, entryBytes = 0, rowBytes = 0;
  };
  std::vector<PageWindow> pageWindows_;
  Result<int64_t> windowRow(const Request &r, size_t c, int64_t pos) const;
  // Flat state: cells in every STATE class of the request's group.
  struct StateCell {
    int64_t region = 0;     // the class's region
    int64_t groupBytes = 0; // one group of the class: entries_per_req entries
    int64_t offset = 0;     // from the group's start
    int64_t ring = 0;       // conv cells after the recurrent one
    int64_t at(int32_t stateId) const {
      return region + int64_t(stateId) * groupBytes + offset;
    }
  };
  std::vector<StateCell> stateCells_;
  // Row space.
  std::optional<RowSpaceGeometry> geo_;
  int64_t plane0_ = 0, row0_ = 0; // plane 0's offset and row bytes
  struct WindowProbe {
    int64_t layer = 0; // global layer (for its base row), or -1: field window
    WindowParams params;
    int64_t baseRow = 0;  // the layer's base row (view units)
    int64_t planeOffset = 0, viewRowBytes = 0;
  };
  std::vector<WindowProbe> windows_;
  struct CompressProbe {
    int64_t ratio = 0, baseRow = 0;
    bool overlapping = false;
    /// Its state cells: (plane, offset from the slot start) per field.
    std::vector<std::pair<int64_t, int64_t>> cells;
  };
  std::vector<CompressProbe> compressors_;
  std::vector<int64_t> planeOffsets_, planeRowBytes_;
};

} // namespace serve
} // namespace poolrt

#endif
