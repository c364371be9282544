//===- Arena.cpp - One device allocation carved at the artifact's offsets -===//

#include "poolrt/Arena.h"
#include "poolrt/StateArena.h"

#include <cstring>

namespace poolrt {

struct DeviceArena::Impl {
  SolvedLayout layout;
};

int32_t dlpackDevice(const Device &d) {
  if (std::strcmp(d.name(), "cuda") == 0)
    return 2;
  if (std::strcmp(d.name(), "hip") == 0)
    return 10;
  return 1;
}

void dlpackDtype(DType t, TensorView &v) {
  v.dtypeBits = uint8_t(8 * dtypeSize(t));
  v.dtypeLanes = 1;
  switch (t) {
  case DType::F64:
  case DType::F32:
  case DType::F16:
    v.dtypeCode = 2;
    break;
  case DType::BF16:
    v.dtypeCode = 4;
    break;
  case DType::FP8E4M3: // DLPack 1.1's kDLFloat8_e4m3fn, as torch exports it
    v.dtypeCode = 10;
    v.dtypeBits = 8;
    break;
  case DType::FP8E5M2: // kDLFloat8_e5m2
    v.dtypeCode = 12;
    v.dtypeBits = 8;
    break;
  case DType::I64:
  case DType::I32:
  case DType::I8:
    v.dtypeCode = 0;
    break;
  default: // u8
    v.dtypeCode = 1;
    v.dtypeBits = 8;
  }
}

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
  auto layout = readSolvedLayout(artifact);
  if (!layout.ok())
    return layout.error();
  return create(device, layout.take());
}

Result<DeviceArena> DeviceArena::create(Device &device, SolvedLayout layout) {
  DeviceArena a;
  a.device_ = &device;
  a.bytes_ = layout.allocationBytes;
  auto base = device.allocate(uint64_t(a.bytes_));
  if (!base.ok())
    return base.error();
  a.base_ = *base;
  a.impl_ = new Impl{std::move(layout)};
  return a;
}

const SolvedLayout &DeviceArena::layout() const { return impl_->layout; }

TensorView DeviceArena::bytesView(int64_t rows, int64_t rowBytes,
                                  int64_t offset) const {
  TensorView v;
  v.data = base_.addr;
  v.deviceType = dlpackDevice(*device_);
  v.shape = {rows, rowBytes};
  v.strides = {rowBytes, 1};
  v.byteOffset = uint64_t(offset);
  return v;
}

Result<TensorView> DeviceArena::plane(const std::string &name) const {
  const auto &rs = impl_->layout.rowSpace;
  if (!rs)
    return Error{ErrorKind::Lookup, "the layout has no row space (no planes)"};
  const SolvedRowPlane *p = rs->plane(name);
  if (!p)
    return Error{ErrorKind::Lookup, "no plane named '" + name + "'"};
  if (!rs->planeRows || !p->offset)
    return Error::invalid("arena layout: plane '" + name + "' is not planned");
  return bytesView(*rs->planeRows, p->rowBytes, *p->offset);
}

Result<TensorView> DeviceArena::typedPlane(const std::string &name) const {
  auto v = plane(name);
  if (!v.ok())
    return v;
  const SolvedRowPlane *p = impl_->layout.rowSpace->plane(name);
  auto dtype = parseDType(p->dtype);
  if (!dtype)
    return Error::invalid("plane '" + name + "': unknown dtype '" + p->dtype + "'");
  int64_t item = dtypeSize(*dtype);
  if (item < 1 || p->rowBytes % item != 0)
    return Error::invalid("plane '" + name + "': rows of " + std::to_string(p->rowBytes) +
                          " bytes are not whole " + p->dtype + " elements");
  TensorView t = v.take();
  dlpackDtype(*dtype, t);
  t.shape[1] = p->rowBytes / item;
  t.strides = {t.shape[1], 1};
  return t;
}

Result<TensorView> DeviceArena::classRegion(const std::string &name) const {
  const SolvedClass *c = impl_->layout.classNamed(name);
  if (!c)
    return Error{ErrorKind::Lookup, "no entry class named '" + name + "'"};
  if (!c->regionOffset)
    return Error{ErrorKind::Lookup,
                 "class '" + name + "' lives in the row-space planes"};
  return bytesView(c->entries, impl_->layout.regionEntryBytes(*c),
                   *c->regionOffset);
}

std::vector<std::string> DeviceArena::fieldNames() const {
  std::vector<std::string> out;
  for (const SolvedArena &a : impl_->layout.arenas)
    for (const SolvedField &f : a.fields)
      out.push_back(f.name);
  return out;
}

Result<TensorView> DeviceArena::field(const std::string &name) const {
  const SolvedLayout &L = impl_->layout;
  const SolvedArena *arena = nullptr;
  const SolvedField *f = L.field(name, &arena);
  if (!f)
    return Error{ErrorKind::Lookup, "no state field named '" + name + "'"};
  auto dtype = parseDType(f->dtype);
  if (!dtype)
    return Error::invalid("field '" + name + "': unknown dtype");
  int64_t item = dtypeSize(*dtype);
  TensorView v;
  v.data = base_.addr;
  v.deviceType = dlpackDevice(*device_);
  dlpackDtype(*dtype, v);
  if (v.dtypeBits == 8 && item != 1)
    item = 1;
  int64_t numel = 1;
  for (int64_t d : f->shape)
    numel *= d;
  int64_t entries = 0, strideBytes = 0;
  int64_t start = 0;
  if (!f->plane) {
    const SolvedClass *c = L.classNamed(arena->className);
    if (!c || !c->regionOffset)
      return Error::invalid("arena layout: field '" + name +
                            "' has no class region");
    entries = c->entries;
    strideBytes = c->entryBytes;
    start = *c->regionOffset;
  } else {
    // In a row space: one slot per position, the field at its offset from
    // each slot's start in its plane.
    const auto &rs = L.rowSpace;
    const SolvedRowPlane *p = rs ? rs->plane(*f->plane) : nullptr;
    if (!p || !rs->planeRows || !rs->slotPositions || !p->offset)
      return Error::invalid("arena layout: field '" + name +
                            "' names an unplanned plane");
    int64_t origin = *rs->slotPositions - *rs->planeRows / rs->slotRows;
    strideBytes = rs->slotRows * p->rowBytes;
    start = *p->offset;
    entries = *rs->slotPositions - origin;
  }
  start += f->offset;
  v.shape = {f->layers, entries};
  v.shape.insert(v.shape.end(), f->shape.begin(), f->shape.end());
  std::vector<int64_t> inner(f->shape.size());
  int64_t s = 1;
  for (size_t d = f->shape.size(); d-- > 0;) {
    inner[d] = s;
    s *= f->shape[d];
  }
  v.strides = {numel, strideBytes / item};
  v.strides.insert(v.strides.end(), inner.begin(), inner.end());
  v.byteOffset = uint64_t(start);
  return v;
}

} // namespace poolrt
