pool.model "tiny" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 0 : i64, spec_depth = 0 : i64} {
  pool.plane "kv" {row_bytes = 1024 : i64, dtype = "bf16"}
  pool.layers [0, 4, 128, -1]
  pool.state_field "a" in "state" {layers = 2 : i64, shape = array<i64: 3>, dtype = "f32", fill = 0.0 : f64, align = 0 : i64, in_checkpoint = true}
  pool.entry_class "kv" "page" {bytes = 1000 : i64, entries_per_req = 0 : i64, extra_entries = 0 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 2 : i64, extra_entries = 0 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}
