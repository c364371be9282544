pool.model "extra" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 100 : i64}
  pool.entry_class "recurrent" "state" {bytes = 10 : i64, entries_per_req = 1 : i64, extra_entries = 3 : i64}
}
