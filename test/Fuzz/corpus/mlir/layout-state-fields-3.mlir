pool.model "break_run" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4, 8>}
  pool.state_field "dead" in "s" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 64, 8>}
  pool.state_field "b" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4, 8>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}
