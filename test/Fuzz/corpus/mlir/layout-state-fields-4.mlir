pool.model "zero_byte_runs" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "dead" in "none_carried" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 8, 8>}
  pool.state_field "dead_a" in "mixed" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 8, 8>}
  pool.state_field "empty" in "mixed" {dtype = "f32", layers = 0 : i64, shape = array<i64: 4, 4>}
  pool.state_field "dead_b" in "mixed" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 8, 8>}
  pool.entry_class "none_carried" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "mixed" "state" {derived, entries_per_req = 1 : i64}
}
