pool.model "planes_only" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}


pool.model "stale" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived, entry_bytes = 65536 : i64}
  pool.entry_class "state" "state" {arena_rows = 0 : i64, derived, entries_per_req = 1 : i64, entry_bytes = 10240 : i64}
  pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 0, run_rows = 5>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 0, envelope_rows = 64, entry_offset = 5, entry_rows = 5, ring_start = 5, run_rows = 64>], entry_row_runs = array<i64: 0, 10>, entry_rows = 10 : i64, envelope_rows = 64 : i64, image_bytes = 10240 : i64, image_ranges = [array<i64: 0, 10240>], page_class = "kv", plane_names = ["kv"], plane_widths = array<i64: 1024>, ratios = array<i64: 0, 4>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_rows = 12 : i64}
}
