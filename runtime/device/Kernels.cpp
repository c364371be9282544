//===- Kernels.cpp - The artifact's kernels and a validating launcher -----===//

#include "poolrt/Kernels.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_set>

namespace poolrt {

static Result<KernelSet> parseManifest(const Artifact &artifact);

Result<KernelSet> KernelSet::fromArtifact(const Artifact &artifact) {
  // nlohmann::json throws on a key of the wrong type; a well-formed but
  // wrong manifest is an error value here, never an escaping exception.
  try {
    return parseManifest(artifact);
  } catch (const std::exception &e) {
    return Error::invalid(std::string("artifact manifest: ") + e.what());
  }
}

static Result<KernelSet> parseManifest(const Artifact &artifact) {
  const ArtifactSection *m = artifact.find("manifest");
  if (!m)
    return Error::invalid("artifact has no manifest section");
  nlohmann::json j = nlohmann::json::parse(m->data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error::invalid("artifact manifest is not a JSON object");
  if (j.value("format", "") != "poolpack-manifest/1")
    return Error::invalid("artifact manifest format '" + j.value("format", "") +
                          "', this runtime reads poolpack-manifest/1");
  KernelSet set;
  set.fp = j.value("fingerprint", "");
  set.modelName = j.value("model", "");
  auto layout = j.find("layout");
  if (layout == j.end() || !layout->is_object() ||
      !layout->contains("allocation_bytes") ||
      !(*layout)["allocation_bytes"].is_number_integer())
    return Error::invalid("artifact manifest lacks layout.allocation_bytes");
  set.allocation = (*layout)["allocation_bytes"].get<int64_t>();
  auto ks = j.find("kernels");
  if (ks == j.end() || !ks->is_array())
    return Error::invalid("artifact manifest lacks kernels");
  for (const nlohmann::json &k : *ks) {
    auto num = [&](const char *key) -> int64_t {
      auto it = k.find(key);
      return it != k.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
    };
    KernelInfo info;
    info.name = k.value("name", "");
    info.kind = k.value("kind", "");
    info.entity = k.value("entity", "");
    info.idsPerItem = int(num("ids_per_item"));
    info.itemBytes = num("item_bytes");
    info.stagingStride = num("staging_stride");
    auto range = k.find("id_range");
    info.idMax = range != k.end() && range->is_array() && range->size() == 2 &&
                         (*range)[1].is_number_integer()
                     ? (*range)[1].get<int64_t>()
                     : -1;
    info.srcIsStaging = k.contains("src") && k["src"].value("space", "") == "staging";
    info.dstIsStaging = k.contains("dst") && k["dst"].value("space", "") == "staging";
    if (info.name.empty() || info.idsPerItem < 1 || info.idsPerItem > 2 ||
        info.idMax < 0 || info.itemBytes < 0 || info.stagingStride < 0)
      return Error::invalid("artifact manifest: malformed kernel entry '" +
                            info.name + "'");
    for (const nlohmann::json &s : k.value("segments", nlohmann::json::array()))
      info.segments.push_back({s.value("src_off", int64_t(0)), s.value("src_stride", int64_t(0)),
                               s.value("dst_off", int64_t(0)), s.value("dst_stride", int64_t(0)),
                               s.value("bytes", int64_t(0))});
    set.list.push_back(std::move(info));
  }
  return set;
}

const KernelInfo *KernelSet::byName(const std::string &name) const {
  for (const KernelInfo &k : list)
    if (k.name == name)
      return &k;
  return nullptr;
}

const KernelInfo *KernelSet::byKind(const std::string &kind) const {
  for (const KernelInfo &k : list)
    if (k.kind == kind)
      return &k;
  return nullptr;
}

KernelLauncher::~KernelLauncher() {
  if (idsBuffer)
    (void)dev.release(idsBuffer);
}

Status KernelLauncher::run(const KernelInfo &k, const std::vector<int32_t> &ids,
                           DevicePtr staging) {
  if (ids.empty() || ids.size() % size_t(k.idsPerItem) != 0)
    return Error::invalid(k.name + ": " + std::to_string(ids.size()) +
                          " ids is not a whole number of items of " +
                          std::to_string(k.idsPerItem));
  int64_t items = int64_t(ids.size()) / k.idsPerItem;
  std::unordered_set<int32_t> written, read;
  for (size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    if (id < 0 || id >= k.idMax)
      return Error{ErrorKind::Lookup, k.name + ": " + k.entity + " id " +
                                          std::to_string(id) + " outside 0.." +
                                          std::to_string(k.idMax)};
    bool isDst = k.idsPerItem == 2 ? (i % 2 == 1) : !k.dstIsStaging;
    if (isDst && !written.insert(id).second)
      return Error::invalid(k.name + ": " + k.entity + " " + std::to_string(id) +
                            " is written twice in one batch");
    if (!isDst)
      read.insert(id);
  }
  if (k.idsPerItem == 2)
    for (int32_t id : written)
      if (read.count(id))
        return Error::invalid(k.name + ": " + k.entity + " " + std::to_string(id) +
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
  // Enough blocks to fill a large GPU several times over, at least a vector
  // per thread; the kernels are grid-stride loops, so any width is correct.
  int64_t maxVecs = 1;
  for (const KernelSegment &seg : k.segments)
    maxVecs = std::max<int64_t>(maxVecs, seg.bytes / 16);
  int64_t gridX = std::max<int64_t>(
      1, std::min<int64_t>((maxVecs + 255) / 256, (2112 + items - 1) / items));
  return dev.launch(k.name, arena, staging, idsBuffer, items, gridX);
}

} // namespace poolrt
