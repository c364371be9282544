//===- HipDevice.cpp - The AMD backend through the HIP runtime -------------===//
//
// libamdhip64.so is dlopen'ed. The artifact carries one code object per
// supported architecture (gfx942, gfx950); hipModuleLoadData accepts only
// the device's own, so each is tried in turn and the error says which were.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Device.h"

#include <dlfcn.h>
#include <map>

namespace poolrt {
namespace {

using hipError_t = int;
using hipModule_t = void *;
using hipFunction_t = void *;
using hipStream_t = void *;

struct HipApi {
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
    };
    return resolveSymbols(lib, "libamdhip64.so", entries,
                          sizeof entries / sizeof entries[0]);
  }
};

constexpr int kHtoD = 1, kDtoH = 2, kDtoD = 3; // hipMemcpyKind

class HipDevice final : public Device {
public:
  HipApi api;
  hipModule_t module = nullptr;
  std::string loadedSection = "code/gfx942";
  std::map<std::string, hipFunction_t> functions;

  Status check(hipError_t r, const std::string &what) {
    if (r == 0)
      return Status::success();
    return Error{ErrorKind::State, "hip: " + what + ": " + api.hipGetErrorString(r)};
  }
  const char *name() const override { return "hip"; }
  std::string description() const override { return "AMD GPU through HIP"; }
  std::string codeSection() const override { return loadedSection; }
  Result<DevicePtr> allocate(uint64_t bytes) override {
    void *p = nullptr;
    Status s = check(api.hipMalloc(&p, bytes), "hipMalloc");
    if (s.ok())
      s = check(api.hipMemset(p, 0, bytes), "hipMemset");
    if (!s.ok())
      return s.error();
    return DevicePtr{reinterpret_cast<uint64_t>(p)};
  }
  Status release(DevicePtr p) override {
    return check(api.hipFree(reinterpret_cast<void *>(p.addr)), "hipFree");
  }
  Status copyToDevice(DevicePtr dst, const void *src, uint64_t n) override {
    return check(api.hipMemcpy(reinterpret_cast<void *>(dst.addr), src, n, kHtoD), "hipMemcpy");
  }
  Status copyFromDevice(void *dst, DevicePtr src, uint64_t n) override {
    return check(api.hipMemcpy(dst, reinterpret_cast<void *>(src.addr), n, kDtoH), "hipMemcpy");
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, uint64_t n) override {
    return check(api.hipMemcpy(reinterpret_cast<void *>(dst.addr),
                               reinterpret_cast<void *>(src.addr), n, kDtoD),
                 "hipMemcpy");
  }
  Status fill(DevicePtr dst, uint8_t value, uint64_t n) override {
    return check(api.hipMemset(reinterpret_cast<void *>(dst.addr), value, n), "hipMemset");
  }
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
  Status launch(const std::string &kernel, DevicePtr arena, DevicePtr staging,
                DevicePtr ids, int64_t numItems, int64_t gridX) override {
    if (!module)
      return Error{ErrorKind::State, "hip launch of " + kernel + ": no kernels loaded"};
    auto it = functions.find(kernel);
    if (it == functions.end()) {
      hipFunction_t f = nullptr;
      Status s = check(api.hipModuleGetFunction(&f, module, kernel.c_str()),
                       "no kernel '" + kernel + "'");
      if (!s.ok())
        return s;
      it = functions.emplace(kernel, f).first;
    }
    uint64_t a = arena.addr, st = staging.addr, i = ids.addr;
    void *args[] = {&a, &st, &i, &numItems, &gridX};
    return check(api.hipModuleLaunchKernel(it->second, unsigned(gridX), unsigned(numItems),
                                           1, 256, 1, 1, 0, nullptr, args, nullptr),
                 "hipModuleLaunchKernel(" + kernel + ")");
  }
  Status synchronize() override { return check(api.hipDeviceSynchronize(), "synchronize"); }
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
