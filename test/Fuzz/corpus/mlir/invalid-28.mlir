pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4611686018427387904, 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}
