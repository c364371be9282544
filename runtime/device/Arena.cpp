//===- Arena.cpp - One device allocation carved at the artifact's offsets -===//

#include "poolrt/Arena.h"
#include "poolrt/StateArena.h"

#include <nlohmann/json.hpp>

#include <cstring>

namespace poolrt {

struct DeviceArena::Impl {
  nlohmann::json layout;
};

namespace {

int32_t dlDevice(const Device &d) {
  if (std::strcmp(d.name(), "cuda") == 0)
    return 2;
  if (std::strcmp(d.name(), "hip") == 0)
    return 10;
  return 1;
}

void dlDtype(DType t, TensorView &v) {
  v.dtypeBits = uint8_t(8 * dtypeSize(t));
  switch (t) {
  case DType::F64:
  case DType::F32:
  case DType::F16:
    v.dtypeCode = 2;
    break;
  case DType::BF16:
    v.dtypeCode = 4;
    break;
  case DType::I64:
  case DType::I32:
  case DType::I8:
    v.dtypeCode = 0;
    break;
  default: // fp8 formats and u8: bytes
    v.dtypeCode = 1;
    v.dtypeBits = 8;
  }
}

} // namespace

DeviceArena::DeviceArena(DeviceArena &&o) noexcept
    : device_(o.device_), base_(o.base_), bytes_(o.bytes_), impl_(o.impl_) {
  o.impl_ = nullptr;
  o.base_ = DevicePtr{};
}

DeviceArena::~DeviceArena() {
  if (base_ && device_)
    (void)device_->release(base_);
  delete impl_;
}

Result<DeviceArena> DeviceArena::create(Device &device, const Artifact &artifact) {
  const ArtifactSection *m = artifact.find("manifest");
  if (!m)
    return Error::invalid("artifact has no manifest section");
  nlohmann::json j = nlohmann::json::parse(m->data, nullptr, false);
  if (j.is_discarded() || !j.contains("layout") ||
      !j["layout"].contains("allocation_bytes") ||
      !j["layout"]["allocation_bytes"].is_number_integer())
    return Error::invalid("artifact manifest lacks layout.allocation_bytes");
  DeviceArena a;
  a.device_ = &device;
  a.bytes_ = j["layout"]["allocation_bytes"].get<int64_t>();
  auto base = device.allocate(uint64_t(a.bytes_));
  if (!base.ok())
    return base.error();
  a.base_ = *base;
  a.impl_ = new Impl{j["layout"]};
  return a;
}

Result<TensorView> DeviceArena::plane(const std::string &name) const {
  try {
    const nlohmann::json &rs = impl_->layout.at("row_space");
    if (rs.is_null())
      return Error{ErrorKind::Lookup, "the layout has no row space (no planes)"};
    for (const nlohmann::json &p : rs.at("planes"))
      if (p.at("name") == name) {
        TensorView v;
        v.data = base_.addr;
        v.deviceType = dlDevice(*device_);
        int64_t w = p.at("row_bytes").get<int64_t>();
        v.shape = {rs.at("plane_rows").get<int64_t>(), w};
        v.strides = {w, 1};
        v.byteOffset = p.at("offset").get<uint64_t>();
        return v;
      }
  } catch (const std::exception &e) {
    return Error::invalid(std::string("arena layout: ") + e.what());
  }
  return Error{ErrorKind::Lookup, "no plane named '" + name + "'"};
}

Result<TensorView> DeviceArena::classRegion(const std::string &name) const {
  try {
    for (const nlohmann::json &c : impl_->layout.at("entry_classes"))
      if (c.at("name") == name) {
        if (c.at("region_offset").is_null())
          return Error{ErrorKind::Lookup, "class '" + name +
                                              "' lives in the row-space planes"};
        TensorView v;
        v.data = base_.addr;
        v.deviceType = dlDevice(*device_);
        int64_t eb = c.at("entry_bytes").get<int64_t>();
        v.shape = {c.at("entries").get<int64_t>(), eb};
        v.strides = {eb, 1};
        v.byteOffset = c.at("region_offset").get<uint64_t>();
        return v;
      }
  } catch (const std::exception &e) {
    return Error::invalid(std::string("arena layout: ") + e.what());
  }
  return Error{ErrorKind::Lookup, "no entry class named '" + name + "'"};
}

std::vector<std::string> DeviceArena::fieldNames() const {
  std::vector<std::string> out;
  for (const nlohmann::json &a : impl_->layout.value("arenas", nlohmann::json::array()))
    for (const nlohmann::json &f : a.value("fields", nlohmann::json::array()))
      out.push_back(f.value("name", ""));
  return out;
}

Result<TensorView> DeviceArena::field(const std::string &name) const {
  try {
    const nlohmann::json &L = impl_->layout;
    for (const nlohmann::json &a : L.at("arenas"))
      for (const nlohmann::json &f : a.at("fields")) {
        if (f.at("name") != name)
          continue;
        auto dtype = parseDType(f.at("dtype").get<std::string>());
        if (!dtype)
          return Error::invalid("field '" + name + "': unknown dtype");
        int64_t item = dtypeSize(*dtype);
        TensorView v;
        v.data = base_.addr;
        v.deviceType = dlDevice(*device_);
        dlDtype(*dtype, v);
        if (v.dtypeBits == 8 && item != 1)
          item = 1;
        std::vector<int64_t> shape = f.at("shape").get<std::vector<int64_t>>();
        int64_t layers = f.at("layers").get<int64_t>();
        int64_t numel = 1;
        for (int64_t d : shape)
          numel *= d;
        int64_t entries = 0, strideBytes = 0;
        uint64_t start = 0;
        std::string cls = a.at("class").get<std::string>();
        if (f.at("plane").is_null()) {
          for (const nlohmann::json &c : L.at("entry_classes"))
            if (c.at("name") == cls) {
              entries = c.at("entries").get<int64_t>();
              strideBytes = c.at("entry_bytes").get<int64_t>();
              start = c.at("region_offset").get<uint64_t>();
            }
        } else {
          // In a row space: one slot per position, the field at its offset
          // from each slot's start in its plane.
          const nlohmann::json &rs = L.at("row_space");
          int64_t slotRows = rs.at("slot_rows").get<int64_t>();
          int64_t positions = rs.at("slot_positions").get<int64_t>();
          int64_t origin = positions - rs.at("plane_rows").get<int64_t>() / slotRows;
          for (const nlohmann::json &p : rs.at("planes"))
            if (p.at("name") == f.at("plane")) {
              int64_t w = p.at("row_bytes").get<int64_t>();
              strideBytes = slotRows * w;
              start = p.at("offset").get<uint64_t>();
            }
          entries = positions - origin;
        }
        start += f.at("offset").get<uint64_t>();
        v.shape = {layers, entries};
        v.shape.insert(v.shape.end(), shape.begin(), shape.end());
        std::vector<int64_t> inner(shape.size());
        int64_t s = 1;
        for (size_t d = shape.size(); d-- > 0;) {
          inner[d] = s;
          s *= shape[d];
        }
        v.strides = {numel, strideBytes / item};
        v.strides.insert(v.strides.end(), inner.begin(), inner.end());
        v.byteOffset = start;
        return v;
      }
  } catch (const std::exception &e) {
    return Error::invalid(std::string("arena layout: ") + e.what());
  }
  return Error{ErrorKind::Lookup, "no state field named '" + name + "'"};
}

} // namespace poolrt
