//===- Kernels.h - The artifact's kernels and a validating launcher -*- C++
//-*-===//
//
// KernelSet holds the kernel descriptions of the artifact's SolvedLayout (one
// source: the compiler wrote them, readSolvedLayout checked them). KernelLauncher uploads a batch's ids and
// launches on a Device after checking what a kernel cannot: every id in
// its position's range, and no entity written twice or both read and
// written in one batch (the items run concurrently on a GPU, so either
// would race silently and leave whichever write landed last).
//
// An item is a tuple of idsPerItem ids: (source, destination) for a copy,
// one entry for a gather or scatter, (slot, unit_0, ..., unit_{n-1}) for a
// PAGE-unit image store or restore. Each position names one entity (slot,
// block, group, entry) that the kernel reads or writes; a segment's side
// takes its id from one position, or uses the item index on the staging
// side.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_KERNELS_H
#define POOLRT_KERNELS_H

#include "poolrt/Device.h"
#include "poolrt/SolvedLayout.h"

#include <string>
#include <vector>

namespace poolrt {

class KernelSet {
public:
  /// The kernels of the artifact's manifest (readSolvedLayout).
  static Result<KernelSet> fromArtifact(const Artifact &artifact);
  /// The kernels of a layout already read.
  static KernelSet fromLayout(const SolvedLayout &layout);
  const KernelInfo *byName(const std::string &name) const;
  const KernelInfo *byKind(const std::string &kind) const;
  const std::vector<KernelInfo> &kernels() const { return list; }
  int64_t allocationBytes() const { return allocation; }
  const std::string &fingerprint() const { return fp; }
  const std::string &model() const { return modelName; }

  // Copied from the SolvedLayout.
  std::vector<KernelInfo> list;
  int64_t allocation = 0;
  std::string fp, modelName;
};

class KernelLauncher {
public:
  KernelLauncher(Device &device, DevicePtr arena) : dev(device), arena(arena) {}
  ~KernelLauncher();
  /// Launch `k` on a batch. `ids` holds idsPerItem ids per item, item-major;
  /// `staging` must hold items * stagingStride bytes when the kernel has a
  /// staging side. Refused (nothing launched): a partial tuple, an id
  /// outside its position's range, an entity written twice in the batch, or
  /// one both read and written.
  Status run(const KernelInfo &k, const std::vector<int32_t> &ids,
             DevicePtr staging = DevicePtr{});

private:
  Device &dev;
  DevicePtr arena;
  DevicePtr idsBuffer;
  size_t idsCapacity = 0;
};

} // namespace poolrt

#endif
