pool.model "fractional_row" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [4, 128, -1, -1]
  pool.state_field "win" in "state" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 5, 96>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}
