//===- CApi.cpp - The C API of libpoolrt -----------------------------------===//

#include "poolrt/poolrt.h"

#include "poolrt/Artifact.h"
#include "poolrt/BlockHash.h"
#include "poolrt/BlockPool.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"

#include <cstring>
#include <new>

using namespace poolrt;

struct poolrt_artifact {
  Artifact artifact;
  KernelSet kernels;
};
struct poolrt_block_pool {
  BlockPool pool;
};

namespace {

poolrt_status code(ErrorKind k) {
  switch (k) {
  case ErrorKind::InvalidArgument:
    return POOLRT_INVALID_ARGUMENT;
  case ErrorKind::InsufficientBudget:
    return POOLRT_INSUFFICIENT_BUDGET;
  case ErrorKind::Lookup:
    return POOLRT_LOOKUP;
  case ErrorKind::State:
    return POOLRT_STATE;
  case ErrorKind::Internal:
    return POOLRT_INTERNAL;
  }
  return POOLRT_INTERNAL;
}

poolrt_status report(const Error &e, char *err, size_t len) {
  if (err && len) {
    std::strncpy(err, e.message.c_str(), len - 1);
    err[len - 1] = '\0';
  }
  return code(e.kind);
}

poolrt_status report(const Status &s, char *err, size_t len) {
  return s.ok() ? POOLRT_OK : report(s.error(), err, len);
}

} // namespace

extern "C" {

poolrt_status poolrt_artifact_open(const char *path, poolrt_artifact **out,
                                   char *err, size_t err_len) {
  if (!path || !out)
    return report(Error::invalid("poolrt_artifact_open: null argument"), err, err_len);
  auto a = readArtifactFile(path);
  if (!a.ok())
    return report(a.error(), err, err_len);
  auto k = KernelSet::fromArtifact(*a);
  if (!k.ok())
    return report(k.error(), err, err_len);
  *out = new (std::nothrow) poolrt_artifact{a.take(), k.take()};
  return *out ? POOLRT_OK
              : report(Error{ErrorKind::State, "out of memory"}, err, err_len);
}

void poolrt_artifact_close(poolrt_artifact *a) { delete a; }

const char *poolrt_artifact_fingerprint(const poolrt_artifact *a) {
  return a ? a->kernels.fingerprint().c_str() : "";
}
const char *poolrt_artifact_model(const poolrt_artifact *a) {
  return a ? a->kernels.model().c_str() : "";
}
int64_t poolrt_artifact_allocation_bytes(const poolrt_artifact *a) {
  return a ? a->kernels.allocationBytes() : 0;
}
const void *poolrt_artifact_section(const poolrt_artifact *a, const char *name,
                                    size_t *size) {
  const ArtifactSection *s = a && name ? a->artifact.find(name) : nullptr;
  if (size)
    *size = s ? s->data.size() : 0;
  return s ? s->data.data() : nullptr;
}

int poolrt_backend_available(const char *name, char *detail, size_t len) {
  auto d = openDevice(name ? name : "");
  std::string text = d.ok() ? (*d)->description() : d.error().message;
  if (detail && len) {
    std::strncpy(detail, text.c_str(), len - 1);
    detail[len - 1] = '\0';
  }
  return d.ok() ? 1 : 0;
}

poolrt_status poolrt_block_pool_create(int64_t n, poolrt_block_pool **out,
                                       char *err, size_t len) {
  if (!out)
    return report(Error::invalid("poolrt_block_pool_create: null out"), err, len);
  auto p = BlockPool::create(n);
  if (!p.ok())
    return report(p.error(), err, len);
  *out = new (std::nothrow) poolrt_block_pool{p.take()};
  return *out ? POOLRT_OK : report(Error{ErrorKind::State, "out of memory"}, err, len);
}
void poolrt_block_pool_destroy(poolrt_block_pool *p) { delete p; }
int32_t poolrt_block_pool_num_free(const poolrt_block_pool *p) {
  return p ? p->pool.numFree() : 0;
}
int32_t poolrt_block_pool_lookup(const poolrt_block_pool *p, uint64_t h) {
  return p ? p->pool.lookup(h).value : -1;
}
poolrt_status poolrt_block_pool_pop(poolrt_block_pool *p, int32_t *block,
                                    char *err, size_t len) {
  if (!p || !block)
    return report(Error::invalid("poolrt_block_pool_pop: null argument"), err, len);
  auto b = p->pool.pop();
  if (!b.ok())
    return report(b.error(), err, len);
  *block = b->value;
  return POOLRT_OK;
}
poolrt_status poolrt_block_pool_allocate(poolrt_block_pool *p, int32_t b,
                                         char *err, size_t len) {
  if (!p)
    return report(Error::invalid("poolrt_block_pool_allocate: null pool"), err, len);
  return report(p->pool.allocate(BlockId(b)), err, len);
}
poolrt_status poolrt_block_pool_claim(poolrt_block_pool *p, int32_t b, char *err,
                                      size_t len) {
  if (!p)
    return report(Error::invalid("poolrt_block_pool_claim: null pool"), err, len);
  return report(p->pool.claim(BlockId(b)), err, len);
}
poolrt_status poolrt_block_pool_free(poolrt_block_pool *p, int32_t b, char *err,
                                     size_t len) {
  if (!p)
    return report(Error::invalid("poolrt_block_pool_free: null pool"), err, len);
  return report(p->pool.free(BlockId(b)), err, len);
}
poolrt_status poolrt_block_pool_publish(poolrt_block_pool *p, int32_t b,
                                        uint64_t h, const int32_t *tokens,
                                        size_t n, char *err, size_t len) {
  if (!p)
    return report(Error::invalid("poolrt_block_pool_publish: null pool"), err, len);
  return report(p->pool.publish(BlockId(b), h, tokens, n), err, len);
}

uint64_t poolrt_hash_block(int hasParent, uint64_t parent, const int64_t *tokens,
                           size_t n) {
  std::optional<BlockHash> p;
  if (hasParent)
    p = parent;
  return hashBlock(p, tokens, n);
}

} // extern "C"
