//===- cuda_ops.cu - The reference-model kernel for the CUDA backend ------===//
//
// nvcc, on the GPU machine, with the model's address header force-included
// (bench/gpu/run.sh):
//
//   nvcc -O2 -std=c++17 -shared -Xcompiler -fPIC -include MODEL.h \
//        -Imodels/reference models/reference/cuda_ops.cu -o libpoolmodel-MODEL-cuda.so
//
// The arena is the engine's allocation (CudaDevice: the primary context,
// which the runtime API shares); the call's block table and tokens are
// copied to the device, the kernel runs one thread, and the call (and the
// fed-back tokens) come back.
//
//===----------------------------------------------------------------------===//

#include "device_kernel.cpp"

#include <cuda_runtime.h>

namespace {

struct Buffers {
  poolmodel::Plan *plan = nullptr; // buildPlan(), copied once
  poolmodel_call *call = nullptr;
  int *table = nullptr;
  long long *tokens = nullptr;
  long long tableCap = 0, tokensCap = 0;
};
Buffers g_buf;

bool grow(void **p, long long &cap, long long want, size_t elem) {
  if (want <= cap)
    return true;
  if (*p)
    cudaFree(*p);
  long long n = want * 2;
  if (cudaMalloc(p, size_t(n) * elem) != cudaSuccess) {
    *p = nullptr;
    cap = 0;
    return false;
  }
  cap = n;
  return true;
}

int fail(poolmodel_call *c) {
  c->error = POOLMODEL_BACKEND;
  c->error_at = (long long)cudaGetLastError();
  return c->error;
}

int run(unsigned long long arena, poolmodel_call *c, int checksum) {
  long long tokensLen = checksum || !c->extend ? c->tokens_len : c->start + c->count;
  if (!g_buf.plan) {
    poolmodel::Plan p = poolmodel::buildPlan();
    if (cudaMalloc(reinterpret_cast<void **>(&g_buf.plan), sizeof p) != cudaSuccess ||
        cudaMemcpy(g_buf.plan, &p, sizeof p, cudaMemcpyHostToDevice) != cudaSuccess) {
      g_buf.plan = nullptr;
      return fail(c);
    }
  }
  if (!g_buf.call && cudaMalloc(reinterpret_cast<void **>(&g_buf.call), sizeof(poolmodel_call)) != cudaSuccess)
    return fail(c);
  if (!grow(reinterpret_cast<void **>(&g_buf.table), g_buf.tableCap, c->table_len + 1, sizeof(int)) ||
      !grow(reinterpret_cast<void **>(&g_buf.tokens), g_buf.tokensCap, tokensLen + 1, sizeof(long long)))
    return fail(c);
  poolmodel_call d = *c;
  const int *hostTable = c->block_table;
  long long *hostTokens = c->tokens;
  d.block_table = g_buf.table;
  d.tokens = g_buf.tokens;
  if (cudaMemcpy(g_buf.table, hostTable, size_t(c->table_len) * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(g_buf.tokens, hostTokens, size_t(c->tokens_len) * sizeof(long long), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(g_buf.call, &d, sizeof d, cudaMemcpyHostToDevice) != cudaSuccess)
    return fail(c);
  poolmodel_kernel<<<1, 1>>>(reinterpret_cast<unsigned char *>(arena), g_buf.call, g_buf.plan, checksum);
  if (cudaDeviceSynchronize() != cudaSuccess ||
      cudaMemcpy(&d, g_buf.call, sizeof d, cudaMemcpyDeviceToHost) != cudaSuccess)
    return fail(c);
  if (!checksum && c->extend && d.error == POOLMODEL_OK &&
      cudaMemcpy(hostTokens, g_buf.tokens, size_t(tokensLen) * sizeof(long long), cudaMemcpyDeviceToHost) != cudaSuccess)
    return fail(c);
  d.block_table = hostTable;
  d.tokens = hostTokens;
  *c = d;
  return c->error;
}

int forwardCuda(unsigned long long arena, poolmodel_call *c) { return run(arena, c, 0); }
int checksumCuda(unsigned long long arena, poolmodel_call *c) { return run(arena, c, 1); }

const poolmodel_ops kOps = {POOLMODEL_ABI_VERSION, poolmodel::V::kModelName,
                            poolmodel::V::kLayoutFingerprint, "cuda",
                            forwardCuda, checksumCuda};

} // namespace

extern "C" __attribute__((visibility("default"))) const poolmodel_ops *
poolmodel_get_ops(void) {
  return &kOps;
}
