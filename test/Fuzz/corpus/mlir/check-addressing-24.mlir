pool.model "int32_entries" attributes {allocation_bytes = 549755814144 : i64, block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 256 : i64, entries = 2147483649 : i64, entry_bytes = 256 : i64, region_offset = 0 : i64, reserved_bytes = 549755814144 : i64}
}
