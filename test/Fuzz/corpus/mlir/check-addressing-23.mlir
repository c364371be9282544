pool.model "huge_entry" attributes {allocation_bytes = 4294967552 : i64, block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 4294967552 : i64, entries = 1 : i64, entry_bytes = 4294967552 : i64, region_offset = 0 : i64, reserved_bytes = 4294967552 : i64}
}
