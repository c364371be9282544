pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "conv" in "s" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 4>}
  pool.state_field "conv" in "t" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "t" "state" {derived, entries_per_req = 1 : i64}
}
