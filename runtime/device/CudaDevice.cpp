//===- CudaDevice.cpp - The NVIDIA backend through the CUDA driver API ----===//
//
// libcuda.so.1 is dlopen'ed, never linked, and only the handful of driver
// entry points below are used (declared here: no CUDA headers needed to
// build). The artifact's PTX is loaded with cuModuleLoadData; the driver
// JIT-compiles it for the device at hand.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Device.h"

#include <dlfcn.h>
#include <map>

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
    };
    return resolveSymbols(lib, "libcuda.so.1", entries,
                          sizeof entries / sizeof entries[0]);
  }
};

class CudaDevice final : public Device {
public:
  CudaApi api;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  std::map<std::string, CUfunction> functions;
  std::string deviceName;

  Status check(CUresult r, const std::string &what) {
    if (r == 0)
      return Status::success();
    const char *msg = "unknown error";
    api.cuGetErrorString(r, &msg);
    return Error{ErrorKind::State, "cuda: " + what + ": " + msg};
  }

  const char *name() const override { return "cuda"; }
  std::string description() const override {
    return deviceName + " through the CUDA driver API";
  }
  std::string codeSection() const override { return "code/sm_90"; }

  Result<DevicePtr> allocate(uint64_t bytes) override {
    CUdeviceptr p = 0;
    Status s = check(api.cuMemAlloc(&p, bytes), "cuMemAlloc(" + std::to_string(bytes) + ")");
    if (!s.ok())
      return s.error();
    s = check(api.cuMemsetD8(p, 0, bytes), "cuMemsetD8");
    if (!s.ok())
      return s.error();
    return DevicePtr{p};
  }
  Status release(DevicePtr p) override { return check(api.cuMemFree(p.addr), "cuMemFree"); }
  Status copyToDevice(DevicePtr dst, const void *src, uint64_t n) override {
    return check(api.cuMemcpyHtoD(dst.addr, src, n), "cuMemcpyHtoD");
  }
  Status copyFromDevice(void *dst, DevicePtr src, uint64_t n) override {
    return check(api.cuMemcpyDtoH(dst, src.addr, n), "cuMemcpyDtoH");
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, uint64_t n) override {
    return check(api.cuMemcpyDtoD(dst.addr, src.addr, n), "cuMemcpyDtoD");
  }
  Status fill(DevicePtr dst, uint8_t value, uint64_t n) override {
    return check(api.cuMemsetD8(dst.addr, value, n), "cuMemsetD8");
  }
  Status loadKernels(const Artifact &artifact) override {
    const ArtifactSection *ptx = artifact.find(codeSection());
    if (!ptx)
      return Error::invalid("the artifact has no " + codeSection() + " section");
    std::string image = ptx->data + std::string(1, '\0');
    functions.clear();
    return check(api.cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
  }
  Status launch(const std::string &kernel, DevicePtr arena, DevicePtr staging,
                DevicePtr ids, int64_t numItems, int64_t gridX) override {
    if (!module)
      return Error{ErrorKind::State, "cuda launch of " + kernel + ": no kernels loaded"};
    auto it = functions.find(kernel);
    if (it == functions.end()) {
      CUfunction f = nullptr;
      Status s = check(api.cuModuleGetFunction(&f, module, kernel.c_str()),
                       "no kernel '" + kernel + "'");
      if (!s.ok())
        return s;
      it = functions.emplace(kernel, f).first;
    }
    if (numItems <= 0 || numItems > 65535 || gridX <= 0 || gridX > (1ll << 31) - 1)
      return Error::invalid("cuda launch of " + kernel + ": grid (" +
                            std::to_string(gridX) + ", " + std::to_string(numItems) +
                            ") out of range");
    CUdeviceptr a = arena.addr, st = staging.addr, i = ids.addr;
    void *args[] = {&a, &st, &i, &numItems, &gridX};
    return check(api.cuLaunchKernel(it->second, unsigned(gridX), unsigned(numItems), 1,
                                    256, 1, 1, 0, nullptr, args, nullptr),
                 "cuLaunchKernel(" + kernel + ")");
  }
  Status synchronize() override { return check(api.cuCtxSynchronize(), "synchronize"); }
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
