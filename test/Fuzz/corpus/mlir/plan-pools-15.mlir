pool.model "stateful" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "s" "state" {bytes = 1 : i64, entries_per_req = 1 : i64}
}


pool.model "split" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", layers = 1 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "aux" "state" {bytes = 1000 : i64, entries_per_req = 1 : i64}
  pool.entry_class "kv" "page" {bytes = 8448 : i64}
}
