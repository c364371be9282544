//===- Kernels.h - The artifact's kernels and a validating launcher -*- C++ -*-===//
//
// KernelSet reads the kernel descriptions from the artifact's manifest (one
// source: the compiler wrote them). KernelLauncher uploads a batch's ids and
// launches on a Device after checking what a kernel cannot: every id in
// range, and no entry written twice or both read and written in one batch
// (the items run concurrently on a GPU).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_KERNELS_H
#define POOLRT_KERNELS_H

#include "poolrt/Device.h"

#include <string>
#include <vector>

namespace poolrt {

struct KernelSegment {
  int64_t srcOff = 0, srcStride = 0, dstOff = 0, dstStride = 0, bytes = 0;
};

struct KernelInfo {
  std::string name, kind, entity;
  int idsPerItem = 0;        // 2: (source, destination) pairs; 1: a list
  int64_t idMax = 0;         // ids lie in [0, idMax)
  int64_t itemBytes = 0;
  int64_t stagingStride = 0; // 0: no staging side
  bool srcIsStaging = false, dstIsStaging = false;
  std::vector<KernelSegment> segments;
};

class KernelSet {
public:
  static Result<KernelSet> fromArtifact(const Artifact &artifact);
  const KernelInfo *byName(const std::string &name) const;
  const KernelInfo *byKind(const std::string &kind) const;
  const std::vector<KernelInfo> &kernels() const { return list; }
  int64_t allocationBytes() const { return allocation; }
  const std::string &fingerprint() const { return fp; }
  const std::string &model() const { return modelName; }

  // Filled by the manifest parser.
  std::vector<KernelInfo> list;
  int64_t allocation = 0;
  std::string fp, modelName;
};

class KernelLauncher {
public:
  KernelLauncher(Device &device, DevicePtr arena) : dev(device), arena(arena) {}
  ~KernelLauncher();
  /// Launch `k` on a batch. `ids` holds idsPerItem ids per item; `staging`
  /// must hold items * stagingStride bytes when the kernel has a staging side.
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
