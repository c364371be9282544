pool.model "unplanned" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [128]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 128, layers = [0], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 0, entry_rows = 5, ring_start = -7, run_rows = 2>], entry_row_runs = array<i64: 0, 5>, entry_rows = 5 : i64, envelope_rows = 2 : i64, image_bytes = 5120 : i64, image_ranges = [array<i64: 0, 5120>], page_class = "kv", plane_names = ["kv"], plane_widths = array<i64: 1024>, ratios = array<i64: 128>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_rows = 6 : i64}
}
