pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "b" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "c" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "d" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "e" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}
