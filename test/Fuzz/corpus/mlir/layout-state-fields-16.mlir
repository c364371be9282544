pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 256>}
  pool.entry_class "s" "state" {bytes = 9223372036854775807 : i64, derived, entries_per_req = 1 : i64}
}
