pool.model "tie" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "p" {dtype = "u8", row_bytes = 256 : i64}
  pool.plane "q" {dtype = "u8", row_bytes = 256 : i64}
  pool.layers [0, 4]
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 64>}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 64>}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}
