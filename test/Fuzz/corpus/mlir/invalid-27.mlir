pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "u8", fill = 2.560000e+02 : f64, layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}
