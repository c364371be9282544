pool.model "ok" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "c" in "conv" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 3, 64>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "kv" "page" {bytes = 24 : i64}
  pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
  pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
  pool.entry_class "conv" "state" {derived, entries_per_req = 2 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}
