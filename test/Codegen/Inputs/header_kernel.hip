// Device code calling every address function of the generated header.
namespace L = poolc::POOLC_NS;
__attribute__((global)) void probe(long long *out, long long slot, long long pos,
                                   long long block, int layer) {
  out[0] = L::window_row(L::kCsaWindow, slot, pos);
  out[1] = L::compress_row(block, 1);
  out[2] = L::absolute_row(layer, out[0]);
  out[3] = L::plane_byte_offset(L::kPlaneNope, out[2]);
  out[4] = L::slot_begin_row(L::physical_slot(slot));
}
