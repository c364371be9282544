//===- Arena.h - One device allocation carved at the artifact's offsets -*- C++ -*-===//
//
// A rank's whole cache is one allocation of the artifact's allocation_bytes,
// carved at the offsets the compiler solved (nothing is re-derived here).
// Views are exported as DLPack-compatible descriptors: a framework wraps
// them (DLTensor: data, device, ndim, dtype, shape, strides in elements,
// byte_offset) without copying.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_ARENA_H
#define POOLRT_ARENA_H

#include "poolrt/Device.h"
#include "poolrt/SolvedLayout.h"
#include "poolrt/StateArena.h"

#include <string>
#include <vector>

namespace poolrt {

/// The fields of a DLPack DLTensor, owned.
struct TensorView {
  uint64_t data = 0;          // DLTensor.data (the allocation's base)
  int32_t deviceType = 1;     // DLDeviceType: 1 CPU, 2 CUDA, 10 ROCm
  int32_t deviceId = 0;
  uint8_t dtypeCode = 1;      // DLDataTypeCode: 0 int, 1 uint, 2 float, 4 bfloat,
                              // 10 float8_e4m3fn, 12 float8_e5m2
  uint8_t dtypeBits = 8;
  uint16_t dtypeLanes = 1;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides; // in elements
  uint64_t byteOffset = 0;      // DLTensor.byte_offset
};

/// A dtype's DLPack code and bits: int 0, uint 1, float 2, bfloat 4,
/// fp8_e4m3 10 (kDLFloat8_e4m3fn) and fp8_e5m2 12 (kDLFloat8_e5m2), as
/// DLPack 1.1 numbers them.
void dlpackDtype(DType t, TensorView &v);

/// The DLDeviceType of memory `d` allocates: 1 CPU, 2 CUDA, 10 ROCm.
int32_t dlpackDevice(const Device &d);

class DeviceArena {
public:
  /// Allocate and carve the artifact's arena on `device`.
  static Result<DeviceArena> create(Device &device, const Artifact &artifact);
  /// The same from a layout already read (readSolvedLayout).
  static Result<DeviceArena> create(Device &device, SolvedLayout layout);
  DeviceArena(DeviceArena &&) noexcept;
  DeviceArena &operator=(DeviceArena &&) = delete;
  ~DeviceArena();

  DevicePtr base() const { return base_; }
  int64_t bytes() const { return bytes_; }
  /// A plane of the row space: [plane_rows, row_bytes] bytes.
  Result<TensorView> plane(const std::string &name) const;
  /// The same plane in its declared dtype: [plane_rows, row_bytes / item]
  /// (fp8 as DLPack's kDLFloat8 codes, bf16 as kDLBfloat).
  Result<TensorView> typedPlane(const std::string &name) const;
  /// An entry class's region: [entries, entry_bytes] bytes.
  Result<TensorView> classRegion(const std::string &name) const;
  /// A state field: [layers, entries (or slot positions), *shape] of its
  /// dtype, strides in elements.
  Result<TensorView> field(const std::string &name) const;
  std::vector<std::string> fieldNames() const;
  /// The layout the arena was carved from.
  const SolvedLayout &layout() const;

private:
  DeviceArena() = default;
  TensorView bytesView(int64_t rows, int64_t rowBytes, int64_t offset) const;
  struct Impl;
  Device *device_ = nullptr;
  DevicePtr base_;
  int64_t bytes_ = 0;
  Impl *impl_ = nullptr;
};

} // namespace poolrt

#endif
