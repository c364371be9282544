pool.model "rs_ok" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -0]
  pool.state_field "w" in "state" {dtype = "bf16", layers = 0 : i64, shape = array<i64: 128, 64>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "aux" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
}
