pool.model "flash" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64, spec_depth = 3 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0, 0, 0]
  pool.entry_class "kv" "page" {bytes = 177408 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}
