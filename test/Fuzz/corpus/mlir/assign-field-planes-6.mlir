pool.model "no_planes" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}
