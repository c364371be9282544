//===- TierDevice.cpp - Gathering and loading tier objects on a device ----===//

#include "poolrt/serve/TierDevice.h"

#include <algorithm>

namespace poolrt {

namespace {

class DeviceHostMemory final : public TierHostMemory {
public:
  explicit DeviceHostMemory(Device &d) : device_(d) {}
  std::string name() const override { return device_.hostMemoryKind(); }
  void *allocate(size_t bytes) override { return device_.allocateHost(bytes); }
  void release(void *p) override { device_.releaseHost(p); }

private:
  Device &device_;
};

} // namespace

std::shared_ptr<TierHostMemory> hostMemoryOf(Device &device) {
  return std::make_shared<DeviceHostMemory>(device);
}

Result<std::unique_ptr<TierDevice>> TierDevice::create(const SolvedLayout &L, Device &device,
                                                       KernelLauncher &launcher,
                                                       DevicePtr arenaBase,
                                                       const TierGeometry &geo,
                                                       int64_t chunkBlocks) {
  if (chunkBlocks < 1 || geo.kvBlockBytes < 1 ||
      chunkBlocks > (int64_t(1) << 40) / geo.kvBlockBytes)
    return Error::invalid("tier: objects of " + std::to_string(chunkBlocks) + " blocks of " +
                          std::to_string(geo.kvBlockBytes) + " bytes");
  std::unique_ptr<TierDevice> t(new TierDevice(device, launcher));
  t->arenaBase_ = arenaBase;
  t->geo_ = geo;
  t->chunkBlocks_ = chunkBlocks;
  t->blockGather_ = L.kernelByKind("block_gather");
  t->blockScatter_ = L.kernelByKind("block_scatter");
  if (!t->blockGather_ || !t->blockScatter_)
    return Error::invalid("tier: the artifact has no block_gather / block_scatter kernel");
  if (t->blockGather_->stagingStride != geo.kvBlockBytes ||
      t->blockScatter_->stagingStride != geo.kvBlockBytes)
    return Error::invalid("tier: the block kernels' staging stride is not a block's bytes");
  // The same choice as tierGeometryOf: a copy class checkpoints as its
  // PAGE-unit image, fork classes as their group spans.
  std::vector<const SolvedClass *> state = L.groupClasses();
  if (geo.stateful()) {
    if (!state.empty() && state[0]->transfer->kind == TransferKind::Copy) {
      t->imageGather_ = L.kernelByKind("image_gather");
      t->imageScatter_ = L.kernelByKind("image_scatter");
      if (!t->imageGather_ || !t->imageScatter_ ||
          t->imageGather_->stagingStride != geo.checkpointBytes ||
          t->imageScatter_->stagingStride != geo.checkpointBytes)
        return Error::invalid("tier: the artifact has no image_gather / image_scatter "
                              "kernel of the checkpoint's size");
    } else {
      int64_t sum = 0;
      for (const SolvedClass *c : state) {
        if (c->transfer->kind != TransferKind::Fork)
          continue;
        const KernelInfo *k = L.groupCopyKernelOf(c->name);
        if (!k)
          return Error::invalid("tier: fork STATE class '" + c->name + "' has no group_copy kernel");
        t->groupSpans_.push_back({uint64_t(c->regionOffset.value_or(0)), k->itemBytes});
        sum += k->itemBytes;
      }
      if (sum != geo.checkpointBytes)
        return Error::invalid("tier: the fork classes' groups are " + std::to_string(sum) +
                              " bytes, the checkpoint " + std::to_string(geo.checkpointBytes));
    }
  }
  t->stagingBlocks_ = std::max(chunkBlocks, kStagingBytes / geo.kvBlockBytes);
  auto kv = device.allocate(uint64_t(t->stagingBlocks_ * geo.kvBlockBytes));
  if (!kv.ok())
    return kv.error();
  t->kvStaging_ = *kv;
  if (t->imageGather_) {
    auto img = device.allocate(uint64_t(geo.checkpointBytes));
    if (!img.ok())
      return img.error();
    t->imageStaging_ = *img;
  }
  return t;
}

TierDevice::~TierDevice() {
  if (kvStaging_)
    (void)device_.release(kvStaging_);
  if (imageStaging_)
    (void)device_.release(imageStaging_);
}

int64_t TierDevice::objectBytes() const {
  return kTierHeaderBytes + chunkBlocks_ * geo_.kvBlockBytes + geo_.checkpointBytes;
}

Result<std::string> TierDevice::save(const TierKey &key, const std::vector<int32_t> &blockIds,
                                     int32_t stateId) {
  if (int64_t(blockIds.size()) != chunkBlocks_)
    return Error::invalid("tier save: " + std::to_string(blockIds.size()) + " blocks, an object has " +
                          std::to_string(chunkBlocks_));
  if (stateId >= 0 && !geo_.stateful())
    return Error::invalid("tier save: a checkpoint of a stateless geometry");
  int64_t kvBytes = chunkBlocks_ * geo_.kvBlockBytes;
  int64_t ckBytes = stateId >= 0 ? geo_.checkpointBytes : 0;
  // The payload is copied from the device into its place in the object.
  std::string obj(size_t(kTierHeaderBytes + kvBytes + ckBytes), '\0');
  char *kv = &obj[size_t(kTierHeaderBytes)];
  Status k = launcher_.run(*blockGather_, blockIds, kvStaging_);
  if (!k.ok())
    return k.error();
  Status c = device_.copyFromDevice(kv, kvStaging_, uint64_t(kvBytes));
  if (!c.ok())
    return c.error();
  if (stateId >= 0) {
    char *ck = kv + kvBytes;
    if (imageGather_) {
      Status g = launcher_.run(*imageGather_, {stateId}, imageStaging_);
      if (!g.ok())
        return g.error();
      Status d = device_.copyFromDevice(ck, imageStaging_, uint64_t(ckBytes));
      if (!d.ok())
        return d.error();
    } else {
      int64_t off = 0;
      for (const auto &[region, gb] : groupSpans_) {
        DevicePtr at = arenaBase_ + (region + uint64_t(stateId) * uint64_t(gb));
        Status d = device_.copyFromDevice(ck + off, at, uint64_t(gb));
        if (!d.ok())
          return d.error();
        off += gb;
      }
    }
  }
  sealTierObject(obj, key, chunkBlocks_, kvBytes);
  return obj;
}

Status TierDevice::loadKv(const TierObjectView &o, int64_t skip,
                          const std::vector<int32_t> &blockIds) {
  return loadKv({KvLoad{&o, skip, blockIds}});
}

Status TierDevice::loadKv(const std::vector<KvLoad> &loads) {
  int64_t kvb = geo_.kvBlockBytes;
  for (const KvLoad &l : loads) {
    int64_t n = int64_t(l.blockIds.size());
    if (!l.object || l.object->numBlocks != chunkBlocks_ || l.skip < 0 ||
        l.skip + n != chunkBlocks_ || int64_t(l.object->kv.size()) != chunkBlocks_ * kvb)
      return Error::invalid("tier load: blocks [" + std::to_string(l.skip) + ", " +
                            std::to_string(l.skip + n) + ") of an object of " +
                            std::to_string(l.object ? l.object->numBlocks : 0));
  }
  std::vector<int32_t> ids; // of the blocks staged so far
  auto flush = [&]() -> Status {
    if (ids.empty())
      return Status::success();
    Status k = launcher_.run(*blockScatter_, ids, kvStaging_);
    ids.clear();
    return k;
  };
  for (const KvLoad &l : loads) {
    int64_t n = int64_t(l.blockIds.size());
    if (int64_t(ids.size()) + n > stagingBlocks_)
      if (Status f = flush(); !f.ok())
        return f;
    if (n == 0)
      continue;
    // An object's blocks are contiguous in it: one copy into the staging.
    Status c = device_.copyToDevice(kvStaging_ + uint64_t(int64_t(ids.size()) * kvb),
                                    l.object->kv.data() + l.skip * kvb, uint64_t(n * kvb));
    if (!c.ok())
      return c;
    ids.insert(ids.end(), l.blockIds.begin(), l.blockIds.end());
  }
  return flush();
}

Status TierDevice::loadCheckpoint(const TierObjectView &o, int32_t stateId) {
  if (!geo_.stateful() || int64_t(o.checkpoint.size()) != geo_.checkpointBytes || stateId < 0)
    return Error::invalid("tier load: object " + o.key.text() + " has no checkpoint of " +
                          std::to_string(geo_.checkpointBytes) + " bytes to restore");
  if (imageScatter_) {
    Status c = device_.copyToDevice(imageStaging_, o.checkpoint.data(),
                                    uint64_t(geo_.checkpointBytes));
    if (!c.ok())
      return c;
    return launcher_.run(*imageScatter_, {stateId}, imageStaging_);
  }
  int64_t off = 0;
  for (const auto &[region, gb] : groupSpans_) {
    DevicePtr at = arenaBase_ + (region + uint64_t(stateId) * uint64_t(gb));
    Status w = device_.copyToDevice(at, o.checkpoint.data() + off, uint64_t(gb));
    if (!w.ok())
      return w;
    off += gb;
  }
  return Status::success();
}

} // namespace poolrt
