module {
  pool.model "kimi-k3" attributes {block_size = 128 : i64, hash_block_size = 128 : i64} {
    pool.state_field "conv" in "state" {dtype = "bf16", layers = 69 : i64, shape = array<i64: 3, 3072>}
    pool.state_field "temporal" in "state" {dtype = "f32", layers = 69 : i64, shape = array<i64: 8, 128, 128>}
    pool.entry_class "kv" "page" {bytes = 2138112 : i64}
    pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  }
}

