pool.model "aliases" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.plane "p" {dtype = "float8_e4m3fn", row_bytes = 512 : i64}
  pool.state_field "x" in "s" {dtype = "bfloat16", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}
