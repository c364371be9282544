module {
  pool.model "deepseek-v3-mla" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
    pool.entry_class "kv" "page" {bytes = 1124352 : i64}
  }
}

