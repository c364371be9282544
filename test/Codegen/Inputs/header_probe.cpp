// Prints what the generated header computes, for check_header.py to compare
// against the JSON report of the same compile. POOLC_NS names the model.
#include <cstdio>
#include <initializer_list>

namespace L = poolc::POOLC_NS;

static void windows(const char *name, const L::WindowParams &p) {
  for (long long g = 0; g < L::kNumSlots; g += (L::kNumSlots > 7 ? L::kNumSlots / 7 : 1)) {
    long long slot = L::physical_slot(g);
    for (long long pos : {0LL, 1LL, 2LL, 63LL, 64LL, 127LL, 128LL, 129LL, 130LL,
                          1000LL, 4095LL, 123457LL, 1LL << 40})
      std::printf("window %s %lld %lld %lld\n", name, slot, pos,
                  L::window_row(p, slot, pos));
  }
}

int main() {
  std::printf("plane_rows %lld\nslot_rows %lld\nenvelope_rows %lld\n",
              L::kPlaneRows, L::kSlotRows, L::kEnvelopeRows);
  for (long long g = 0; g < L::kNumSlots; g += (L::kNumSlots > 7 ? L::kNumSlots / 7 : 1)) {
    long long s = L::physical_slot(g);
    std::printf("slot %lld %lld %lld %lld %lld\n", g, s, L::slot_begin_row(s),
                L::slot_end_row(s), L::arena_end_row(s));
  }
#ifdef HAS_DENSE
  windows("dense", L::kDenseWindow);
#endif
#ifdef HAS_CSA
  windows("csa", L::kCsaWindow);
#endif
#ifdef HAS_HCA
  windows("hca", L::kHcaWindow);
#endif
  for (long long b : {0LL, 1LL, 77LL, L::kNumBlocks - 1})
    for (long long r : {0LL, 1LL})
      std::printf("compress %lld %lld %lld\n", b, r, L::compress_row(b, r));
  for (long long l = 0; l < L::kNumLayers; ++l)
    std::printf("base %lld %lld\n", l, L::layer_base_row(l));
  for (int p = 0; p < L::kNumPlanes; ++p)
    for (long long row : {0LL, L::kPlaneRows - 1})
      std::printf("offset %d %lld %lld\n", p, row, L::plane_byte_offset(p, row));
  return 0;
}
