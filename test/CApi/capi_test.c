/* The C API from C: artifact, backends, block pool misuse. */
#include "poolrt/poolrt.h"

#include <stdio.h>
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
  EXPECT(argc == 2);
  EXPECT(poolrt_artifact_open(argv[1], &a, err, sizeof err) == POOLRT_OK);
  if (a) {
    EXPECT(strncmp(poolrt_artifact_fingerprint(a), "0x", 2) == 0);
    EXPECT(poolrt_artifact_allocation_bytes(a) > 0);
    size_t n = 0;
    EXPECT(poolrt_artifact_section(a, "manifest", &n) != NULL && n > 0);
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
  uint64_t h = poolrt_hash_block(0, 0, toks, 4);
  EXPECT(h == 15419903723500502158ull);
  EXPECT(poolrt_block_pool_publish(p, b, h, toks32, 4, err, sizeof err) == POOLRT_OK);
  EXPECT(poolrt_block_pool_lookup(p, h) == b);
  EXPECT(poolrt_block_pool_free(p, b, err, sizeof err) == POOLRT_OK);
  EXPECT(poolrt_block_pool_free(p, b, err, sizeof err) != POOLRT_OK); /* Q2 */
  EXPECT(strlen(err) > 0);
  EXPECT(poolrt_block_pool_claim(p, 99, err, sizeof err) != POOLRT_OK);
  poolrt_block_pool_destroy(p);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
