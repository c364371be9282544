/* The C API from C: artifact, backends, block pool misuse; with a second
 * (row-space, copy-transfer) artifact: the host device, the arena and its
 * views, kernel launches, and the cache manager: admission, publication, a
 * checkpoint store op, moving the boundary, counters. */
#include "poolrt/poolrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed = 0, passed = 0;
#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (cond)                                                                  \
      ++passed;                                                                \
    else {                                                                     \
      ++failed;                                                                \
      printf("FAIL: %s (line %d)\n", #cond, __LINE__);                         \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  char err[256];
  poolrt_artifact *a = NULL;
  EXPECT(argc == 2 || argc == 3);
  EXPECT(poolrt_artifact_open(argv[1], &a, err, sizeof err) == POOLRT_OK);
  if (a) {
    EXPECT(strncmp(poolrt_artifact_fingerprint(a), "0x", 2) == 0);
    EXPECT(poolrt_artifact_allocation_bytes(a) > 0);
    size_t n = 0;
    EXPECT(poolrt_artifact_section(a, "manifest", &n) != NULL && n > 0);
    /* The layout fingerprint is the one the compiler wrote in the manifest. */
    {
      size_t mn = 0;
      const char *m = (const char *)poolrt_artifact_section(a, "manifest", &mn);
      char *text = (char *)calloc(mn + 1, 1);
      const char *at = NULL;
      if (text && m) {
        memcpy(text, m, mn);
        at = strstr(text, "\"layout_fingerprint\": \"");
      }
      EXPECT(at != NULL);
      if (at) {
        unsigned long long want = strtoull(at + strlen("\"layout_fingerprint\": \""), NULL, 16);
        EXPECT(want != 0 && poolrt_artifact_layout_fingerprint(a) == want);
      }
      free(text);
      EXPECT(poolrt_artifact_layout_fingerprint(NULL) == 0);
    }
    EXPECT(poolrt_artifact_section(a, "no-such", &n) == NULL && n == 0);
    poolrt_artifact_close(a);
  }
  EXPECT(poolrt_artifact_open("/nonexistent.poolpack", &a, err, sizeof err) != POOLRT_OK);
  EXPECT(strstr(err, "nonexistent") != NULL);

  char detail[256];
  EXPECT(poolrt_backend_available("host", detail, sizeof detail) == 1);
  EXPECT(poolrt_backend_available("bogus", detail, sizeof detail) == 0);

  poolrt_block_pool *p = NULL;
  EXPECT(poolrt_block_pool_create(4, &p, err, sizeof err) == POOLRT_OK);
  int32_t b = -1;
  EXPECT(poolrt_block_pool_pop(p, &b, err, sizeof err) == POOLRT_OK && b == 0);
  EXPECT(poolrt_block_pool_allocate(p, b, err, sizeof err) == POOLRT_OK);
  int64_t toks[4] = {0, 1, 2, 3};
  int32_t toks32[4] = {0, 1, 2, 3};
  /* The reference's chain, then the default one (XXH3-64 of the ids as
   * int64 LE, seeded with the parent: 0 for the first block). */
  EXPECT(poolrt_hash_block(POOLRT_HASH_XXH64, 0, 0, toks, 4) == 15419903723500502158ull);
  uint64_t h = poolrt_hash_block(POOLRT_HASH_XXH3, 0, 0, toks, 4);
  EXPECT(h == 3351146345649969386ull);
  int64_t next[4] = {4, 5, 6, 7};
  EXPECT(poolrt_hash_block(POOLRT_HASH_XXH3, 1, h, next, 4) == 16070428996067408666ull);
  EXPECT(poolrt_hash_block(7, 0, 0, toks, 4) == UINT64_MAX);
  EXPECT(poolrt_hash_block(POOLRT_HASH_XXH3, 0, 0, NULL, 4) == UINT64_MAX);
  EXPECT(poolrt_block_pool_publish(p, b, h, toks32, 4, err, sizeof err) == POOLRT_OK);
  EXPECT(poolrt_block_pool_lookup(p, h) == b);
  EXPECT(poolrt_block_pool_free(p, b, err, sizeof err) == POOLRT_OK);
  EXPECT(poolrt_block_pool_free(p, b, err, sizeof err) != POOLRT_OK); /* Q2 */
  EXPECT(strlen(err) > 0);
  EXPECT(poolrt_block_pool_claim(p, 99, err, sizeof err) != POOLRT_OK);
  poolrt_block_pool_destroy(p);

  if (argc == 3) {
    poolrt_artifact *v4 = NULL;
    poolrt_device *dev = NULL;
    poolrt_arena *arena = NULL;
    poolrt_cache *cache = NULL;
    EXPECT(poolrt_artifact_open(argv[2], &v4, err, sizeof err) == POOLRT_OK);
    EXPECT(poolrt_device_open("host", &dev, err, sizeof err) == POOLRT_OK);
    EXPECT(poolrt_device_open("bogus", &(poolrt_device *){NULL}, err, sizeof err) != POOLRT_OK);
    if (v4 && dev &&
        poolrt_arena_create(dev, v4, &arena, err, sizeof err) == POOLRT_OK) {
      poolrt_view view;
      EXPECT(poolrt_arena_view(arena, "plane:nope", &view, err, sizeof err) == POOLRT_OK);
      EXPECT(view.ndim == 2 && view.shape[1] == 512 && view.device_type == 1);
      EXPECT(view.data == poolrt_arena_base(arena));
      EXPECT(poolrt_arena_view(arena, "plane:nosuch", &view, err, sizeof err) != POOLRT_OK);
      EXPECT(poolrt_arena_view(arena, "nonsense", &view, err, sizeof err) == POOLRT_INVALID_ARGUMENT);
      int32_t bad[2] = {0, 1 << 30};
      EXPECT(poolrt_arena_launch(arena, "block_copy", bad, 2, 0, err, sizeof err) != POOLRT_OK);
      EXPECT(poolrt_arena_launch(arena, "no_such_kind", bad, 2, 0, err, sizeof err) == POOLRT_LOOKUP);
    } else {
      EXPECT(0 && "arena on the host device");
      printf("%s\n", err);
    }
    poolrt_cache *refused = NULL;
    EXPECT(poolrt_cache_create(v4, -1, 1, POOLRT_HASH_XXH3, &refused, err, sizeof err) == POOLRT_INVALID_ARGUMENT);
    EXPECT(refused == NULL && strstr(err, "checkpoint interval must be >= 0") != NULL);
    EXPECT(poolrt_cache_create(v4, 1024, 1, 2, &refused, err, sizeof err) == POOLRT_INVALID_ARGUMENT);
    EXPECT(refused == NULL && strstr(err, "hash scheme 2") != NULL);
    EXPECT(poolrt_cache_create(v4, 1024, 1, POOLRT_HASH_XXH3, &cache, err, sizeof err) == POOLRT_OK);
    if (cache && arena) {
      int32_t groups0 = poolrt_cache_num_groups(cache);
      int32_t blocks0 = poolrt_cache_num_blocks(cache);
      EXPECT(groups0 == 4 && blocks0 > 0);
      int64_t prompt[5 * 256 + 3];
      for (int i = 0; i < 5 * 256 + 3; ++i)
        prompt[i] = 11 + 5 * i;
      poolrt_request *r = NULL;
      EXPECT(poolrt_request_create(1, prompt, 5 * 256 + 3, 1, &r, err, sizeof err) == POOLRT_OK);
      /* Not allocated yet: nothing to publish, free or re-point. */
      int32_t free0 = poolrt_cache_num_free_blocks(cache);
      EXPECT(poolrt_cache_hash_blocks(cache, r, 256, -1, err, sizeof err) == POOLRT_STATE);
      EXPECT(strstr(err, "not allocated") != NULL);
      EXPECT(poolrt_cache_deallocate(cache, r, err, sizeof err) == POOLRT_STATE);
      EXPECT(strstr(err, "not allocated") != NULL);
      poolrt_request *unallocated[1] = {r};
      EXPECT(poolrt_cache_move_boundary(cache, groups0, unallocated, 1, NULL, err, sizeof err) == POOLRT_STATE);
      EXPECT(poolrt_cache_num_free_blocks(cache) == free0);
      EXPECT(poolrt_request_set_num_cached_tokens(r, -5, err, sizeof err) == POOLRT_INVALID_ARGUMENT);
      EXPECT(poolrt_cache_can_allocate(cache, r) == 0);
      EXPECT(poolrt_cache_allocate(cache, r, 0, err, sizeof err) == POOLRT_OK);
      int32_t table[16];
      EXPECT(poolrt_request_block_table(r, table, 16) == 6);
      EXPECT(poolrt_request_group(r) >= 0);
      /* The ladder: the first chunk ends on the 1024-token rung. */
      int64_t chunk = poolrt_cache_prefill_chunk(cache, r, 0, 5 * 256 + 3);
      EXPECT(chunk == 1024);
      EXPECT(poolrt_cache_hash_blocks(cache, r, chunk, 259, err, sizeof err) == POOLRT_OK);
      EXPECT(poolrt_request_set_num_cached_tokens(r, chunk, err, sizeof err) == POOLRT_OK);
      EXPECT(poolrt_request_set_num_cached_tokens(r, 99999, err, sizeof err) == POOLRT_INVALID_ARGUMENT);
      EXPECT(poolrt_request_num_cached_tokens(r) == chunk);
      EXPECT(poolrt_cache_allocate(cache, r, -1, err, sizeof err) != POOLRT_OK);
      size_t stores = 0, restores = 0, nids = 0;
      EXPECT(poolrt_cache_take_state_ops(cache, &stores, &restores, err, sizeof err) == POOLRT_OK);
      EXPECT(stores == 1 && restores == 0);
      const int32_t *ids = poolrt_cache_ops(cache, "image_store", &nids);
      EXPECT(ids != NULL && nids == 6); /* the slot, then its 5 PAGE units */
      if (ids && nids == 6) {
        /* Write a pattern image into the slot (image_scatter from staging),
         * keep it (image_store), resume it into a poisoned slot
         * (image_restore), gather that slot back and compare. */
        int64_t image = poolrt_artifact_kernel_staging_bytes(v4, "image_gather");
        EXPECT(image == 5242880);
        unsigned char *pattern = malloc((size_t)image), *poison = malloc((size_t)image),
                      *back = malloc((size_t)image);
        if (pattern && poison && back && image > 0) {
          for (int64_t i = 0; i < image; ++i)
            pattern[i] = (unsigned char)(i * 131 + 7);
          memset(poison, 0xA5, (size_t)image);
          int32_t slot = ids[0], other = ids[0] - 1;
          EXPECT(poolrt_arena_launch(arena, "image_scatter", &slot, 1,
                                     (uint64_t)(uintptr_t)pattern, err, sizeof err) == POOLRT_OK);
          EXPECT(poolrt_arena_launch(arena, "image_scatter", &other, 1,
                                     (uint64_t)(uintptr_t)poison, err, sizeof err) == POOLRT_OK);
          EXPECT(poolrt_arena_launch(arena, "image_store", ids, nids, 0, err, sizeof err) == POOLRT_OK);
          int32_t restore[6];
          memcpy(restore, ids, sizeof restore);
          restore[0] = other;
          EXPECT(poolrt_arena_launch(arena, "image_restore", restore, 6, 0, err, sizeof err) == POOLRT_OK);
          EXPECT(poolrt_arena_launch(arena, "image_gather", &other, 1,
                                     (uint64_t)(uintptr_t)back, err, sizeof err) == POOLRT_OK);
          EXPECT(poolrt_arena_synchronize(arena, err, sizeof err) == POOLRT_OK);
          EXPECT(memcmp(back, pattern, (size_t)image) == 0);
          /* A staging kernel without staging is refused. */
          EXPECT(poolrt_arena_launch(arena, "image_gather", &other, 1, 0, err, sizeof err) != POOLRT_OK);
        }
        free(pattern);
        free(poison);
        free(back);
      }
      poolrt_cache_complete_previous_batch(cache);
      poolrt_cache_counters ctr;
      poolrt_cache_get_counters(cache, &ctr);
      EXPECT(ctr.checkpoints_kept == 1);
      EXPECT(ctr.requests == 1 && ctr.full_tokens == 5 * 256 + 3 && ctr.cached_tokens == 0);
      /* More slots: blocks retire from the top, the request follows. */
      poolrt_boundary_move mv;
      poolrt_request *live[1] = {r};
      EXPECT(poolrt_cache_move_boundary(cache, groups0 + 2, live, 1, &mv, err, sizeof err) == POOLRT_OK);
      EXPECT(mv.reached_target == 1 && mv.num_groups == groups0 + 2);
      EXPECT(mv.num_blocks < blocks0 && poolrt_cache_num_blocks(cache) == mv.num_blocks);
      size_t nb = 0;
      const int32_t *moves = poolrt_cache_ops(cache, "block_copy", &nb);
      EXPECT(nb == (size_t)(2 * mv.block_moves));
      if (nb)
        EXPECT(poolrt_arena_launch(arena, "block_copy", moves, nb, 0, err, sizeof err) == POOLRT_OK);
      EXPECT(poolrt_cache_move_boundary(cache, 100000, live, 1, &mv, err, sizeof err) == POOLRT_INVALID_ARGUMENT);
      EXPECT(strstr(err, "outside") != NULL);
      poolrt_request *twice[2] = {r, r};
      int32_t blocks1 = poolrt_cache_num_blocks(cache);
      EXPECT(poolrt_cache_move_boundary(cache, groups0, twice, 2, &mv, err, sizeof err) == POOLRT_INVALID_ARGUMENT);
      EXPECT(strstr(err, "twice") != NULL && poolrt_cache_num_blocks(cache) == blocks1);
      EXPECT(poolrt_cache_deallocate(cache, r, err, sizeof err) == POOLRT_OK);
      int32_t freed = poolrt_cache_num_free_blocks(cache);
      EXPECT(poolrt_cache_deallocate(cache, r, err, sizeof err) == POOLRT_STATE);
      EXPECT(strstr(err, "not allocated") != NULL && poolrt_cache_num_free_blocks(cache) == freed);
      poolrt_request_destroy(r);
    }
    poolrt_cache_destroy(cache);
    poolrt_arena_destroy(arena);
    poolrt_device_close(dev);
    poolrt_artifact_close(v4);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
