//===- KernelSpec.h - One description per data-movement kernel --*- C++ -*-===//
//
// Every kernel poolc generates moves bytes between two spaces (the arena,
// i.e. the one allocation carved by pool-plan-pools, and a staging buffer)
// as a batch of items. Item i reads the segments of one entry (a slot, a
// block, a group) and writes them to another entry or to staging slot i.
// A segment is
//     src = src_base + src_id * src_stride + src_off, bytes long
//     dst = dst_base + dst_id * dst_stride + dst_off
// with the ids taken from the kernel's id list. The solved layout fixes
// every offset, stride and length at compile time; KernelGen lowers this one
// description to AMDGPU, NVPTX and the host CPU.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_CODEGEN_KERNELSPEC_H
#define POOL_CODEGEN_KERNELSPEC_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

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
};

struct CopySegment {
  int64_t srcOff = 0, srcStride = 0;
  int64_t dstOff = 0, dstStride = 0;
  int64_t bytes = 0;
  std::string what; // e.g. "plane nope slot", for manifests and comments
};

struct KernelSpec {
  std::string name;  // symbol name, e.g. "pool_slot_copy"
  std::string kind;  // slot_copy | group_copy | block_copy | image_gather | image_scatter | block_gather | block_scatter
  std::string entity; // what an id names: "slot", "group", "block", "entry"
  Space src = Space::Arena, dst = Space::Arena;
  IdSource srcId = IdSource::PairFirst, dstId = IdSource::PairSecond;
  std::vector<CopySegment> segments;
  int64_t itemBytes = 0;   // bytes one item moves (sum of segment bytes)
  int64_t stagingStride = 0; // bytes per item in staging (0: no staging)
  int64_t maxId = 0;       // ids must lie in [0, maxId)
  unsigned vecBytes = 16;  // widest access every address and length allows
  bool rebase = false;     // AMD: a side spans past 4 GiB: per-item buffer descriptors
  bool pairs() const { return srcId == IdSource::PairFirst; }
};

/// The kernels of a planned module (run the poolc pipeline first).
std::vector<KernelSpec> deriveKernelSpecs(ModuleOp module);

/// The manifest entry of one kernel: name, argument signature, launch
/// shape, segments.
llvm::json::Value kernelManifest(const KernelSpec &spec);

constexpr unsigned kBlockThreads = 256;

} // namespace mlir::pool

#endif // POOL_CODEGEN_KERNELSPEC_H
