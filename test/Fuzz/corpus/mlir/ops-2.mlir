pool.model "order" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "a" "state" {bytes = 8 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "img">}
  pool.entry_class "b" "state" {bytes = 8 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 2, layout_id = "">}
}
