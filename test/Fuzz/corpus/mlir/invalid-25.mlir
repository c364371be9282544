pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "bf16", fill = 1.000000e-01 : f64, layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}
