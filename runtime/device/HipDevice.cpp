//===- HipDevice.cpp - The AMD backend through the HIP runtime -------------===//
//
// libamdhip64.so is dlopen'ed. The artifact carries one code object per
// supported architecture (gfx942, gfx950); hipModuleLoadData accepts only
// the device's own, so each is tried in turn and the error says which were.
// What the backend shares with CUDA is in VendorDevice.h.
//
//===----------------------------------------------------------------------===//

#include "VendorDevice.h"

#include <dlfcn.h>

namespace poolrt {
namespace {

using hipError_t = int;
using hipModule_t = void *;
using hipFunction_t = void *;
using hipStream_t = void *;

constexpr int kHtoD = 1, kDtoH = 2, kDtoD = 3; // hipMemcpyKind

struct HipApi {
  static constexpr const char *kName = "hip";
  static constexpr detail::VendorEntryNames kNames{
      "hipMemset", "hipFree",   "hipMemcpy",
      "hipMemcpy", "hipMemcpy", "hipModuleLaunchKernel"};
  static std::string allocName(uint64_t) { return "hipMalloc"; }

  void *lib = nullptr;
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceCount)(int *);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipMalloc)(void **, size_t);
  hipError_t (*hipFree)(void *);
  hipError_t (*hipMemcpy)(void *, const void *, size_t, int);
  hipError_t (*hipMemset)(void *, int, size_t);
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      hipStream_t, void **, void **);
  hipError_t (*hipDeviceSynchronize)();
  const char *(*hipGetErrorString)(hipError_t);
  hipError_t (*hipHostMalloc)(void **, size_t, unsigned);
  hipError_t (*hipHostFree)(void *);

  std::string load() {
    for (const char *n : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7"})
      if ((lib = dlopen(n, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!lib)
      return "libamdhip64.so not found";
    SymbolSlot entries[] = {
        {reinterpret_cast<void **>(&hipInit), "hipInit"},
        {reinterpret_cast<void **>(&hipGetDeviceCount), "hipGetDeviceCount"},
        {reinterpret_cast<void **>(&hipSetDevice), "hipSetDevice"},
        {reinterpret_cast<void **>(&hipMalloc), "hipMalloc"},
        {reinterpret_cast<void **>(&hipFree), "hipFree"},
        {reinterpret_cast<void **>(&hipMemcpy), "hipMemcpy"},
        {reinterpret_cast<void **>(&hipMemset), "hipMemset"},
        {reinterpret_cast<void **>(&hipModuleLoadData), "hipModuleLoadData"},
        {reinterpret_cast<void **>(&hipModuleGetFunction), "hipModuleGetFunction"},
        {reinterpret_cast<void **>(&hipModuleLaunchKernel), "hipModuleLaunchKernel"},
        {reinterpret_cast<void **>(&hipDeviceSynchronize), "hipDeviceSynchronize"},
        {reinterpret_cast<void **>(&hipGetErrorString), "hipGetErrorString"},
        {reinterpret_cast<void **>(&hipHostMalloc), "hipHostMalloc"},
        {reinterpret_cast<void **>(&hipHostFree), "hipHostFree"},
    };
    return resolveSymbols(lib, "libamdhip64.so", entries,
                          sizeof entries / sizeof entries[0]);
  }

  const char *errorString(hipError_t r) { return hipGetErrorString(r); }
  static void *ptr(DevicePtr p) { return reinterpret_cast<void *>(p.addr); }
  hipError_t alloc(DevicePtr *p, uint64_t bytes) {
    void *d = nullptr;
    hipError_t r = hipMalloc(&d, bytes);
    p->addr = reinterpret_cast<uint64_t>(d);
    return r;
  }
  hipError_t fill(DevicePtr dst, uint8_t value, uint64_t n) {
    return hipMemset(ptr(dst), value, n);
  }
  hipError_t release(DevicePtr p) { return hipFree(ptr(p)); }
  hipError_t copyToDevice(DevicePtr dst, const void *src, uint64_t n) {
    return hipMemcpy(ptr(dst), src, n, kHtoD);
  }
  hipError_t copyFromDevice(void *dst, DevicePtr src, uint64_t n) {
    return hipMemcpy(dst, ptr(src), n, kDtoH);
  }
  hipError_t copyOnDevice(DevicePtr dst, DevicePtr src, uint64_t n) {
    return hipMemcpy(ptr(dst), ptr(src), n, kDtoD);
  }
  hipError_t getFunction(void **f, hipModule_t m, const char *kernel) {
    return hipModuleGetFunction(f, m, kernel);
  }
  hipError_t launch(hipFunction_t f, unsigned gridX, unsigned gridY,
                    void **args) {
    return hipModuleLaunchKernel(f, gridX, gridY, 1, 256, 1, 1, 0, nullptr,
                                 args, nullptr);
  }
  hipError_t synchronize() { return hipDeviceSynchronize(); }
  /// The grid goes to HIP unchecked: its launch reports what it refuses.
  static Status validateLaunch(const std::string &, int64_t, int64_t) {
    return Status::success();
  }
};

class HipDevice final : public detail::VendorDevice<HipApi> {
public:
  std::string loadedSection = "code/gfx942";

  std::string description() const override { return "AMD GPU through HIP"; }
  void *allocateHost(uint64_t bytes) override {
    constexpr unsigned kPortable = 0x1; // hipHostMallocPortable
    void *p = nullptr;
    if (api.hipHostMalloc(&p, bytes < 1 ? 1 : bytes, kPortable) != 0)
      return nullptr;
    return p;
  }
  void releaseHost(void *p) override {
    if (p)
      (void)api.hipHostFree(p);
  }
  std::string hostMemoryKind() const override { return "pinned (hipHostMalloc)"; }
  std::string codeSection() const override { return loadedSection; }
  Status loadKernels(const Artifact &artifact) override {
    std::string tried;
    for (const char *section : {"code/gfx942", "code/gfx950"}) {
      const ArtifactSection *co = artifact.find(section);
      if (!co)
        continue;
      tried += std::string(tried.empty() ? "" : ", ") + section;
      if (api.hipModuleLoadData(&module, co->data.data()) == 0) {
        loadedSection = section;
        functions.clear();
        return Status::success();
      }
    }
    return Error::invalid("hip: no code object of the artifact loads on this "
                          "device (tried: " + (tried.empty() ? "none present" : tried) + ")");
  }
};

} // namespace

Result<std::unique_ptr<Device>> openHipDevice() {
  auto d = std::make_unique<HipDevice>();
  std::string missing = d->api.load();
  if (!missing.empty())
    return Error{ErrorKind::State, "hip backend absent: " + missing};
  int count = 0;
  if (d->api.hipInit(0) != 0 || d->api.hipGetDeviceCount(&count) != 0 || count == 0)
    return Error{ErrorKind::State, "hip backend absent: no AMD GPU visible"};
  if (d->api.hipSetDevice(0) != 0)
    return Error{ErrorKind::State, "hip backend absent: hipSetDevice(0) failed"};
  return std::unique_ptr<Device>(std::move(d));
}

} // namespace poolrt
