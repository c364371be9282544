pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "a" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "b" "state" {derived, entries_per_req = 1 : i64}
}
