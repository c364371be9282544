//===- Device.cpp - Backend registry --------------------------------------===//

#include "poolrt/Device.h"

namespace poolrt {

Device::~Device() = default;

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
