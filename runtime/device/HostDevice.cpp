//===- HostDevice.cpp - The host backend: CPU memory, host-lowered kernels ===//
//
// Memory is reserved with mmap(MAP_NORESERVE): a 150 GiB arena costs address
// space, and only the pages the pools touch are backed. The kernels are the
// artifact's host lowering (LLVM IR), compiled in-process by LLVM's ORC JIT.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Device.h"

#include <cstring>
#include <map>
#include <mutex>
#include <sys/mman.h>

#ifdef POOLRT_HOST_JIT
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#endif

namespace poolrt {
namespace {

using KernelFn = void (*)(void *, void *, void *, int64_t);

class HostDevice final : public Device {
public:
  const char *name() const override { return "host"; }
  std::string description() const override {
#ifdef POOLRT_HOST_JIT
    return "host CPU memory, kernels JIT-compiled from the artifact's LLVM IR";
#else
    return "host CPU memory only (this build has no JIT: kernels cannot run)";
#endif
  }
  std::string codeSection() const override { return "code/host"; }

  Result<DevicePtr> allocate(uint64_t bytes) override {
    if (bytes == 0)
      return Error::invalid("host allocate: 0 bytes");
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return Error{ErrorKind::State, "host allocate: cannot reserve " +
                                         std::to_string(bytes) + " bytes: " +
                                         std::strerror(errno)};
    sizes[reinterpret_cast<uint64_t>(p)] = bytes;
    return DevicePtr{reinterpret_cast<uint64_t>(p)};
  }
  Status release(DevicePtr p) override {
    auto it = sizes.find(p.addr);
    if (it == sizes.end())
      return Error::invalid("host release: " + std::to_string(p.addr) +
                            " is not an allocation of this device");
    munmap(reinterpret_cast<void *>(p.addr), it->second);
    sizes.erase(it);
    return Status::success();
  }
  Status copyToDevice(DevicePtr dst, const void *src, uint64_t n) override {
    std::memcpy(reinterpret_cast<void *>(dst.addr), src, n);
    return Status::success();
  }
  Status copyFromDevice(void *dst, DevicePtr src, uint64_t n) override {
    std::memcpy(dst, reinterpret_cast<const void *>(src.addr), n);
    return Status::success();
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, uint64_t n) override {
    std::memmove(reinterpret_cast<void *>(dst.addr),
                 reinterpret_cast<const void *>(src.addr), n);
    return Status::success();
  }
  Status fill(DevicePtr dst, uint8_t value, uint64_t n) override {
    std::memset(reinterpret_cast<void *>(dst.addr), value, n);
    return Status::success();
  }

  Status loadKernels(const Artifact &artifact) override {
#ifdef POOLRT_HOST_JIT
    const ArtifactSection *ir = artifact.find(codeSection());
    if (!ir)
      return Error::invalid("the artifact has no " + codeSection() +
                            " section (build it with --targets ...,host)");
    static std::once_flag once;
    std::call_once(once, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
    });
    auto jitOr = llvm::orc::LLJITBuilder().create();
    if (!jitOr)
      return Error{ErrorKind::State, "host JIT: " + llvm::toString(jitOr.takeError())};
    jit = std::move(*jitOr);
    auto ctx = std::make_unique<llvm::LLVMContext>();
    llvm::SMDiagnostic diag;
    auto mod = llvm::parseIR(llvm::MemoryBufferRef(ir->data, "code/host"), diag, *ctx);
    if (!mod)
      return Error::invalid("code/host is not valid LLVM IR: " +
                            diag.getMessage().str());
    if (auto err = jit->addIRModule(
            llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
      return Error{ErrorKind::State, "host JIT: " + llvm::toString(std::move(err))};
    kernels.clear();
    return Status::success();
#else
    (void)artifact;
    return Error{ErrorKind::State,
                 "this runtime was built without the host JIT"};
#endif
  }

  Status launch(const std::string &kernel, DevicePtr arena, DevicePtr staging,
                DevicePtr ids, int64_t numItems, int64_t) override {
#ifdef POOLRT_HOST_JIT
    if (!jit)
      return Error{ErrorKind::State, "host launch of " + kernel +
                                         ": no kernels loaded"};
    auto it = kernels.find(kernel);
    if (it == kernels.end()) {
      auto sym = jit->lookup(kernel);
      if (!sym)
        return Error{ErrorKind::Lookup,
                     "host launch: no kernel '" + kernel + "' in code/host"};
      it = kernels.emplace(kernel, sym->toPtr<KernelFn>()).first;
    }
    it->second(reinterpret_cast<void *>(arena.addr),
               reinterpret_cast<void *>(staging.addr),
               reinterpret_cast<void *>(ids.addr), numItems);
    return Status::success();
#else
    (void)kernel, (void)arena, (void)staging, (void)ids, (void)numItems;
    return Error{ErrorKind::State, "this runtime was built without the host JIT"};
#endif
  }
  Status synchronize() override { return Status::success(); }

  ~HostDevice() override {
    for (auto &[addr, bytes] : sizes)
      munmap(reinterpret_cast<void *>(addr), bytes);
  }

private:
  std::map<uint64_t, uint64_t> sizes;
#ifdef POOLRT_HOST_JIT
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, KernelFn> kernels;
#endif
};

} // namespace

Result<std::unique_ptr<Device>> openHostDevice() {
  return std::unique_ptr<Device>(new HostDevice());
}

} // namespace poolrt
