//===- device_kernel.cpp - The reference-model kernel as a GPU entry point ===//
//
// One thread runs one call (a request's forward is a sequential scan, and
// the engine forwards one request at a time). Compiled with the model's
// address header force-included:
//
//   * nvcc, on the GPU machine: cuda_ops.cu includes this file and adds the
//     host side that copies the call in and out (bench/gpu/run.sh);
//   * clang-22 -x cuda / -x hip without any SDK (-nocudainc / -nogpuinc):
//     the PTX and gfx942/gfx950 ISA compile checks (test/Serve/kernel-isa.sh).
//
//===----------------------------------------------------------------------===//

#include "token_model.h"

#if defined(__clang__) && (defined(__HIP__) || defined(__CUDA__)) && !defined(__global__)
#define POOLMODEL_GLOBAL __attribute__((global))
#else
#define POOLMODEL_GLOBAL __global__
#endif

// `plan`: poolmodel::buildPlan(), made on the host and copied to the device.
extern "C" POOLMODEL_GLOBAL void poolmodel_kernel(unsigned char *arena,
                                                  poolmodel_call *call,
                                                  const poolmodel::Plan *plan,
                                                  int checksum) {
  if (checksum)
    poolmodel::checksum(arena, *call, *plan);
  else
    poolmodel::forward(arena, *call, *plan);
}
