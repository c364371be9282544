// copy_probe: two hand-written copy kernels over a case's contiguous runs,
// for gpu_check to time beside the generated kernel and one memcpy of the
// same bytes (issue 17, goal 1). They answer where the generated kernels'
// shortfall lies before any lowering is changed:
//   probe_ldg   16-byte loads, four in flight a thread, then the stores
//               (what the generated kernels do, over a precomputed tile
//               table instead of the layout's segments);
//   probe_bulk  sm_90's bulk copy engine: each tile comes into shared
//               memory with one cp.async.bulk (completion counted on an
//               mbarrier) and goes out with one bulk store, two tiles in
//               flight a block, one thread issuing.
// Both walk a table of tiles of at most kTile bytes (gpu_check cuts every
// run into them), tile t to block t mod grid unless PROBE_ORDER says
// otherwise. Built on the GPU machine (run.sh), one module per variant:
//   nvcc -ptx -arch=sm_90 [-DPROBE_HINT=h -DPROBE_ORDER=o] -o X.ptx bench/gpu/copy_probe.cu
// Not part of poolrt: a measuring instrument for bench/gpu only.
#include <cstdint>

struct Tile {
  unsigned long long dst, src;
  unsigned int bytes, pad0;
  unsigned long long pad1;
};
static_assert(sizeof(Tile) == 32, "gpu_check writes 32-byte tiles");

constexpr unsigned kTile = 16384; // gpu_check cuts runs at this size
constexpr int kStages = 2;        // 32 KiB of static shared memory (48 KiB is the
                                  // static limit, barriers included)

// Cache hints, chosen when nvcc builds the PTX (run.sh builds one module
// per variant, so a variant ptxas refuses costs only its own column):
//   PROBE_HINT 0  plain ld.global / st.global
//              1  loads ask L2 for 256-byte sectors (ld.global.L2::256B)
//              2  loads and stores under an L2 evict_first policy
//              3  read-only loads, no L1 allocation, 256-byte L2 prefetch;
//                 streaming stores (st.global.cs)
//   PROBE_ORDER 0  tile t to block t mod grid (round robin)
//               1  block b takes one contiguous share of the tiles
#ifndef PROBE_HINT
#define PROBE_HINT 0
#endif
#ifndef PROBE_ORDER
#define PROBE_ORDER 0
#endif

__device__ __forceinline__ uint4 loadVec(const uint4 *p, unsigned long long pol) {
#if PROBE_HINT == 0
  (void)pol;
  return *p;
#else
  uint4 r;
#if PROBE_HINT == 1
  (void)pol;
  asm("ld.global.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
#elif PROBE_HINT == 2
  asm("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p), "l"(pol));
#else
  (void)pol;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
#endif
  return r;
#endif
}

__device__ __forceinline__ void storeVec(uint4 *p, uint4 v, unsigned long long pol) {
#if PROBE_HINT == 2
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol)
               : "memory");
#elif PROBE_HINT == 3
  (void)pol;
  asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
#else
  (void)pol;
  *p = v;
#endif
}

extern "C" __global__ void __launch_bounds__(256)
    probe_ldg(const Tile *tiles, long long n) {
  unsigned long long pol = 0;
#if PROBE_HINT == 2
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
#if PROBE_ORDER == 0
  const long long first = blockIdx.x, end = n, step = gridDim.x;
#else
  const long long first = n * blockIdx.x / gridDim.x,
                  end = n * (blockIdx.x + 1) / gridDim.x, step = 1;
#endif
  for (long long t = first; t < end; t += step) {
    Tile tl = tiles[t];
    const uint4 *src = reinterpret_cast<const uint4 *>(tl.src);
    uint4 *dst = reinterpret_cast<uint4 *>(tl.dst);
    unsigned vecs = tl.bytes / 16;
    for (unsigned v = threadIdx.x; v < vecs; v += 4 * 256) {
      uint4 a[4];
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (v + k * 256 < vecs)
          a[k] = loadVec(src + v + k * 256, pol);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (v + k * 256 < vecs)
          storeVec(dst + v + k * 256, a[k], pol);
    }
  }
}

__device__ __forceinline__ unsigned smemAddr(const void *p) {
  return unsigned(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bulkLoad(unsigned buf, unsigned bar,
                                         unsigned long long src, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1], %2, [%3];" ::"r"(buf),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

__device__ __forceinline__ void waitPhase(unsigned bar, unsigned phase) {
  unsigned done = 0;
  while (!done)
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(bar), "r"(phase)
                 : "memory");
}

extern "C" __global__ void __launch_bounds__(32)
    probe_bulk(const Tile *tiles, long long n) {
  alignas(128) __shared__ unsigned char buf[kStages][kTile];
  alignas(8) __shared__ unsigned long long bar[kStages];
  if (threadIdx.x != 0)
    return;
  for (int s = 0; s < kStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smemAddr(&bar[s]))
                 : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  unsigned phase[kStages] = {};
  auto tileOf = [&](long long j) { return blockIdx.x + j * (long long)gridDim.x; };
  auto issue = [&](long long j) {
    int s = int(j % kStages);
    const Tile &tl = tiles[tileOf(j)];
    bulkLoad(smemAddr(buf[s]), smemAddr(&bar[s]), tl.src, tl.bytes);
  };
  for (long long j = 0; j < kStages && tileOf(j) < n; ++j)
    issue(j);
  for (long long j = 0; tileOf(j) < n; ++j) {
    int s = int(j % kStages);
    waitPhase(smemAddr(&bar[s]), phase[s]);
    phase[s] ^= 1;
    const Tile &tl = tiles[tileOf(j)];
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(tl.dst),
                 "r"(smemAddr(buf[s])), "r"(tl.bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    // Refill the buffer the previous tile's store read from, once that
    // store has read it (this tile's may still be reading its own).
    if (j >= 1 && tileOf(j - 1 + kStages) < n) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      issue(j - 1 + kStages);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
