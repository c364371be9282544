//===- fuzz_capi.cpp - libFuzzer target: the C API's cache entry points ---===//
//
// The input is a program of C API calls over one cache manager configured
// from a real artifact (POOLC_FUZZ_ARTIFACT, written by poolc when the
// fuzz build is configured): requests with fuzzed prompts, admissions with
// fuzzed hit counts, chunks, hashes, appends, frees (twice, too), boundary
// moves with fuzzed live lists and targets. Every call either succeeds or
// returns an error; none may crash, leak or corrupt the pools.
//
//===----------------------------------------------------------------------===//

#include "poolrt/poolrt.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

poolrt_artifact *gArtifact = nullptr;

struct Input {
  const uint8_t *p;
  size_t n;
  bool empty() const { return n == 0; }
  uint8_t byte() {
    if (!n)
      return 0;
    --n;
    return *p++;
  }
  int64_t small(int64_t mod) { return mod > 0 ? int64_t(byte()) % mod : 0; }
  int64_t wide() {
    int64_t v = 0;
    for (int i = 0; i < 4; ++i)
      v = (v << 8) | byte();
    return (v & 1) ? -v : v;
  }
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *path = std::getenv("POOLC_FUZZ_ARTIFACT");
  char err[512];
  if (!path || poolrt_artifact_open(path, &gArtifact, err, sizeof err) != 0) {
    std::fprintf(stderr, "fuzz_capi: set POOLC_FUZZ_ARTIFACT to a .poolpack (%s)\n",
                 path ? err : "unset");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in{data, size};
  char err[256];
  poolrt_cache *cache = nullptr;
  int64_t interval = in.small(4) * 64;
  int prefixCaching = in.byte() & 1;
  if (poolrt_cache_create(gArtifact, interval, prefixCaching, in.byte() % 3, &cache, err,
                          sizeof err) != 0)
    return 0;
  std::vector<poolrt_request *> reqs;
  int64_t nextId = 1;
  while (!in.empty() && reqs.size() < 64) {
    uint8_t op = in.byte() % 10;
    poolrt_request *r = reqs.empty() ? nullptr : reqs[size_t(in.small(int64_t(reqs.size())))];
    switch (op) {
    case 0: { // a request sharing a prefix family
      int64_t len = in.small(200) * 7 + in.small(16);
      int64_t family = in.small(3);
      std::vector<int64_t> prompt(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i)
        prompt[size_t(i)] = family * 1000 + i;
      poolrt_request *nr = nullptr;
      if (poolrt_request_create(nextId++, prompt.data(), prompt.size(),
                                in.byte() & 1, &nr, err, sizeof err) == 0)
        reqs.push_back(nr);
      break;
    }
    case 1:
      if (r) {
        int64_t hit = poolrt_cache_can_allocate(cache, r);
        int64_t ask = (in.byte() & 1) ? hit : in.wide();
        (void)poolrt_cache_allocate(cache, r, ask, err, sizeof err);
      }
      break;
    case 2:
      if (r)
        (void)poolrt_cache_hash_blocks(cache, r, in.wide() % 4096,
                                       in.wide() % 4096, err, sizeof err);
      break;
    case 3:
      if (r)
        (void)poolrt_cache_deallocate(cache, r, err, sizeof err);
      break;
    case 4:
      if (r)
        (void)poolrt_request_set_num_cached_tokens(r, in.wide() % 4096, err,
                                                   sizeof err);
      break;
    case 5:
      if (r) {
        int64_t t[4] = {in.wide(), in.wide(), in.wide(), in.wide()};
        (void)poolrt_request_append(r, t, size_t(in.small(5)), err, sizeof err);
      }
      break;
    case 6:
      if (r)
        (void)poolrt_cache_prefill_chunk(cache, r, in.wide() % 4096,
                                         in.wide() % 4096);
      break;
    case 7: {
      size_t stores = 0, restores = 0;
      poolrt_cache_complete_previous_batch(cache);
      (void)poolrt_cache_take_state_ops(cache, &stores, &restores, err,
                                        sizeof err);
      size_t n = 0;
      (void)poolrt_cache_ops(cache, "image_store", &n);
      break;
    }
    case 8: {
      std::vector<poolrt_request *> live;
      for (int i = 0, k = int(in.small(6)); i < k && !reqs.empty(); ++i)
        live.push_back(reqs[size_t(in.small(int64_t(reqs.size())))]);
      poolrt_boundary_move mv;
      (void)poolrt_cache_move_boundary(cache, in.wide() % 1024, live.data(),
                                       live.size(), &mv, err, sizeof err);
      break;
    }
    case 9: {
      int32_t table[64];
      if (r)
        (void)poolrt_request_block_table(r, table, 64);
      poolrt_cache_counters c;
      poolrt_cache_get_counters(cache, &c);
      break;
    }
    }
  }
  for (poolrt_request *r : reqs) {
    (void)poolrt_cache_deallocate(cache, r, err, sizeof err);
    poolrt_request_destroy(r);
  }
  poolrt_cache_destroy(cache);
  return 0;
}
