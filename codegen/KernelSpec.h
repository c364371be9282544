//===- KernelSpec.h - One description per data-movement kernel --*- C++ -*-===//
//
// Every kernel poolc generates moves bytes between two spaces (the arena,
// i.e. the one allocation carved by pool-plan-pools, and a staging buffer)
// as a batch of items. Item i reads the segments of one entry (a slot, a
// block, a group) and writes them to another entry or to staging slot i.
// A segment is
//     src = src_base + src_id * src_stride + src_off, bytes long
//     dst = dst_base + dst_id * dst_stride + dst_off
// with the ids taken from the kernel's id list: item i owns the tuple
// ids[i*N .. i*N+N) (N = idsPerItem), and each side of a segment reads one
// position of it (or uses i itself on the staging side). Most kernels name
// one entry per side; the PAGE-unit image kernels name a slot and the
// checkpoint's units, and each segment picks its unit from the tuple. The
// solved layout fixes every offset, stride, length and tuple position at
// compile time; KernelGen lowers this one description to AMDGPU, NVPTX and
// the host CPU.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_CODEGEN_KERNELSPEC_H
#define POOL_CODEGEN_KERNELSPEC_H

#include "dialects/Pool/IR/PoolOps.h"

#include "mlir/Support/LLVM.h"
#include "poolrt/SolvedLayout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::pool {

enum class Space { Arena, Staging };
/// Where an item's id on one side comes from.
enum class IdSource {
  PairFirst,  // ids[2*i]     (copies: the source entry)
  PairSecond, // ids[2*i + 1] (copies: the destination entry)
  List,       // ids[i]       (gather source / scatter destination)
  ItemIndex,  // i            (the staging side)
  Tuple,      // ids[i*N + k] with k the segment's srcIdIndex/dstIdIndex
};

struct CopySegment {
  int64_t srcOff = 0, srcStride = 0;
  int64_t dstOff = 0, dstStride = 0;
  int64_t bytes = 0;
  std::string what; // e.g. "plane nope slot", for manifests and comments
  // The tuple positions of a Tuple side (ignored on the other sources).
  int srcIdIndex = 0, dstIdIndex = 0;
};

/// One position of an item's id tuple: what it names, its range, and
/// whether the kernel reads or writes the entity it names.
struct IdSlot {
  std::string entity; // "slot", "block", "group", "entry"
  int64_t maxId = 0;  // ids lie in [0, maxId)
  bool read = false, written = false;
};

/// Vectors a GPU thread loads before it stores them, unless poolc's
/// --gpu-unroll says otherwise (the host lowering loads one at a time).
/// 2 measured best on the H200 at the runtime's grid (bench/RESULTS.md,
/// 2026-12-03): 4 and 8 help the big copies and lose more on the blocks.
constexpr unsigned kGpuUnroll = 2;
/// A kernel that walks a segment table (usesSegmentTable) walks it in
/// tiles of 1,024 vectors (16 KiB), each inside one segment (tableWalk 2),
/// dealt round the item's blocks, four vectors in flight per thread: on
/// an H100 V4 Pro's image store, restore, gather and scatter moved at
/// 93.8, 94.7, 91.5 and 92.7% of a memcpy at the launcher's grid, against
/// 91.5, 92.0, 90.8 and 91.9% for tiles of 4,096 vectors that cross
/// segments (bench/RESULTS.md, 2026-12-06; tiles of 2,048 and 4,096 inside
/// segments measured within 0.5 points of 1,024). The crossing tiles had
/// beaten one chunk per block on the H200 by 3-6 points (2026-12-04).
constexpr int64_t kGpuTileVectors = 1024;
constexpr unsigned kGpuTableUnroll = 4;
/// KernelSpec::streaming unless poolc's --gpu-streaming says otherwise:
/// off, it measured no different on the H200 (bench/RESULTS.md).
constexpr bool kGpuStreaming = false;

struct KernelSpec;
/// poolc's kernel knobs (--gpu-unroll, --gpu-streaming), for measuring the
/// kernels: each, when given, replaces the compiler's choice in every spec.
struct KernelTuning {
  unsigned unroll = 0; // 0: the compiler's choice
  int streaming = -1;  // -1: the compiler's choice, else 0 or 1
  int segmentTable = -1; // -1: the compiler's choice, 0 never, 1 always
  unsigned minBlocks = 0; // 0: the compiler's choice, else 1..32
  int tableWalk = -1;     // -1: the compiler's choice, 0 chunks, 1 tiles, 2 run tiles
  int64_t tileVectors = 0; // 0: the compiler's choice, else a multiple of 256
  unsigned hostUnroll = 0; // 0: one vector at a time on the host, else 1..8
  unsigned hostThreads = 0; // 0: one thread on the host, else 1..1024
  void apply(std::vector<KernelSpec> &specs) const;
};

struct KernelSpec {
  std::string name;  // symbol name, e.g. "pool_slot_copy"
  std::string kind;  // slot_copy | group_copy | block_copy | image_gather |
                     // image_scatter | block_gather | block_scatter |
                     // image_store | image_restore
  std::string entity; // what the first id names: slot, group, block, entry
  Space src = Space::Arena, dst = Space::Arena;
  IdSource srcId = IdSource::PairFirst, dstId = IdSource::PairSecond;
  std::vector<CopySegment> segments;
  int64_t itemBytes = 0;   // bytes one item moves (sum of segment bytes)
  int64_t stagingStride = 0; // bytes per item in staging (0: no staging)
  int64_t maxId = 0;       // ids must lie in [0, maxId)
  unsigned vecBytes = 16;  // widest access every address and length allows
  /// GPU: vectors in flight per thread (1..8); 0, the compiler's choice
  /// (gpuUnrollOf: kGpuUnroll, kGpuTableUnroll for a table kernel).
  unsigned unroll = 0;
  /// GPU: each source byte is read once and never written while the kernel
  /// runs (the launcher refuses a batch that reads and writes one id), so
  /// loads are invariant and nontemporal, stores nontemporal: NVPTX reads
  /// through the non-coherent path (ld.global.nc), AMDGPU sets nt (its
  /// buffer-descriptor kernels keep the default caching).
  bool streaming = kGpuStreaming;
  bool rebase = false;     // AMD: a side spans past 4 GiB: per-item buffer descriptors
  /// GPU: 256-thread blocks per multiprocessor the backend must leave
  /// registers for (NVPTX .minnctapersm, AMDGPU waves per EU: a block is
  /// four wave64s, one per SIMD); 0 lets the backend choose.
  unsigned minBlocksPerSM = 0;
  /// Walk a constant table of the segments (one loop nest) instead of one
  /// unrolled loop per segment: -1 when the kernel has at least
  /// kSegmentTableMin segments (checkpoint images), else 0 or 1 as poolc's
  /// --gpu-segment-table says. The byte movement is the same either way.
  int segmentTable = -1;
  /// How a block walks a segment table: 1, tiles of tileVectors vectors
  /// dealt round the item's blocks (the host's one "thread" walks the same
  /// tiles); 2, the same with every tile inside one segment (a segment's
  /// last tile may be short; its vectors are loaded under bound checks,
  /// still all before the stores); 0, one contiguous chunk of the item per
  /// block (on the host, the whole item).
  int tableWalk = 2;
  int64_t tileVectors = kGpuTileVectors; // a multiple of 256
  /// The host lowering's vectors in flight (1: one load, one store; more
  /// only for pool-kernel-check, so the unrolled and bound-checked paths
  /// the GPUs take are checked against the reference on the host too).
  unsigned hostUnroll = 1;
  /// The host lowering's threads a block, played one after another over a
  /// segment table's spans (1: one thread; more only for pool-kernel-check).
  unsigned hostThreads = 1;
  /// The item's id tuple, one entry per position (idsPerItem() of them);
  /// filled for every kernel (deriveKernelSpecs), from srcId/dstId unless
  /// the sides are Tuple.
  std::vector<IdSlot> idTuple;
  bool pairs() const { return srcId == IdSource::PairFirst; }
  int idsPerItem() const { return int(idTuple.size()); }
};

/// The tuple position one side of `seg` reads its id from, or -1 where the
/// side uses the item index (staging). The one rule KernelGen, the manifest
/// and the checkers share.
int idIndex(const KernelSpec &k, const CopySegment &seg, bool src);

/// The kernels of a planned model (run the poolc pipeline first); fails,
/// with the error on the model, if it is not planned.
FailureOr<std::vector<KernelSpec>> deriveKernelSpecs(ModelOp model);

/// The runtime's typed form of one kernel (SolvedLayout::kernels): what the
/// manifest carries of it.
poolrt::KernelInfo kernelInfo(const KernelSpec &spec);

constexpr unsigned kBlockThreads = 256;

/// Kernels with at least this many segments walk a segment table unless
/// told otherwise: per-segment loops made a four-target V4-Pro compile
/// 11.0 s on a 2-core box (122-141 segments per image kernel), the tables
/// 0.7-1.0 s, and on the H200 the tile-walked table moved Pro's image store
/// and restore at 86% of a memcpy against the loops' 65% at the launcher's
/// grid. Below this the loops win on the GPU (V4 Flash's 17-segment images:
/// 90% against 88% tile-walked) and compile fast, so the slot, group and
/// block kernels (1 to 3 segments) and the small images keep their
/// constants in the code (bench/RESULTS.md, 2026-12-04).
constexpr size_t kSegmentTableMin = 32;
inline bool usesSegmentTable(const KernelSpec &k) {
  return k.segmentTable >= 0 ? k.segmentTable != 0
                             : k.segments.size() >= kSegmentTableMin;
}
/// The GPU unroll a kernel gets: its own when tuned, else the table or
/// loop kernels' default.
inline unsigned gpuUnrollOf(const KernelSpec &k) {
  if (k.unroll)
    return k.unroll;
  return usesSegmentTable(k) ? kGpuTableUnroll : kGpuUnroll;
}

} // namespace mlir::pool

#endif // POOL_CODEGEN_KERNELSPEC_H
