pool.model "carry" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "f" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.state_field "g" in "t" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {bytes = 128 : i64, entries_per_req = 2 : i64, extra_entries = 1 : i64}
  pool.entry_class "s" "state" {derived, entries_per_req = 2 : i64, extra_entries = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "img">}
  pool.entry_class "t" "state" {derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  pool.entry_class "t" "state" {bytes = 16 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}
