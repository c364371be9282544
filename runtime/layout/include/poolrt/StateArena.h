//===- StateArena.h - Per-request state entry layout ------------*- C++ -*-===//
//
// A STATE entry (one request's recurrent/compressor state) is a byte arena of
// declared fields. Layout, shared by sizing, the compiler report, the
// artifact and the runtime allocation (one expression, or the byte budget and
// the allocation disagree):
//   * entry-major: entry i occupies [i*slot_stride, i*slot_stride+entry_bytes)
//   * inside an entry, fields in declared order, each layer-major
//   * every field starts on a 256 B boundary (or its own stronger alignment),
//     so a view that retypes the bytes to the field's dtype starts on an
//     itemsize multiple and any 16 B vector access is aligned.
// Silent failure modes this guards: a slot stride that is not a multiple of
// the alignment puts entries past the first off the retype boundary; a
// carved buffer whose own offset is forgotten writes through the front of
// the allocation (a real reference bug).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_STATEARENA_H
#define POOLRT_STATEARENA_H

#include "poolrt/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace poolrt {

constexpr int64_t kArenaAlign = 256;

/// Element types a field or plane may declare.
enum class DType { F64, F32, F16, BF16, FP8E4M3, FP8E5M2, I64, I32, I8, U8 };

/// Canonical name ("f32", "bf16", "fp8_e4m3", ...).
const char *dtypeName(DType t);
/// Accepts canonical names and the usual aliases ("float32", "bfloat16",
/// "fp8", "float8_e4m3fn", "uint8", ...).
std::optional<DType> parseDType(const std::string &name);
int64_t dtypeSize(DType t);
/// The comma-separated list of accepted canonical names (for diagnostics).
const char *dtypeNameList();
/// Whether `fill` can be stored exactly in `t` (fp8 only holds 0 here;
/// integers need an integral value in range; floats accept +-inf).
bool fillRepresentable(DType t, double fill);

struct StateField {
  std::string name;
  int64_t layers = 0;
  std::vector<int64_t> shape; // what one (layer, entry) pair holds
  DType dtype = DType::F32;
  double fill = 0.0;
  int64_t align = 0; // extra start alignment inside an entry; 0 or k*256
  bool inCheckpoint = true;

  /// Validates: name non-empty, layers >= 0, dims >= 0, align a non-negative
  /// multiple of 256, and the byte size fits in 64 bits.
  static Result<StateField> make(std::string name, int64_t layers,
                                 std::vector<int64_t> shape, DType dtype,
                                 double fill = 0.0, int64_t align = 0,
                                 bool inCheckpoint = true);

  int64_t perLayerNumel() const;  // valid after make()
  int64_t bytesPerEntry() const;  // layers * numel * itemsize
};

struct FieldExtent {
  std::string name;
  int64_t begin = 0;
  int64_t end = 0;
};

/// The single walk that places fields inside an entry.
Result<std::vector<FieldExtent>>
fieldExtents(const std::vector<StateField> &fields);
/// Bytes of one entry: end of the last field, rounded up to 256 (0 if none).
Result<int64_t> entryBytesFor(const std::vector<StateField> &fields);

/// (offset, nbytes) runs a checkpoint image must carry: consecutive carried
/// fields merge (padding between them rides along), a non-carried field
/// breaks a run, zero-length runs are dropped.
Result<std::vector<std::pair<int64_t, int64_t>>>
checkpointRangesFor(const std::vector<StateField> &fields);

struct RegionPlan {
  std::vector<int64_t> offsets;
  int64_t total = 0;
};
/// Pack regions back to back, each start and the total 256-aligned, so
/// planning two groups separately and shifting the second by the first's
/// total equals planning the concatenation.
Result<RegionPlan> planRegions(const std::vector<int64_t> &sizes);

/// Split fields over planes of different row widths in the fewest rows: exact
/// search over P^n assignments (field k -> digit k of the code in base P,
/// least significant first); the first assignment with the fewest rows wins.
/// Refuses more than 65,536 assignments.
struct PlaneSplit {
  std::vector<std::vector<size_t>> groups; // field indices per plane
  int64_t rows = 0;
};
/// `allowed[k][p]` (optional) says whether field k may go to plane p (a
/// window carried as a field needs a plane whose width divides its row);
/// assignments that break it are skipped, the rest keep the order.
Result<PlaneSplit>
planFieldPlanes(const std::vector<StateField> &fields,
                const std::vector<int64_t> &planeRowBytes,
                const std::vector<std::vector<bool>> *allowed = nullptr);

/// A strided view of one field across every entry of an arena, in elements of
/// the field's dtype: shape [layers, entries, *shape].
struct FieldView {
  std::vector<int64_t> shape;
  std::vector<int64_t> strideElems;
  int64_t storageOffsetElems = 0;
  DType dtype = DType::F32;
};

/// The arithmetic of a state arena over a byte buffer (host or device):
/// validation, strides, byte spans. It owns no memory.
class StateArenaLayout {
public:
  /// `slotStride` defaults to entry_bytes; `liveEntries` to `entries`;
  /// `bufOffsetBytes` is where the arena starts inside a larger allocation
  /// (must be a multiple of the arena alignment); `bufBytes`, if given, is
  /// the size available from that offset.
  static Result<StateArenaLayout>
  create(std::vector<StateField> fields, int64_t entries,
         std::optional<int64_t> slotStride = std::nullopt,
         std::optional<int64_t> liveEntries = std::nullopt,
         int64_t bufOffsetBytes = 0,
         std::optional<int64_t> bufBytes = std::nullopt);

  const std::vector<StateField> &fields() const { return flds; }
  const std::vector<FieldExtent> &extents() const { return ext; }
  int64_t entries() const { return n; }
  int64_t liveEntries() const { return live; }
  int64_t entryBytes() const { return entryB; }
  int64_t slotStride() const { return stride; }
  int64_t alignment() const { return align; }
  /// (entries-1)*slot_stride + entry_bytes (0 entries -> 0).
  int64_t totalBytes() const { return total; }
  /// Byte offset of a field from the start of an entry.
  Result<int64_t> fieldOffset(const std::string &name) const;
  Result<FieldView> view(const std::string &name) const;
  /// Entries a fill touches: the top `live` ones (pools grow downward; lower
  /// entries belong to whatever shares the plane).
  std::pair<int64_t, int64_t> liveRange() const { return {n - live, n}; }
  /// Write each field's fill value into the live entries of `arenaBase`
  /// (which points at the arena's first byte, i.e. buf + bufOffsetBytes).
  void fillLive(uint8_t *arenaBase) const;

private:
  std::vector<StateField> flds;
  std::vector<FieldExtent> ext;
  int64_t n = 0, live = 0, entryB = 0, stride = 0, align = kArenaAlign,
          total = 0, bufOffset = 0;
};

} // namespace poolrt

#endif // POOLRT_STATEARENA_H
