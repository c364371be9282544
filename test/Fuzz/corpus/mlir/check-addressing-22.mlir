pool.model "rebase_region" attributes {allocation_bytes = 6442451200 : i64, block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 3221225472 : i64, entries = 2 : i64, entry_bytes = 3221225472 : i64, region_offset = 0 : i64, reserved_bytes = 6442450944 : i64}
  pool.entry_class "small" "state" {bytes = 256 : i64, entries = 1 : i64, entries_per_req = 1 : i64, entry_bytes = 256 : i64, region_offset = 6442450944 : i64, reserved_bytes = 256 : i64}
}
