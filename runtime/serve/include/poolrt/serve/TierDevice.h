//===- TierDevice.h - The device side of the offload tier -------*- C++ -*-===//
//
// What a tier object is on the device (specs/tier.md): a save gathers one
// chunk's PAGE KV with the artifact's block_gather and the boundary's
// checkpoint (a copy class's image_gather, or every fork class's group
// span) into one object; a load scatters a decoded object back with
// block_scatter and image_scatter (or the group spans). The engine and the
// tier's device benchmark (bench/tier/tier_load.cpp) share this, so what
// is measured is what serves.
//
// Host memory: the tier's host level keeps its objects in the device's
// page-locked memory (Device::allocateHost, through hostMemoryOf), so a
// load is one copy per object's KV at link speed, not a staged copy of
// pageable memory.
//
// Lifetime: a TierDevice and every TierHostMemory made from a device must
// not outlive that device. Calls come from the step thread only (device
// memory never crosses to the transfer thread); hostMemoryOf's allocator
// may be called from any thread.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_TIERDEVICE_H
#define POOLRT_SERVE_TIERDEVICE_H

#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/SolvedLayout.h"
#include "poolrt/Tier.h"

#include <memory>
#include <string>
#include <vector>

namespace poolrt {

/// The device's host memory (page-locked on a GPU) as the tier's.
std::shared_ptr<TierHostMemory> hostMemoryOf(Device &device);

class TierDevice {
public:
  /// The kernels and staging of objects of `chunkBlocks` blocks of `geo`
  /// (tierGeometryOf) in `layout`. Invalid when the artifact lacks a
  /// kernel the geometry needs or their sizes disagree with it.
  static Result<std::unique_ptr<TierDevice>> create(const SolvedLayout &layout, Device &device,
                                                    KernelLauncher &launcher,
                                                    DevicePtr arenaBase,
                                                    const TierGeometry &geo,
                                                    int64_t chunkBlocks);
  ~TierDevice();
  TierDevice(const TierDevice &) = delete;
  TierDevice &operator=(const TierDevice &) = delete;

  const TierGeometry &geometry() const { return geo_; }
  int64_t chunkBlocks() const { return chunkBlocks_; }
  /// The bytes of an object with a checkpoint (the largest).
  int64_t objectBytes() const;

  /// One object of the blocks `blockIds` (chunkBlocks of them, in order)
  /// and, when `stateId >= 0`, the checkpoint of slot / group `stateId`
  /// (its kernel id), sealed under `key`.
  Result<std::string> save(const TierKey &key, const std::vector<int32_t> &blockIds,
                           int32_t stateId);
  /// Blocks [skip, chunkBlocks) of a decoded object into `blockIds` (one
  /// id per block loaded).
  struct KvLoad {
    const TierObjectView *object = nullptr;
    int64_t skip = 0;
    std::vector<int32_t> blockIds;
  };
  /// The KV of a hit's objects: one host-to-device copy per object into
  /// the staging, back to back, and one block_scatter per staging's worth
  /// (kStagingBytes, at least one object), not a copy and a kernel each.
  Status loadKv(const std::vector<KvLoad> &loads);
  Status loadKv(const TierObjectView &object, int64_t skip,
                const std::vector<int32_t> &blockIds);
  /// What one scatter of loadKv may cover, in bytes (rounded down to whole
  /// blocks, at least one object).
  static constexpr int64_t kStagingBytes = int64_t(32) << 20;
  int64_t stagingBlocks() const { return stagingBlocks_; }
  /// The object's checkpoint into slot / group `stateId`. Invalid when the
  /// object has none.
  Status loadCheckpoint(const TierObjectView &object, int32_t stateId);

private:
  TierDevice(Device &d, KernelLauncher &l) : device_(d), launcher_(l) {}
  Device &device_;
  KernelLauncher &launcher_;
  DevicePtr arenaBase_{};
  TierGeometry geo_;
  int64_t chunkBlocks_ = 0, stagingBlocks_ = 0;
  const KernelInfo *blockGather_ = nullptr, *blockScatter_ = nullptr,
                   *imageGather_ = nullptr, *imageScatter_ = nullptr;
  DevicePtr kvStaging_{}, imageStaging_{};
  /// Fork classes: (region offset, group bytes) of each class of the
  /// request's group, the order a checkpoint concatenates them.
  std::vector<std::pair<uint64_t, int64_t>> groupSpans_;
};

} // namespace poolrt

#endif // POOLRT_SERVE_TIERDEVICE_H
