//===- Device.cpp - Backend registry --------------------------------------===//

#include "poolrt/Device.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>

namespace poolrt {

Device::~Device() = default;

void *Device::allocateHost(uint64_t bytes) {
  // 64-byte aligned, like the pinned allocations: a copy's source alignment
  // does not depend on the backend.
  return std::aligned_alloc(64, (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64);
}
void Device::releaseHost(void *p) { std::free(p); }

std::string resolveSymbols(void *lib, const char *libName, SymbolSlot *slots,
                           size_t count) {
  for (size_t i = 0; i < count; ++i) {
    *slots[i].slot = dlsym(lib, slots[i].symbol);
    if (!*slots[i].slot)
      return std::string(libName) + " lacks " + slots[i].symbol;
  }
  return "";
}

Result<std::unique_ptr<Device>> openHostDevice();
Result<std::unique_ptr<Device>> openCudaDevice();
Result<std::unique_ptr<Device>> openHipDevice();

Result<std::unique_ptr<Device>> openDevice(const std::string &name) {
  if (name == "host")
    return openHostDevice();
  if (name == "cuda")
    return openCudaDevice();
  if (name == "hip")
    return openHipDevice();
  return Error::invalid("unknown device backend '" + name +
                        "' (expected host, cuda or hip)");
}

std::vector<BackendInfo> probeBackends() {
  std::vector<BackendInfo> out;
  for (const char *name : {"host", "cuda", "hip"}) {
    auto d = openDevice(name);
    out.push_back({name, d.ok(),
                   d.ok() ? d.value()->description() : d.error().message});
  }
  return out;
}

} // namespace poolrt
