pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 9223372036854775807 : i64}
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}
