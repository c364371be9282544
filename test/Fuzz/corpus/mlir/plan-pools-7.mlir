pool.model "overflow_bytes" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "recurrent" "state" {bytes = 4611686018427387904 : i64, entries_per_req = 1 : i64}
}
