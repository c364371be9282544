//===- VendorDevice.h - What the CUDA and HIP backends share ----*- C++ -*-===//
//
// The CUDA and HIP backends are one backend over two vendor runtimes: both
// dlopen a driver library, both move bytes and launch the generated kernels
// through a handful of entry points that return 0 on success, and both look
// a kernel up by name once and cache it. VendorDevice<Api> is that one
// backend; `Api` is the vendor's table of entry points (CudaApi in
// CudaDevice.cpp, HipApi in HipDevice.cpp), adapted to one shape:
//
//   static constexpr const char *kName;       "cuda", "hip": error prefix
//   static constexpr VendorEntryNames kNames; what errors call each entry
//   static std::string allocName(uint64_t);   what errors call the allocation
//   std::string load();                       dlopen + dlsym; "" or what lacks
//   const char *errorString(int);
//   int alloc(DevicePtr *, uint64_t), fill(DevicePtr, uint8_t, uint64_t),
//       release(DevicePtr), copyToDevice(DevicePtr, const void *, uint64_t),
//       copyFromDevice(void *, DevicePtr, uint64_t),
//       copyOnDevice(DevicePtr, DevicePtr, uint64_t),
//       getFunction(void **, void *module, const char *),
//       launch(void *fn, unsigned gridX, unsigned gridY, void **args),
//       synchronize();
//   Status validateLaunch(const std::string &kernel, int64_t numItems,
//                         int64_t gridX);
//
// What stays per vendor, in the subclass: which code section loads and how
// (CUDA JIT-compiles one PTX; HIP tries each gfx code object), the
// description, and the open sequence. A vendor's `launch` fixes the block at
// (256, 1, 1), no shared memory, the default stream: the generated kernels'
// ABI (specs/artifact-format.md).
//
// Silent failure mode: `functions` caches kernels of the loaded module; a
// subclass that loads another module must clear it, or launches run the
// old module's kernels.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DEVICE_VENDORDEVICE_H
#define POOLRT_DEVICE_VENDORDEVICE_H

#include "poolrt/Device.h"

#include <map>
#include <string>

namespace poolrt {
namespace detail {

/// The names errors give a vendor's entry points.
struct VendorEntryNames {
  const char *fill, *release, *copyToDevice, *copyFromDevice, *copyOnDevice,
      *launch;
};

template <class Api> class VendorDevice : public Device {
public:
  Api api;
  void *module = nullptr; // the loaded code object
  std::map<std::string, void *> functions;

  Status check(int r, const std::string &what) {
    if (r == 0)
      return Status::success();
    return Error{ErrorKind::State, std::string(Api::kName) + ": " + what +
                                       ": " + api.errorString(r)};
  }

  const char *name() const override { return Api::kName; }

  Result<DevicePtr> allocate(uint64_t bytes) override {
    DevicePtr p;
    Status s = check(api.alloc(&p, bytes), Api::allocName(bytes));
    if (s.ok())
      s = check(api.fill(p, 0, bytes), Api::kNames.fill);
    if (!s.ok())
      return s.error();
    return p;
  }
  Status release(DevicePtr p) override {
    return check(api.release(p), Api::kNames.release);
  }
  Status copyToDevice(DevicePtr dst, const void *src, uint64_t n) override {
    return check(api.copyToDevice(dst, src, n), Api::kNames.copyToDevice);
  }
  Status copyFromDevice(void *dst, DevicePtr src, uint64_t n) override {
    return check(api.copyFromDevice(dst, src, n), Api::kNames.copyFromDevice);
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, uint64_t n) override {
    return check(api.copyOnDevice(dst, src, n), Api::kNames.copyOnDevice);
  }
  Status fill(DevicePtr dst, uint8_t value, uint64_t n) override {
    return check(api.fill(dst, value, n), Api::kNames.fill);
  }

  Status launch(const std::string &kernel, DevicePtr arena, DevicePtr staging,
                DevicePtr ids, int64_t numItems, int64_t gridX) override {
    if (!module)
      return Error{ErrorKind::State, std::string(Api::kName) + " launch of " +
                                         kernel + ": no kernels loaded"};
    auto it = functions.find(kernel);
    if (it == functions.end()) {
      void *f = nullptr;
      Status s = check(api.getFunction(&f, module, kernel.c_str()),
                       "no kernel '" + kernel + "'");
      if (!s.ok())
        return s;
      it = functions.emplace(kernel, f).first;
    }
    Status valid = api.validateLaunch(kernel, numItems, gridX);
    if (!valid.ok())
      return valid;
    uint64_t a = arena.addr, st = staging.addr, i = ids.addr;
    void *args[] = {&a, &st, &i, &numItems, &gridX};
    return check(
        api.launch(it->second, unsigned(gridX), unsigned(numItems), args),
        std::string(Api::kNames.launch) + "(" + kernel + ")");
  }

  Status synchronize() override {
    return check(api.synchronize(), "synchronize");
  }
};

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DEVICE_VENDORDEVICE_H
