//===- Kernels.cpp - The artifact's kernels and a validating launcher -----===//

#include "poolrt/Kernels.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_set>

namespace poolrt {

static Result<KernelSet> parseManifest(const Artifact &artifact);

/// The `max` of an `"id_range": [0, max]` key of `o`, or -1 when absent or
/// not of that shape.
static int64_t rangeMax(const nlohmann::json &o) {
  auto range = o.find("id_range");
  if (range == o.end() || !range->is_array() || range->size() != 2 ||
      !(*range)[0].is_number_integer() || (*range)[0].get<int64_t>() != 0 ||
      !(*range)[1].is_number_integer())
    return -1;
  return (*range)[1].get<int64_t>();
}

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
    info.idMax = rangeMax(k);
    info.srcIsStaging = k.contains("src") && k["src"].value("space", "") == "staging";
    info.dstIsStaging = k.contains("dst") && k["dst"].value("space", "") == "staging";
    if (info.name.empty() || info.idsPerItem < 1 || info.idMax < 0 ||
        info.itemBytes < 0 || info.stagingStride < 0)
      return Error::invalid("artifact manifest: malformed kernel entry '" +
                            info.name + "'");
    std::string where = "artifact manifest: kernel '" + info.name + "': ";
    auto tuple = k.find("id_tuple");
    if (tuple == k.end() || !tuple->is_array() ||
        tuple->size() != size_t(info.idsPerItem))
      return Error::invalid(where + "id_tuple must list ids_per_item (" +
                            std::to_string(info.idsPerItem) + ") positions");
    for (const nlohmann::json &p : *tuple) {
      KernelIdSlot slot;
      std::string access;
      if (p.is_object()) {
        slot.entity = p.value("entity", "");
        slot.idMax = rangeMax(p);
        access = p.value("access", "");
      }
      slot.read = access == "read" || access == "read-write";
      slot.written = access == "write" || access == "read-write";
      if (slot.entity.empty() || slot.idMax < 0 ||
          (!slot.read && !slot.written))
        return Error::invalid(where + "id_tuple position " +
                              std::to_string(info.idTuple.size()) +
                              " needs an entity, an id_range [0, max) and an "
                              "access (read, write or read-write)");
      info.idTuple.push_back(std::move(slot));
    }
    auto segs = k.find("segments");
    if (segs == k.end() || !segs->is_array())
      return Error::invalid(where + "no segments");
    int64_t sum = 0;
    for (const nlohmann::json &s : *segs) {
      std::string at =
          where + "segment " + std::to_string(info.segments.size()) + ": ";
      auto field = [&](const char *key, int64_t &out) {
        auto it = s.is_object() ? s.find(key) : s.end();
        if (!s.is_object() || it == s.end() || !it->is_number_integer())
          return false;
        out = it->get<int64_t>();
        return true;
      };
      KernelSegment seg;
      int64_t srcId = 0, dstId = 0;
      if (!field("src_off", seg.srcOff) ||
          !field("src_stride", seg.srcStride) ||
          !field("dst_off", seg.dstOff) ||
          !field("dst_stride", seg.dstStride) || !field("bytes", seg.bytes) ||
          !field("src_id", srcId) || !field("dst_id", dstId) || seg.bytes < 0)
        return Error::invalid(at +
                              "needs integer src_off, src_stride, src_id, "
                              "dst_off, dst_stride, dst_id and bytes >= 0");
      // A staging side is addressed by the item index (-1), an arena side
      // by a tuple position that the kernel reads (source) or writes
      // (destination).
      auto checkSide = [&](const char *side, int64_t id, bool staging,
                           bool source) -> std::string {
        if (staging)
          return id == -1 ? ""
                          : std::string(side) + " " + std::to_string(id) +
                                " on the staging side (expected -1)";
        if (id < 0 || id >= info.idsPerItem)
          return std::string(side) + " " + std::to_string(id) +
                 " outside the " + std::to_string(info.idsPerItem) +
                 "-id tuple";
        const KernelIdSlot &slot = info.idTuple[size_t(id)];
        if (source ? !slot.read : !slot.written)
          return std::string(side) + " " + std::to_string(id) +
                 " names a position the kernel does not " +
                 (source ? "read" : "write");
        return "";
      };
      std::string bad = checkSide("src_id", srcId, info.srcIsStaging, true);
      if (bad.empty())
        bad = checkSide("dst_id", dstId, info.dstIsStaging, false);
      if (!bad.empty())
        return Error::invalid(at + bad);
      seg.srcId = int(srcId);
      seg.dstId = int(dstId);
      sum += seg.bytes;
      info.segments.push_back(seg);
    }
    if (sum != info.itemBytes)
      return Error::invalid(where + "segments move " + std::to_string(sum) +
                            " bytes, item_bytes says " +
                            std::to_string(info.itemBytes));
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
