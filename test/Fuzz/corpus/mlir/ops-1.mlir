pool.model "full" attributes {block_size = 128 : i64, hash_block_size = 128 : i64, sliding_window = 4096 : i64, spec_depth = 3 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4]
  pool.state_field "score" in "s_none" {dtype = "f32", layers = 3 : i64, shape = array<i64: 8, 32>, fill = 0xFFF0000000000000 : f64, align = 1024 : i64, in_checkpoint = false}
  pool.state_field "ring" in "s_fork" {dtype = "bf16", layers = 0 : i64, shape = array<i64>, fill = -1.0 : f64}
  pool.entry_class "s_none" "state" {bytes = 64 : i64, derived, entries_per_req = 1 : i64, extra_entries = 3 : i64, transfer = #pool.transfer<"none">}
  pool.entry_class "s_fork" "state" {derived, entries_per_req = 4 : i64, transfer = #pool.transfer<"fork", tokens = 8>}
  pool.entry_class "s_copy" "state" {bytes = 4096 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "dsv4-flash-fp8">}
  pool.entry_class "kv" "page" {bytes = 2129920 : i64}
}
