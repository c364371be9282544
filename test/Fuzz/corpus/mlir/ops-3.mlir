pool.model "solved" attributes {allocation_bytes = 10240 : i64, block_size = 16 : i64, budget = 10000 : i64, hash_block_size = 16 : i64, max_num_seqs = 8 : i64, total_reserved_bytes = 10000 : i64} {
  pool.state_field "a" in "recurrent" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64, entries = 2 : i64, entry_bytes = 1000 : i64, region_offset = 0 : i64, reserved_bytes = 2000 : i64}
  pool.entry_class "recurrent" "state" {arena_bytes = 256 : i64, bytes = 244 : i64, checkpoint_ranges = array<i64: 0, 12>, derived, entries = 16 : i64, entries_per_req = 2 : i64, entry_bytes = 500 : i64, region_offset = 2048 : i64, reserved_bytes = 8000 : i64}
}
