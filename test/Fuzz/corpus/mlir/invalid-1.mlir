pool.model "m" attributes {block_size = 4611686018427387904 : i64, hash_block_size = 4611686018427387904 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}
