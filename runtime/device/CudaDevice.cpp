//===- CudaDevice.cpp - The NVIDIA backend through the CUDA driver API ----===//
//
// libcuda.so.1 is dlopen'ed, never linked, and only the handful of driver
// entry points below are used (declared here: no CUDA headers needed to
// build). The artifact's PTX is loaded with cuModuleLoadData; the driver
// JIT-compiles it for the device at hand. What the backend shares with HIP
// is in VendorDevice.h.
//
//===----------------------------------------------------------------------===//

#include "VendorDevice.h"

#include <algorithm>
#include <dlfcn.h>

namespace poolrt {
namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;

struct CudaApi {
  static constexpr const char *kName = "cuda";
  static constexpr detail::VendorEntryNames kNames{
      "cuMemsetD8",   "cuMemFree",    "cuMemcpyHtoD",
      "cuMemcpyDtoH", "cuMemcpyDtoD", "cuLaunchKernel"};
  static std::string allocName(uint64_t bytes) {
    return "cuMemAlloc(" + std::to_string(bytes) + ")";
  }

  void *lib = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
  CUresult (*cuMemFreeHost)(void *);

  std::string load() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return std::string("libcuda.so.1 not found (") + dlerror() + ")";
    SymbolSlot entries[] = {
        {reinterpret_cast<void **>(&cuInit), "cuInit"},
        {reinterpret_cast<void **>(&cuDeviceGet), "cuDeviceGet"},
        {reinterpret_cast<void **>(&cuDeviceGetName), "cuDeviceGetName"},
        {reinterpret_cast<void **>(&cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain"},
        {reinterpret_cast<void **>(&cuCtxSetCurrent), "cuCtxSetCurrent"},
        {reinterpret_cast<void **>(&cuCtxSynchronize), "cuCtxSynchronize"},
        {reinterpret_cast<void **>(&cuMemAlloc), "cuMemAlloc_v2"},
        {reinterpret_cast<void **>(&cuMemFree), "cuMemFree_v2"},
        {reinterpret_cast<void **>(&cuMemcpyHtoD), "cuMemcpyHtoD_v2"},
        {reinterpret_cast<void **>(&cuMemcpyDtoH), "cuMemcpyDtoH_v2"},
        {reinterpret_cast<void **>(&cuMemcpyDtoD), "cuMemcpyDtoD_v2"},
        {reinterpret_cast<void **>(&cuMemsetD8), "cuMemsetD8_v2"},
        {reinterpret_cast<void **>(&cuModuleLoadData), "cuModuleLoadData"},
        {reinterpret_cast<void **>(&cuModuleGetFunction), "cuModuleGetFunction"},
        {reinterpret_cast<void **>(&cuLaunchKernel), "cuLaunchKernel"},
        {reinterpret_cast<void **>(&cuGetErrorString), "cuGetErrorString"},
        {reinterpret_cast<void **>(&cuMemHostAlloc), "cuMemHostAlloc"},
        {reinterpret_cast<void **>(&cuMemFreeHost), "cuMemFreeHost"},
    };
    return resolveSymbols(lib, "libcuda.so.1", entries,
                          sizeof entries / sizeof entries[0]);
  }

  const char *errorString(CUresult r) {
    const char *msg = "unknown error";
    cuGetErrorString(r, &msg);
    return msg;
  }
  CUresult alloc(DevicePtr *p, uint64_t bytes) {
    CUdeviceptr d = 0;
    CUresult r = cuMemAlloc(&d, bytes);
    p->addr = d;
    return r;
  }
  CUresult fill(DevicePtr dst, uint8_t value, uint64_t n) {
    return cuMemsetD8(dst.addr, value, n);
  }
  CUresult release(DevicePtr p) { return cuMemFree(p.addr); }
  CUresult copyToDevice(DevicePtr dst, const void *src, uint64_t n) {
    return cuMemcpyHtoD(dst.addr, src, n);
  }
  CUresult copyFromDevice(void *dst, DevicePtr src, uint64_t n) {
    return cuMemcpyDtoH(dst, src.addr, n);
  }
  CUresult copyOnDevice(DevicePtr dst, DevicePtr src, uint64_t n) {
    return cuMemcpyDtoD(dst.addr, src.addr, n);
  }
  CUresult getFunction(void **f, CUmodule m, const char *kernel) {
    return cuModuleGetFunction(f, m, kernel);
  }
  CUresult launch(CUfunction f, unsigned gridX, unsigned gridY, void **args) {
    return cuLaunchKernel(f, gridX, gridY, 1, 256, 1, 1, 0, nullptr, args,
                          nullptr);
  }
  CUresult synchronize() { return cuCtxSynchronize(); }
  /// The driver's limits on a grid: y at most 65535, x at most 2^31 - 1.
  static Status validateLaunch(const std::string &kernel, int64_t numItems,
                               int64_t gridX) {
    if (numItems <= 0 || numItems > 65535 || gridX <= 0 || gridX > (1ll << 31) - 1)
      return Error::invalid("cuda launch of " + kernel + ": grid (" +
                            std::to_string(gridX) + ", " + std::to_string(numItems) +
                            ") out of range");
    return Status::success();
  }
};

class CudaDevice final : public detail::VendorDevice<CudaApi> {
public:
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  std::string deviceName;

  std::string description() const override {
    return deviceName + " through the CUDA driver API";
  }
  std::string codeSection() const override { return "code/sm_90"; }

  // Page-locked host memory. The calling thread may have no context (the
  // tier's transfer thread): the primary context is made current on it
  // first. PORTABLE: every context may copy from it.
  void *allocateHost(uint64_t bytes) override {
    constexpr unsigned kPortable = 0x01; // CU_MEMHOSTALLOC_PORTABLE
    void *p = nullptr;
    if (api.cuCtxSetCurrent(ctx) != 0 ||
        api.cuMemHostAlloc(&p, std::max<uint64_t>(bytes, 1), kPortable) != 0)
      return nullptr;
    return p;
  }
  void releaseHost(void *p) override {
    if (!p)
      return;
    (void)api.cuCtxSetCurrent(ctx);
    (void)api.cuMemFreeHost(p);
  }
  std::string hostMemoryKind() const override { return "pinned (cuMemHostAlloc)"; }

  Status loadKernels(const Artifact &artifact) override {
    const ArtifactSection *ptx = artifact.find(codeSection());
    if (!ptx)
      return Error::invalid("the artifact has no " + codeSection() + " section");
    std::string image = ptx->data + std::string(1, '\0');
    functions.clear();
    return check(api.cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
  }
};

} // namespace

Result<std::unique_ptr<Device>> openCudaDevice() {
  auto d = std::make_unique<CudaDevice>();
  std::string missing = d->api.load();
  if (!missing.empty())
    return Error{ErrorKind::State, "cuda backend absent: " + missing};
  Status s = d->check(d->api.cuInit(0), "cuInit");
  if (s.ok())
    s = d->check(d->api.cuDeviceGet(&d->dev, 0), "cuDeviceGet");
  if (s.ok())
    s = d->check(d->api.cuDevicePrimaryCtxRetain(&d->ctx, d->dev), "cuDevicePrimaryCtxRetain");
  if (s.ok())
    s = d->check(d->api.cuCtxSetCurrent(d->ctx), "cuCtxSetCurrent");
  if (!s.ok())
    return Error{ErrorKind::State, "cuda backend absent: " + s.error().message};
  char name[256] = {0};
  d->api.cuDeviceGetName(name, sizeof name, d->dev);
  d->deviceName = name;
  return std::unique_ptr<Device>(std::move(d));
}

} // namespace poolrt
