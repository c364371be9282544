pool.model "overflow_entries" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "recurrent" "state" {bytes = 1 : i64, entries_per_req = 2305843009213693952 : i64}
}
