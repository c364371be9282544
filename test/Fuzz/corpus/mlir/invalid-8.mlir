pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 128 : i64}
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}
