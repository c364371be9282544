/*===- poolrt.h - The C API of libpoolrt ------------------------*- C -*-===*\
 *
 * For engines that are not C++: artifacts, backends, the block pool and the
 * state-group pool. Every call returns POOLRT_OK or an error code, and
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
/* The geometry fingerprint ("0x" + 16 hex digits) and the model name. */
const char *poolrt_artifact_fingerprint(const poolrt_artifact *a);
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

/* Chained block hash (XXH64; `has_parent` 0 for the first block). */
uint64_t poolrt_hash_block(int has_parent, uint64_t parent,
                           const int64_t *tokens, size_t num_tokens);

#ifdef __cplusplus
}
#endif

#endif
