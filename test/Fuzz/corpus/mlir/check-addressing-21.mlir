pool.model "huge_slot" attributes {allocation_bytes = 8589936640 : i64, block_size = 256 : i64, budget = 8589936640 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 8589936640 : i64} {
  pool.plane "kv" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.layers [0]
  pool.entry_class "kv" "page" {derived, entries = 0 : i64, entry_bytes = 0 : i64, reserved_bytes = 0 : i64}
  pool.entry_class "state" "state" {derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 4294968320 : i64, reserved_bytes = 8589936640 : i64}
  pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 0, run_rows = 5>], entry_row_runs = array<i64: 0, 5>, entry_rows = 8388610 : i64, envelope_rows = 0 : i64, image_bytes = 2560 : i64, image_ranges = [array<i64: 0, 2560>], num_blocks = 0 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["kv"], plane_offsets = array<i64: 0>, plane_rows = 16777220 : i64, plane_widths = array<i64: 512>, ratios = array<i64: 0>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 2 : i64, slot_rows = 8388610 : i64}
}
