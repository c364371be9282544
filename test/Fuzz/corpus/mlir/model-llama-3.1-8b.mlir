module {
  pool.model "llama-3.1-8b" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
    pool.entry_class "kv" "page" {bytes = 2129920 : i64}
  }
}

