pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.layers [0, 0]
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}
