pool.model "stateless_page" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "recurrent" "state" {bytes = 500 : i64, entries_per_req = 2 : i64}
}


pool.model "large" attributes {block_size = 256 : i64, hash_block_size = 256 : i64} {
  pool.entry_class "kv" "page" {bytes = 20000000 : i64}
  pool.entry_class "state" "state" {bytes = 20000000 : i64, entries_per_req = 1 : i64}
}


pool.model "stateless" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
}
