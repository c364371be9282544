pool.model "align" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "wide" in "s" {align = 1024 : i64, dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "tail" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 190>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}
