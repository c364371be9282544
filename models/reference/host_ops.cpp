//===- host_ops.cpp - The reference-model kernel for the host backend -----===//
//
// Compiled once per model with its address header force-included
// (-include MODEL.h): models/reference/CMakeLists.txt builds one shared
// object per bundled model, libpoolmodel-MODEL.so, that pool-serve loads
// with --model-kernel.
//
//===----------------------------------------------------------------------===//

#include "token_model.h"

namespace {

const poolmodel::Plan &plan() {
  static const poolmodel::Plan p = poolmodel::buildPlan();
  return p;
}

int forwardHost(unsigned long long arena, poolmodel_call *c) {
  return poolmodel::forward(reinterpret_cast<unsigned char *>(arena), *c, plan());
}

int checksumHost(unsigned long long arena, poolmodel_call *c) {
  return poolmodel::checksum(reinterpret_cast<unsigned char *>(arena), *c, plan());
}

const poolmodel_ops kOps = {POOLMODEL_ABI_VERSION, poolmodel::V::kModelName,
                            poolmodel::V::kLayoutFingerprint, "host",
                            forwardHost, checksumHost};

} // namespace

extern "C" __attribute__((visibility("default"))) const poolmodel_ops *
poolmodel_get_ops(void) {
  return &kOps;
}
