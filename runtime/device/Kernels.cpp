//===- Kernels.cpp - The artifact's kernels and a validating launcher -----===//

#include "poolrt/Kernels.h"

#include <algorithm>
#include <unordered_set>

namespace poolrt {

Result<KernelSet> KernelSet::fromArtifact(const Artifact &artifact) {
  auto layout = readSolvedLayout(artifact);
  if (!layout.ok())
    return layout.error();
  return fromLayout(*layout);
}

KernelSet KernelSet::fromLayout(const SolvedLayout &layout) {
  KernelSet set;
  set.list = layout.kernels;
  set.allocation = layout.allocationBytes;
  set.fp = layout.fingerprint;
  set.modelName = layout.model;
  return set;
}

const KernelInfo *KernelSet::byName(const std::string &name) const {
  return findKernel(list, &KernelInfo::name, name);
}

const KernelInfo *KernelSet::byKind(const std::string &kind) const {
  return findKernel(list, &KernelInfo::kind, kind);
}

KernelLauncher::~KernelLauncher() {
  if (idsBuffer)
    (void)dev.release(idsBuffer);
}

Status KernelLauncher::run(const KernelInfo &k, const std::vector<int32_t> &ids,
                           DevicePtr staging) {
  size_t perItem = k.idTuple.size();
  if (perItem == 0 || perItem != size_t(k.idsPerItem))
    return Error::invalid(k.name + ": the kernel description has no id tuple");
  if (ids.empty() || ids.size() % perItem != 0)
    return Error::invalid(k.name + ": " + std::to_string(ids.size()) +
                          " ids is not a whole number of items of " +
                          std::to_string(perItem));
  int64_t items = int64_t(ids.size() / perItem);
  // Per entity (positions naming the same entity share its id space), the
  // ids this batch writes and reads.
  std::vector<std::string> entities;
  std::vector<size_t> entityOf(perItem);
  for (size_t p = 0; p < perItem; ++p) {
    auto it = std::find(entities.begin(), entities.end(), k.idTuple[p].entity);
    entityOf[p] = size_t(it - entities.begin());
    if (it == entities.end())
      entities.push_back(k.idTuple[p].entity);
  }
  std::vector<std::unordered_set<int32_t>> written(entities.size()),
      read(entities.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const KernelIdSlot &slot = k.idTuple[i % perItem];
    int32_t id = ids[i];
    if (id < 0 || id >= slot.idMax)
      return Error{ErrorKind::Lookup,
                   k.name + ": " + slot.entity + " id " + std::to_string(id) +
                       " outside 0.." + std::to_string(slot.idMax) + " (item " +
                       std::to_string(i / perItem) + ", position " +
                       std::to_string(i % perItem) + ")"};
    size_t e = entityOf[i % perItem];
    if (slot.written && !written[e].insert(id).second)
      return Error::invalid(k.name + ": " + slot.entity + " " +
                            std::to_string(id) +
                            " is written twice in one batch");
    if (slot.read)
      read[e].insert(id);
  }
  for (size_t e = 0; e < entities.size(); ++e)
    for (int32_t id : written[e])
      if (read[e].count(id))
        return Error::invalid(k.name + ": " + entities[e] + " " +
                              std::to_string(id) +
                              " is both read and written in one batch");
  if ((k.srcIsStaging || k.dstIsStaging) && !staging)
    return Error::invalid(k.name + ": needs a staging buffer of " +
                          std::to_string(items * k.stagingStride) + " bytes");
  size_t bytes = ids.size() * sizeof(int32_t);
  if (bytes > idsCapacity) {
    if (idsBuffer)
      (void)dev.release(idsBuffer);
    idsBuffer = DevicePtr{};
    size_t cap = std::max<size_t>(bytes, 4096);
    auto b = dev.allocate(cap);
    if (!b.ok())
      return b.error();
    idsBuffer = *b;
    idsCapacity = cap;
  }
  Status s = dev.copyToDevice(idsBuffer, ids.data(), bytes);
  if (!s.ok())
    return s;
  int64_t gridX = launchGridX(k, items);
  return dev.launch(k.name, arena, staging, idsBuffer, items, gridX);
}

} // namespace poolrt
