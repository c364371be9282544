pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {bytes = 4096 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}
