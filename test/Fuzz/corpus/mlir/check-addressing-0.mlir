pool.model "base" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", layers = 1 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}


pool.model "flash" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64, spec_depth = 3 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0, 0, 0]
  pool.entry_class "kv" "page" {bytes = 177408 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}


pool.model "flash" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64, spec_depth = 3 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0, 0, 0]
  pool.entry_class "kv" "page" {bytes = 177408 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}


pool.model "base" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}
