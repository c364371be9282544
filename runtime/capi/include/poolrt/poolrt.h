/*===- poolrt.h - The C API of libpoolrt ------------------------*- C -*-===*\
 *
 * For engines that are not C++: artifacts, backends, the device arena and
 * the generated kernels, the block pool, and the cache manager (requests,
 * admission, publication, checkpoints, the moving pool boundary, the
 * counters), configured from the artifact. Every call returns POOLRT_OK or
 * an error code, and
 * writes a message naming the operation and the id into the caller's buffer
 * when one is given. Handles are opaque; nothing here throws or aborts.
 *
\*===----------------------------------------------------------------------===*/
#ifndef POOLRT_C_API_H
#define POOLRT_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  POOLRT_OK = 0,
  POOLRT_INVALID_ARGUMENT = 1,
  POOLRT_INSUFFICIENT_BUDGET = 2,
  POOLRT_LOOKUP = 3,
  POOLRT_STATE = 4,
  POOLRT_INTERNAL = 5
} poolrt_status;

typedef struct poolrt_artifact poolrt_artifact;
typedef struct poolrt_block_pool poolrt_block_pool;

/* Artifacts: read and verify a .poolpack (checksum, version). */
poolrt_status poolrt_artifact_open(const char *path, poolrt_artifact **out,
                                   char *err, size_t err_len);
void poolrt_artifact_close(poolrt_artifact *a);
/* The artifact fingerprint ("0x" + 16 hex digits: the layout, the kernels and
   their code) and the model name. */
const char *poolrt_artifact_fingerprint(const poolrt_artifact *a);
/* The layout fingerprint (the geometry alone, as the report and the header's
   kLayoutFingerprint carry it; 0 when a is NULL): a kernel built against a
   header checks matches_layout(poolrt_artifact_layout_fingerprint(a)). */
uint64_t poolrt_artifact_layout_fingerprint(const poolrt_artifact *a);
const char *poolrt_artifact_model(const poolrt_artifact *a);
/* Bytes of the one allocation the layout is carved from. */
int64_t poolrt_artifact_allocation_bytes(const poolrt_artifact *a);
/* A section's payload (NULL and 0 if absent); valid until close. */
const void *poolrt_artifact_section(const poolrt_artifact *a, const char *name,
                                    size_t *size);

/* Backends: 1 if present, 0 if absent; `detail` says what was found. */
int poolrt_backend_available(const char *name, char *detail, size_t detail_len);

/* The block pool. Ids are int32; -1 means "none". */
poolrt_status poolrt_block_pool_create(int64_t num_blocks, poolrt_block_pool **out,
                                       char *err, size_t err_len);
void poolrt_block_pool_destroy(poolrt_block_pool *p);
int32_t poolrt_block_pool_num_free(const poolrt_block_pool *p);
int32_t poolrt_block_pool_lookup(const poolrt_block_pool *p, uint64_t hash);
poolrt_status poolrt_block_pool_pop(poolrt_block_pool *p, int32_t *block,
                                    char *err, size_t err_len);
poolrt_status poolrt_block_pool_allocate(poolrt_block_pool *p, int32_t block,
                                         char *err, size_t err_len);
poolrt_status poolrt_block_pool_claim(poolrt_block_pool *p, int32_t block,
                                      char *err, size_t err_len);
poolrt_status poolrt_block_pool_free(poolrt_block_pool *p, int32_t block,
                                     char *err, size_t err_len);
poolrt_status poolrt_block_pool_publish(poolrt_block_pool *p, int32_t block,
                                        uint64_t hash, const int32_t *tokens,
                                        size_t num_tokens, char *err,
                                        size_t err_len);

/* The chain a cache's prefix hashes use (specs/block-hash.md): XXH3 seeded
 * with the parent (the default), or the reference's XXH64 over the parent's
 * bytes and the ids. */
typedef enum { POOLRT_HASH_XXH3 = 0, POOLRT_HASH_XXH64 = 1 } poolrt_hash_scheme;

/* Chained block hash under `scheme` (a poolrt_hash_scheme; `has_parent` 0
 * for the first block); UINT64_MAX (no hash) for an unknown scheme or null
 * tokens with num_tokens > 0. */
uint64_t poolrt_hash_block(int scheme, int has_parent,
                           uint64_t parent, const int64_t *tokens,
                           size_t num_tokens);

/*--- Devices, the arena and the generated kernels -------------------------*/
typedef struct poolrt_device poolrt_device;
typedef struct poolrt_arena poolrt_arena;

/* "host", "cuda" or "hip"; an absent backend is an error, not a crash. */
poolrt_status poolrt_device_open(const char *backend, poolrt_device **out,
                                 char *err, size_t err_len);
void poolrt_device_close(poolrt_device *d);
/* One allocation of the artifact's allocation_bytes on `d`, carved at its
 * offsets, with the artifact's code for this backend loaded. The device and
 * artifact must outlive the arena. */
poolrt_status poolrt_arena_create(poolrt_device *d, const poolrt_artifact *a,
                                  poolrt_arena **out, char *err, size_t err_len);
void poolrt_arena_destroy(poolrt_arena *arena);
/* The device address of the allocation. */
uint64_t poolrt_arena_base(const poolrt_arena *arena);

/* A DLPack-compatible view (DLTensor fields; strides in elements). */
typedef struct {
  uint64_t data;
  int32_t device_type; /* DLDeviceType: 1 CPU, 2 CUDA, 10 ROCm */
  int32_t device_id;
  uint8_t dtype_code; /* DLDataTypeCode */
  uint8_t dtype_bits;
  uint16_t dtype_lanes;
  int32_t ndim; /* <= 8 */
  int64_t shape[8];
  int64_t strides[8];
  uint64_t byte_offset;
} poolrt_view;
/* `what` is "plane:NAME", "class:NAME" or "field:NAME". */
poolrt_status poolrt_arena_view(const poolrt_arena *arena, const char *what,
                                poolrt_view *out, char *err, size_t err_len);
/* Bytes one item of the artifact's `kind` kernel moves through staging
 * (the staging buffer holds items x this), 0 without a staging side, -1
 * when the artifact has no such kernel. */
int64_t poolrt_artifact_kernel_staging_bytes(const poolrt_artifact *a,
                                             const char *kind);
/* Launch the artifact's kernel of `kind` (slot_copy, block_copy,
 * image_gather, ...) on `num_ids` ids, every id checked against its range
 * and the batch checked for conflicting writes first. `staging` is a
 * device address (0 when the kernel has no staging side). */
poolrt_status poolrt_arena_launch(poolrt_arena *arena, const char *kind,
                                  const int32_t *ids, size_t num_ids,
                                  uint64_t staging, char *err, size_t err_len);
poolrt_status poolrt_arena_synchronize(poolrt_arena *arena, char *err,
                                       size_t err_len);

/*--- The cache manager -----------------------------------------------------*/
typedef struct poolrt_cache poolrt_cache;
typedef struct poolrt_request poolrt_request;

/* Block size, blocks, groups, the state transfer, PAGE-unit checkpoints and
 * the boundary geometry all come from the artifact; the caller sets the
 * checkpoint interval (tokens; 0 turns the ladder off), prefix caching and
 * the hash scheme (a poolrt_hash_scheme; others are refused). */
poolrt_status poolrt_cache_create(const poolrt_artifact *a,
                                  int64_t checkpoint_interval_tokens,
                                  int prefix_caching, int hash_scheme,
                                  poolrt_cache **out, char *err,
                                  size_t err_len);
void poolrt_cache_destroy(poolrt_cache *c);
int32_t poolrt_cache_num_blocks(const poolrt_cache *c);
int32_t poolrt_cache_num_free_blocks(const poolrt_cache *c);
int32_t poolrt_cache_num_groups(const poolrt_cache *c);

/* A request: `id` names it to the checkpoint store; `stateful` 0 for a
 * request without per-request state. */
poolrt_status poolrt_request_create(int64_t id, const int64_t *prompt,
                                    size_t num_tokens, int stateful,
                                    poolrt_request **out, char *err,
                                    size_t err_len);
void poolrt_request_destroy(poolrt_request *r);
/* The tenant's cache salt (`len` bytes; 0 clears it): requests hit only
 * blocks published under the same salt. Refused once the request has been
 * admitted. */
poolrt_status poolrt_request_set_cache_salt(poolrt_request *r, const char *salt,
                                            size_t len, char *err,
                                            size_t err_len);
/* Generated tokens (tokens only grow). */
poolrt_status poolrt_request_append(poolrt_request *r, const int64_t *tokens,
                                    size_t n, char *err, size_t err_len);
/* Copies up to `cap` block ids; returns the table's length. */
size_t poolrt_request_block_table(const poolrt_request *r, int32_t *out,
                                  size_t cap);
int32_t poolrt_request_group(const poolrt_request *r); /* -1: none */
int32_t poolrt_request_fork_source(const poolrt_request *r); /* -1: none */
int64_t poolrt_request_num_cached_tokens(const poolrt_request *r);
/* The scheduler advances the KV-computed count; 0 <= n <= tokens. */
poolrt_status poolrt_request_set_num_cached_tokens(poolrt_request *r, int64_t n,
                                                   char *err, size_t err_len);

/* Prefix hit in blocks, or -1 when the request cannot be admitted now. */
int64_t poolrt_cache_can_allocate(poolrt_cache *c, poolrt_request *r);
poolrt_status poolrt_cache_allocate(poolrt_cache *c, poolrt_request *r,
                                    int64_t hit_blocks, char *err,
                                    size_t err_len);
/* After a forward over `num_new_tokens` from the request's cached tokens:
 * publish the full blocks, keep checkpoints; `next_forward_tokens` < 0
 * means unknown. */
poolrt_status poolrt_cache_hash_blocks(poolrt_cache *c, poolrt_request *r,
                                       int64_t num_new_tokens,
                                       int64_t next_forward_tokens, char *err,
                                       size_t err_len);
poolrt_status poolrt_cache_deallocate(poolrt_cache *c, poolrt_request *r,
                                      char *err, size_t err_len);
/* The prefill chunk to schedule from `start` (spec 10: aligned, cut on
 * checkpoint rungs and demand positions). */
int64_t poolrt_cache_prefill_chunk(poolrt_cache *c, poolrt_request *r,
                                   int64_t start, int64_t chunk);
/* Top of every scheduling pass. */
void poolrt_cache_complete_previous_batch(poolrt_cache *c);

/* PAGE-unit checkpoint copies for the batch being built: after this call,
 * poolrt_cache_ops returns the image_store / image_restore id tuples
 * (slot, then its units) and their count. */
poolrt_status poolrt_cache_take_state_ops(poolrt_cache *c, size_t *num_stores,
                                          size_t *num_restores, char *err,
                                          size_t err_len);

/* Counters that merge across ranks by summation. */
typedef struct {
  int64_t demands_recorded, demands_declined_no_room, chunks_cut_for_demand;
  int64_t checkpoints_kept, checkpoints_dropped, checkpoints_evicted,
      checkpoints_orphaned;
  int64_t blocks_evicted;
  /* Prefix-cache statistics (tokens over admitted prefills): hit =
   * cached/full, lost to checkpoint = (wanted - cached)/full, lost
   * unrecoverable = (compressed - wanted)/full. */
  int64_t requests, full_tokens, cached_tokens, wanted_tokens,
      compressed_tokens;
  /* State checkpoints by placement (prompt end, branch point, response
   * end, ladder): taken, dropped for want of room, read back by a hit. */
  int64_t taken_prompt_end, dropped_prompt_end, read_back_prompt_end;
  int64_t taken_branch, dropped_branch, read_back_branch;
  int64_t taken_response_end, dropped_response_end, read_back_response_end;
  int64_t taken_ladder, dropped_ladder, read_back_ladder;
} poolrt_cache_counters;
void poolrt_cache_get_counters(const poolrt_cache *c, poolrt_cache_counters *out);

/* Move the boundary between blocks and state groups (row-space models):
 * see CacheManager::moveBoundary. Every request in `live` is re-pointed.
 * The byte moves to run before the next forward are then available from
 * poolrt_cache_ops ("block_copy", "slot_copy") as (source, destination)
 * pairs. */
typedef struct {
  int64_t num_blocks, num_groups;
  int reached_target;
  int64_t block_moves, slot_moves, units_moved;
  char stop_reason[160];
} poolrt_boundary_move;
poolrt_status poolrt_cache_move_boundary(poolrt_cache *c, int64_t target_groups,
                                         poolrt_request *const *live,
                                         size_t num_live,
                                         poolrt_boundary_move *out, char *err,
                                         size_t err_len);
/* The ids of the last move_boundary ("block_copy", "slot_copy") or
 * take_state_ops ("image_store", "image_restore": units_per_checkpoint + 1
 * ids per op), valid until the next such call; NULL and 0 for none. */
const int32_t *poolrt_cache_ops(const poolrt_cache *c, const char *which,
                                size_t *num_ids);

#ifdef __cplusplus
}
#endif

#endif
