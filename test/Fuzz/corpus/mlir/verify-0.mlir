pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
}
