//===- CApi.cpp - The C API of libpoolrt -----------------------------------===//

#include "poolrt/poolrt.h"

#include "poolrt/Artifact.h"
#include "poolrt/BlockHash.h"
#include "poolrt/BlockPool.h"
#include "poolrt/Device.h"
#include "poolrt/Arena.h"
#include "poolrt/CacheManager.h"
#include "poolrt/Kernels.h"
#include "poolrt/Setup.h"

#include <cstring>
#include <memory>
#include <new>

using namespace poolrt;

struct poolrt_artifact {
  Artifact artifact;
  SolvedLayout layout; // the manifest, read once at open
  KernelSet kernels;
};
struct poolrt_block_pool {
  BlockPool pool;
};
struct poolrt_device {
  std::unique_ptr<Device> device;
};
struct poolrt_arena {
  poolrt_device *device;
  const poolrt_artifact *artifact;
  DeviceArena arena;
  KernelLauncher launcher;
};
struct poolrt_request {
  Request request;
};
struct poolrt_cache {
  std::unique_ptr<CacheManager> manager;
  std::vector<int32_t> blockCopy, slotCopy, imageStore, imageRestore;
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

/// Nothing may throw out of the C API: an allocation failure or an
/// unexpected exception becomes an error code (with a message that needs no
/// allocation of its own).
void reportStatic(const char *msg, char *err, size_t len) noexcept {
  if (err && len) {
    std::strncpy(err, msg, len - 1);
    err[len - 1] = '\0';
  }
}

template <typename F>
poolrt_status guarded(char *err, size_t len, F &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    reportStatic("out of memory", err, len);
    return POOLRT_STATE;
  } catch (const std::exception &e) {
    reportStatic(e.what(), err, len);
    return POOLRT_INTERNAL;
  } catch (...) {
    reportStatic("unknown exception", err, len);
    return POOLRT_INTERNAL;
  }
}

template <typename T, typename F> T guardedValue(T onError, F &&body) noexcept {
  try {
    return body();
  } catch (...) {
    return onError;
  }
}

} // namespace

extern "C" {

poolrt_status poolrt_artifact_open(const char *path, poolrt_artifact **out,
                                   char *err, size_t err_len) {
  return guarded(err, err_len, [&]() -> poolrt_status {
    if (!path || !out)
      return report(Error::invalid("poolrt_artifact_open: null argument"), err, err_len);
    auto a = readArtifactFile(path);
    if (!a.ok())
      return report(a.error(), err, err_len);
    auto layout = readSolvedLayout(*a);
    if (!layout.ok())
      return report(layout.error(), err, err_len);
    KernelSet kernels = KernelSet::fromLayout(*layout);
    *out = new (std::nothrow)
        poolrt_artifact{a.take(), layout.take(), std::move(kernels)};
    return *out ? POOLRT_OK
                : report(Error{ErrorKind::State, "out of memory"}, err, err_len);
  });
}

void poolrt_artifact_close(poolrt_artifact *a) { delete a; }

const char *poolrt_artifact_fingerprint(const poolrt_artifact *a) {
  return a ? a->kernels.fingerprint().c_str() : "";
}

uint64_t poolrt_artifact_layout_fingerprint(const poolrt_artifact *a) {
  return a ? a->layout.layoutFingerprint : 0;
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
  return guardedValue<int>(0, [&]() -> int {
    auto d = openDevice(name ? name : "");
    std::string text = d.ok() ? (*d)->description() : d.error().message;
    if (detail && len) {
      std::strncpy(detail, text.c_str(), len - 1);
      detail[len - 1] = '\0';
    }
    return d.ok() ? 1 : 0;
  });
}

poolrt_status poolrt_block_pool_create(int64_t n, poolrt_block_pool **out,
                                       char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!out)
      return report(Error::invalid("poolrt_block_pool_create: null out"), err, len);
    auto p = BlockPool::create(n);
    if (!p.ok())
      return report(p.error(), err, len);
    *out = new (std::nothrow) poolrt_block_pool{p.take()};
    return *out ? POOLRT_OK : report(Error{ErrorKind::State, "out of memory"}, err, len);
  });
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
  return guarded(err, len, [&]() -> poolrt_status {
    if (!p || !block)
      return report(Error::invalid("poolrt_block_pool_pop: null argument"), err, len);
    auto b = p->pool.pop();
    if (!b.ok())
      return report(b.error(), err, len);
    *block = b->value;
    return POOLRT_OK;
  });
}
poolrt_status poolrt_block_pool_allocate(poolrt_block_pool *p, int32_t b,
                                         char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!p)
      return report(Error::invalid("poolrt_block_pool_allocate: null pool"), err, len);
    return report(p->pool.allocate(BlockId(b)), err, len);
  });
}
poolrt_status poolrt_block_pool_claim(poolrt_block_pool *p, int32_t b, char *err,
                                      size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!p)
      return report(Error::invalid("poolrt_block_pool_claim: null pool"), err, len);
    return report(p->pool.claim(BlockId(b)), err, len);
  });
}
poolrt_status poolrt_block_pool_free(poolrt_block_pool *p, int32_t b, char *err,
                                     size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!p)
      return report(Error::invalid("poolrt_block_pool_free: null pool"), err, len);
    return report(p->pool.free(BlockId(b)), err, len);
  });
}
poolrt_status poolrt_block_pool_publish(poolrt_block_pool *p, int32_t b,
                                        uint64_t h, const int32_t *tokens,
                                        size_t n, char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!p)
      return report(Error::invalid("poolrt_block_pool_publish: null pool"), err, len);
    return report(p->pool.publish(BlockId(b), h, tokens, n), err, len);
  });
}

uint64_t poolrt_hash_block(int scheme, int hasParent, uint64_t parent,
                           const int64_t *tokens, size_t n) {
  if ((scheme != POOLRT_HASH_XXH3 && scheme != POOLRT_HASH_XXH64) || (!tokens && n > 0))
    return kNoHash;
  std::optional<BlockHash> p;
  if (hasParent)
    p = parent;
  return hashBlock(scheme == POOLRT_HASH_XXH64 ? HashScheme::Xxh64 : HashScheme::Xxh3, p,
                   tokens, n);
}

//===--- Devices, the arena, the kernels ----------------------------------===//

poolrt_status poolrt_device_open(const char *backend, poolrt_device **out,
                                 char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!backend || !out)
      return report(Error::invalid("poolrt_device_open: null argument"), err, len);
    auto d = openDevice(backend);
    if (!d.ok())
      return report(d.error(), err, len);
    *out = new (std::nothrow) poolrt_device{d.take()};
    return *out ? POOLRT_OK : report(Error{ErrorKind::State, "out of memory"}, err, len);
  });
}
void poolrt_device_close(poolrt_device *d) { delete d; }

poolrt_status poolrt_arena_create(poolrt_device *d, const poolrt_artifact *a,
                                  poolrt_arena **out, char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!d || !a || !out)
      return report(Error::invalid("poolrt_arena_create: null argument"), err, len);
    Status loaded = d->device->loadKernels(a->artifact);
    if (!loaded.ok())
      return report(loaded, err, len);
    auto arena = DeviceArena::create(*d->device, a->layout);
    if (!arena.ok())
      return report(arena.error(), err, len);
    DevicePtr base = arena->base();
    *out = new (std::nothrow)
        poolrt_arena{d, a, arena.take(), KernelLauncher(*d->device, base)};
    return *out ? POOLRT_OK : report(Error{ErrorKind::State, "out of memory"}, err, len);
  });
}
void poolrt_arena_destroy(poolrt_arena *arena) { delete arena; }
uint64_t poolrt_arena_base(const poolrt_arena *arena) {
  return arena ? arena->arena.base().addr : 0;
}

poolrt_status poolrt_arena_view(const poolrt_arena *arena, const char *what,
                                poolrt_view *out, char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!arena || !what || !out)
      return report(Error::invalid("poolrt_arena_view: null argument"), err, len);
    std::string w = what;
    size_t colon = w.find(':');
    std::string kind = w.substr(0, colon), name = colon == std::string::npos ? "" : w.substr(colon + 1);
    Result<TensorView> v = Error::invalid(
        "poolrt_arena_view: '" + w + "' is not plane:NAME, class:NAME or field:NAME");
    if (colon != std::string::npos && kind == "plane")
      v = arena->arena.plane(name);
    else if (colon != std::string::npos && kind == "class")
      v = arena->arena.classRegion(name);
    else if (colon != std::string::npos && kind == "field")
      v = arena->arena.field(name);
    if (!v.ok())
      return report(v.error(), err, len);
    if (v->shape.size() > 8)
      return report(Error::invalid("poolrt_arena_view: '" + w + "' has " +
                                   std::to_string(v->shape.size()) +
                                   " dimensions, more than 8"),
                    err, len);
    *out = poolrt_view{};
    out->data = v->data;
    out->device_type = v->deviceType;
    out->device_id = v->deviceId;
    out->dtype_code = v->dtypeCode;
    out->dtype_bits = v->dtypeBits;
    out->dtype_lanes = v->dtypeLanes;
    out->ndim = int32_t(v->shape.size());
    for (size_t i = 0; i < v->shape.size(); ++i) {
      out->shape[i] = v->shape[i];
      out->strides[i] = v->strides[i];
    }
    out->byte_offset = v->byteOffset;
    return POOLRT_OK;
  });
}

int64_t poolrt_artifact_kernel_staging_bytes(const poolrt_artifact *a,
                                             const char *kind) {
  return guardedValue<int64_t>(-1, [&]() -> int64_t {
    const KernelInfo *k = a && kind ? a->kernels.byKind(kind) : nullptr;
    return k ? k->stagingStride : -1;
  });
}

poolrt_status poolrt_arena_launch(poolrt_arena *arena, const char *kind,
                                  const int32_t *ids, size_t n, uint64_t staging,
                                  char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!arena || !kind || (!ids && n))
      return report(Error::invalid("poolrt_arena_launch: null argument"), err, len);
    const KernelInfo *k = arena->artifact->kernels.byKind(kind);
    if (!k)
      return report(Error{ErrorKind::Lookup, std::string("poolrt_arena_launch: the "
                                                         "artifact has no ") +
                                                 kind + " kernel"},
                    err, len);
    std::vector<int32_t> list(ids, ids + n);
    return report(arena->launcher.run(*k, list, DevicePtr{staging}), err, len);
  });
}

poolrt_status poolrt_arena_synchronize(poolrt_arena *arena, char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!arena)
      return report(Error::invalid("poolrt_arena_synchronize: null arena"), err, len);
    return report(arena->device->device->synchronize(), err, len);
  });
}

//===--- The cache manager ------------------------------------------------===//

poolrt_status poolrt_cache_create(const poolrt_artifact *a, int64_t interval,
                                  int prefixCaching, int scheme,
                                  poolrt_cache **out, char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!a || !out)
      return report(Error::invalid("poolrt_cache_create: null argument"), err, len);
    if (scheme != POOLRT_HASH_XXH3 && scheme != POOLRT_HASH_XXH64)
      return report(Error::invalid("poolrt_cache_create: hash scheme " +
                                   std::to_string(int(scheme)) +
                                   " is neither POOLRT_HASH_XXH3 nor POOLRT_HASH_XXH64"),
                    err, len);
    auto cfg = cacheManagerConfig(
        a->layout, CachePolicy{interval, prefixCaching != 0,
                               scheme == POOLRT_HASH_XXH64 ? HashScheme::Xxh64
                                                           : HashScheme::Xxh3});
    if (!cfg.ok())
      return report(cfg.error(), err, len);
    auto m = CacheManager::create(*cfg);
    if (!m.ok())
      return report(m.error(), err, len);
    *out = new (std::nothrow) poolrt_cache{m.take(), {}, {}, {}, {}};
    return *out ? POOLRT_OK : report(Error{ErrorKind::State, "out of memory"}, err, len);
  });
}
void poolrt_cache_destroy(poolrt_cache *c) { delete c; }
int32_t poolrt_cache_num_blocks(const poolrt_cache *c) {
  return c ? c->manager->blocks().numBlocks() : 0;
}
int32_t poolrt_cache_num_free_blocks(const poolrt_cache *c) {
  return c ? c->manager->blocks().numFree() : 0;
}
int32_t poolrt_cache_num_groups(const poolrt_cache *c) {
  return c && c->manager->groups() ? c->manager->groups()->numGroups() : 0;
}

poolrt_status poolrt_request_create(int64_t id, const int64_t *prompt, size_t n,
                                    int stateful, poolrt_request **out,
                                    char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!out || (!prompt && n))
      return report(Error::invalid("poolrt_request_create: null argument"), err, len);
    *out = new (std::nothrow) poolrt_request{};
    if (!*out)
      return report(Error{ErrorKind::State, "out of memory"}, err, len);
    Request &r = (*out)->request;
    r.id = id;
    r.tokens.assign(prompt, prompt + n);
    r.numPromptTokens = int64_t(n);
    r.state.hasPerReqCache = stateful != 0;
    r.state.numTokens = int64_t(n);
    return POOLRT_OK;
  });
}
void poolrt_request_destroy(poolrt_request *r) { delete r; }
poolrt_status poolrt_request_set_cache_salt(poolrt_request *r, const char *salt,
                                            size_t n, char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!r || (!salt && n))
      return report(Error::invalid("poolrt_request_set_cache_salt: null argument"),
                    err, len);
    Status s = r->request.setCacheSalt(std::string(salt ? salt : "", n));
    return s.ok() ? POOLRT_OK : report(s.error(), err, len);
  });
}
poolrt_status poolrt_request_append(poolrt_request *r, const int64_t *t, size_t n,
                                    char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!r || (!t && n))
      return report(Error::invalid("poolrt_request_append: null argument"), err, len);
    r->request.tokens.insert(r->request.tokens.end(), t, t + n);
    r->request.state.numTokens = r->request.numTokens();
    return POOLRT_OK;
  });
}
size_t poolrt_request_block_table(const poolrt_request *r, int32_t *out, size_t cap) {
  if (!r)
    return 0;
  const std::vector<BlockId> &t = r->request.blockTable;
  for (size_t i = 0; out && i < cap && i < t.size(); ++i)
    out[i] = t[i].value;
  return t.size();
}
int32_t poolrt_request_group(const poolrt_request *r) {
  return r ? r->request.state.group.value : -1;
}
int32_t poolrt_request_fork_source(const poolrt_request *r) {
  return r ? r->request.state.forkSource.value : -1;
}
int64_t poolrt_request_num_cached_tokens(const poolrt_request *r) {
  return r ? r->request.numCachedTokens : 0;
}
poolrt_status poolrt_request_set_num_cached_tokens(poolrt_request *r, int64_t n,
                                                   char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!r)
      return report(Error::invalid("poolrt_request_set_num_cached_tokens: null request"),
                    err, len);
    return report(r->request.setNumCachedTokens(n), err, len);
  });
}

int64_t poolrt_cache_can_allocate(poolrt_cache *c, poolrt_request *r) {
  return guardedValue<int64_t>(-1, [&]() -> int64_t {
    return c && r ? c->manager->canAllocate(r->request) : -1;
  });
}
poolrt_status poolrt_cache_allocate(poolrt_cache *c, poolrt_request *r,
                                    int64_t hit, char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!c || !r)
      return report(Error::invalid("poolrt_cache_allocate: null argument"), err, len);
    return report(c->manager->allocate(r->request, hit), err, len);
  });
}
poolrt_status poolrt_cache_hash_blocks(poolrt_cache *c, poolrt_request *r,
                                       int64_t numNew, int64_t nextForward,
                                       char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!c || !r)
      return report(Error::invalid("poolrt_cache_hash_blocks: null argument"), err, len);
    std::optional<int64_t> next;
    if (nextForward >= 0)
      next = nextForward;
    return report(c->manager->hashBlocks(r->request, numNew, std::nullopt, next), err, len);
  });
}
poolrt_status poolrt_cache_deallocate(poolrt_cache *c, poolrt_request *r,
                                      char *err, size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!c || !r)
      return report(Error::invalid("poolrt_cache_deallocate: null argument"), err, len);
    return report(c->manager->deallocate(r->request), err, len);
  });
}
int64_t poolrt_cache_prefill_chunk(poolrt_cache *c, poolrt_request *r,
                                   int64_t start, int64_t chunk) {
  return guardedValue<int64_t>(0, [&]() -> int64_t {
    return c && r ? c->manager->finalizePrefillChunk(r->request, start, chunk) : 0;
  });
}
void poolrt_cache_complete_previous_batch(poolrt_cache *c) {
  (void)guardedValue<int>(0, [&] {
    if (c)
      c->manager->completePreviousStateBatch();
    return 0;
  });
}

poolrt_status poolrt_cache_take_state_ops(poolrt_cache *c, size_t *numStores,
                                          size_t *numRestores, char *err,
                                          size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!c)
      return report(Error::invalid("poolrt_cache_take_state_ops: null cache"), err, len);
    auto ops = c->manager->takeStateMaintenanceOps();
    auto slotId = [&](int32_t group) {
      return c->manager->slotKernelId(GroupId(group));
    };
    c->imageStore.clear();
    c->imageRestore.clear();
    for (const CheckpointStoreOp &op : ops.stores) {
      c->imageStore.push_back(slotId(op.srcSlot.value));
      for (BlockId u : op.unitIds)
        c->imageStore.push_back(u.value);
    }
    for (const CheckpointRestoreOp &op : ops.restores) {
      c->imageRestore.push_back(slotId(op.dstSlot.value));
      for (BlockId u : op.unitIds)
        c->imageRestore.push_back(u.value);
    }
    if (numStores)
      *numStores = ops.stores.size();
    if (numRestores)
      *numRestores = ops.restores.size();
    return POOLRT_OK;
  });
}

void poolrt_cache_get_counters(const poolrt_cache *c, poolrt_cache_counters *out) {
  if (!out)
    return;
  *out = poolrt_cache_counters{};
  if (!c)
    return;
  // The C struct is ABI: a counter is a field by hand. The assert says so
  // when CacheFunnel::describe or CacheStats::describe gains one.
  static_assert(sizeof(poolrt_cache_counters) ==
                    sizeof(int64_t) * (describedCount<CacheFunnel>() +
                                       describedCount<CacheStats>()),
                "poolrt_cache_counters lacks a counter that CacheFunnel or "
                "CacheStats describes");
  CacheFunnel f = c->manager->funnel();
  out->demands_recorded = f.demandsRecorded;
  out->demands_declined_no_room = f.demandsDeclinedNoRoom;
  out->chunks_cut_for_demand = f.chunksCutForDemand;
  out->checkpoints_kept = f.fates.kept;
  out->checkpoints_dropped = f.fates.dropped;
  out->checkpoints_evicted = f.fates.evicted;
  out->checkpoints_orphaned = f.fates.orphaned;
  out->blocks_evicted = f.blocksEvicted;
  int64_t *kinds[][3] = {
      {&out->taken_prompt_end, &out->dropped_prompt_end, &out->read_back_prompt_end},
      {&out->taken_branch, &out->dropped_branch, &out->read_back_branch},
      {&out->taken_response_end, &out->dropped_response_end, &out->read_back_response_end},
      {&out->taken_ladder, &out->dropped_ladder, &out->read_back_ladder}};
  static_assert(sizeof(kinds) / sizeof(kinds[0]) == kNumCheckpointKinds);
  for (int k = 0; k < kNumCheckpointKinds; ++k) {
    *kinds[k][0] = f.taken[k];
    *kinds[k][1] = f.dropped[k];
    *kinds[k][2] = f.readBack[k];
  }
  const CacheStats &st = c->manager->stats();
  out->requests = st.requests;
  out->full_tokens = st.fullTokens;
  out->cached_tokens = st.cachedTokens;
  out->wanted_tokens = st.wantedTokens;
  out->compressed_tokens = st.compressedTokens;
}

poolrt_status poolrt_cache_move_boundary(poolrt_cache *c, int64_t target,
                                         poolrt_request *const *live, size_t n,
                                         poolrt_boundary_move *out, char *err,
                                         size_t len) {
  return guarded(err, len, [&]() -> poolrt_status {
    if (!c || (!live && n))
      return report(Error::invalid("poolrt_cache_move_boundary: null argument"), err, len);
    c->blockCopy.clear(); // a failed move leaves no stale copies to run
    c->slotCopy.clear();
    std::vector<Request *> ptrs;
    for (size_t i = 0; i < n; ++i)
      ptrs.push_back(live[i] ? &live[i]->request : nullptr);
    auto mv = c->manager->moveBoundary(target, ptrs);
    if (!mv.ok())
      return report(mv.error(), err, len);
    c->blockCopy = std::move(mv->blockCopyIds);
    c->slotCopy = std::move(mv->slotCopyIds);
    if (out) {
      *out = poolrt_boundary_move{};
      out->num_blocks = mv->numBlocks;
      out->num_groups = mv->numGroups;
      out->reached_target = mv->reachedTarget ? 1 : 0;
      out->block_moves = int64_t(c->blockCopy.size() / 2);
      out->slot_moves = int64_t(c->slotCopy.size() / 2);
      out->units_moved = mv->unitsMoved;
      std::strncpy(out->stop_reason, mv->stopReason.c_str(),
                   sizeof out->stop_reason - 1);
    }
    return POOLRT_OK;
  });
}

const int32_t *poolrt_cache_ops(const poolrt_cache *c, const char *which,
                                size_t *n) {
  const std::vector<int32_t> *v = nullptr;
  if (c && which) {
    std::string w = which;
    v = w == "block_copy"      ? &c->blockCopy
        : w == "slot_copy"     ? &c->slotCopy
        : w == "image_store"   ? &c->imageStore
        : w == "image_restore" ? &c->imageRestore
                               : nullptr;
  }
  if (n)
    *n = v ? v->size() : 0;
  return v && !v->empty() ? v->data() : nullptr;
}

} // extern "C"
