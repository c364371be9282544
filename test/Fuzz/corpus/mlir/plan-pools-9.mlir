pool.model "overflow_sum" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "a" "state" {bytes = 576460752303423488 : i64, entries_per_req = 1 : i64}
  pool.entry_class "b" "state" {bytes = 576460752303423488 : i64, entries_per_req = 1 : i64}
}

pool.model "zero_entry" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "s" "state" {bytes = 1 : i64, entry_bytes = 0 : i64, entries_per_req = 1 : i64}
}
