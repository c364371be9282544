pool.model "floor_first" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "recurrent" "state" {bytes = 500 : i64, entries_per_req = 2 : i64}
}
