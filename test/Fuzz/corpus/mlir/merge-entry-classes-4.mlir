pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "f" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 2 : i64}
}
