pool.model "add" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "c" in "big" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "s" "state" {bytes = 256 : i64, derived, entries_per_req = 1 : i64}
  pool.entry_class "plain" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
  pool.entry_class "big" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
}
