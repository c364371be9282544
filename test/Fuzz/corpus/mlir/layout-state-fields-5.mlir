pool.model "no_layers" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "empty" in "no_layers" {dtype = "f32", layers = 0 : i64, shape = array<i64: 4, 4>}
  pool.entry_class "no_layers" "state" {derived, entries_per_req = 1 : i64}
}
