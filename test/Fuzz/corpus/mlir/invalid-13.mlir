pool.model "m" attributes {block_size = 64 : i64, hash_block_size = 64 : i64} {
  pool.layers [0, 4, 128]
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}
