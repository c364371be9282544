//===- KernelGen.h - Lower the kernel descriptions per target ---*- C++ -*-===//
#ifndef POOL_CODEGEN_KERNELGEN_H
#define POOL_CODEGEN_KERNELGEN_H

#include "codegen/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::pool {

/// The targets poolc lowers to: gfx942, gfx950 (AMDGPU), sm_90 (NVIDIA),
/// host (this CPU). One table in KernelGen.cpp gives each its name and the
/// format of its code in an artifact; everything else asks it.
enum class Target { Gfx942, Gfx950, Sm90, Host };
std::optional<Target> parseTarget(llvm::StringRef name);
const char *targetName(Target target);
/// The artifact's code format: "amdgpu-code-object-v5", "ptx", "llvm-ir".
const char *targetCodeFormat(Target target);
bool isAmdTarget(Target target);

bool isKnownTarget(llvm::StringRef target);
/// "gfx942, gfx950, sm_90, host".
const char *knownTargetList();

/// The kernels as MLIR: for a GPU target a gpu.module of gpu.funcs (grid
/// (grid_x, num_items), 256 threads), for the host func.funcs that loop over
/// the items. The body is one builder for every target; on AMD, kernels
/// whose arena view passes 4 GiB address through buffer descriptors rebased
/// per item.
OwningOpRef<ModuleOp> buildKernelModule(MLIRContext *ctx,
                                        const std::vector<KernelSpec> &specs,
                                        llvm::StringRef target);

enum class CodeFormat {
  Assembly, // AMD ISA text, PTX, host LLVM IR text
  Binary,   // AMD code object (ELF), PTX, host LLVM IR text
};

/// Lower `model`'s kernels to `target` in `kernelCtx` and return the code.
/// The lowering's own diagnostics go to `kernelCtx`; a failure is also an
/// error on the model. The AMD binary needs ld.lld (found beside the LLVM
/// tools).
FailureOr<std::string> lowerKernels(ModelOp model, MLIRContext *kernelCtx,
                                    const std::vector<KernelSpec> &specs,
                                    llvm::StringRef target, CodeFormat format);

/// lowerKernels for several targets at once, each in a context of its own
/// (kernelCtx's dialect registry) on its own thread, up to the machine's
/// cores; the result is in `targets` order and identical to lowering them
/// one by one. A failure is an error on the model naming the first target
/// (in `targets` order) that failed, with that lowering's diagnostics.
FailureOr<std::vector<std::string>>
lowerKernelsForTargets(ModelOp model, MLIRContext *kernelCtx,
                       const std::vector<KernelSpec> &specs,
                       const std::vector<std::string> &targets, CodeFormat format);

/// AMD code object version: 5 (see specs/artifact-format.md).
constexpr const char *kAmdCodeObjectAbi = "500";

} // namespace mlir::pool

#endif // POOL_CODEGEN_KERNELGEN_H
