pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.plane "p" {dtype = "f12", row_bytes = 512 : i64}
}
