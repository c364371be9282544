pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.plane "p" {dtype = "bf16", row_bytes = 0 : i64}
}
