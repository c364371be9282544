//===- Device.h - One interface for every device backend --------*- C++ -*-===//
//
// A backend allocates device memory, moves bytes, loads the artifact's code
// object for its target and launches the generated kernels. Backends that
// need a vendor runtime load it with dlopen at open time (libcuda.so.1,
// libamdhip64.so): one build serves every machine, and a machine without
// the runtime reports the backend absent instead of failing to start. Every
// fallible call returns a Status; nothing throws across this interface.
//
// Pointers are device addresses (uint64); on the host backend they are
// ordinary addresses.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DEVICE_H
#define POOLRT_DEVICE_H

#include "poolrt/Artifact.h"
#include "poolrt/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace poolrt {

struct DevicePtr {
  uint64_t addr = 0;
  explicit operator bool() const { return addr != 0; }
  DevicePtr operator+(uint64_t off) const { return DevicePtr{addr + off}; }
};

class Device {
public:
  virtual ~Device();
  virtual const char *name() const = 0;     // "host", "cuda", "hip"
  virtual std::string description() const = 0;
  /// The artifact section this backend runs ("code/host", "code/sm_90", ...).
  virtual std::string codeSection() const = 0;
  /// Zero-initialized memory. The host backend reserves address space only
  /// (pages are backed when first touched).
  virtual Result<DevicePtr> allocate(uint64_t bytes) = 0;
  virtual Status release(DevicePtr p) = 0;
  virtual Status copyToDevice(DevicePtr dst, const void *src, uint64_t n) = 0;
  virtual Status copyFromDevice(void *dst, DevicePtr src, uint64_t n) = 0;
  virtual Status copyOnDevice(DevicePtr dst, DevicePtr src, uint64_t n) = 0;
  virtual Status fill(DevicePtr dst, uint8_t value, uint64_t n) = 0;
  /// Load the artifact's code object for this backend.
  virtual Status loadKernels(const Artifact &artifact) = 0;
  /// Launch a generated kernel (ABI: specs/artifact-format.md).
  virtual Status launch(const std::string &kernel, DevicePtr arena,
                        DevicePtr staging, DevicePtr ids, int64_t numItems,
                        int64_t gridX) = 0;
  virtual Status synchronize() = 0;
  /// Host memory the device copies from at full link speed: page-locked
  /// (cuMemHostAlloc, hipHostMalloc) on a GPU, ordinary memory on the host
  /// backend. Callable from any thread (the tier's transfer thread fills
  /// it). nullptr when none can be had; `releaseHost` takes only what
  /// `allocateHost` gave. The default is ordinary memory.
  virtual void *allocateHost(uint64_t bytes);
  virtual void releaseHost(void *p);
  /// What allocateHost gives: "pinned (cuMemHostAlloc)", "pageable".
  virtual std::string hostMemoryKind() const { return "pageable"; }
};

struct BackendInfo {
  std::string name;
  bool available = false;
  std::string detail; // what it found, or why it is absent
};

/// For backends: resolve `count` symbols of a dlopen'ed library into their
/// slots. Returns "" or what is missing ("libX lacks sym").
struct SymbolSlot {
  void **slot;
  const char *symbol;
};
std::string resolveSymbols(void *lib, const char *libName, SymbolSlot *slots,
                           size_t count);

/// Which backends this machine has (host is always present when the runtime
/// was built with its JIT).
std::vector<BackendInfo> probeBackends();

/// Open a backend by name: "host", "cuda" or "hip". An absent backend is an
/// error naming what is missing, never a crash.
Result<std::unique_ptr<Device>> openDevice(const std::string &name);

} // namespace poolrt

#endif
