module {
  pool.model "qwen3.5-27b" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
    pool.state_field "conv" in "state" {dtype = "bf16", layers = 48 : i64, shape = array<i64: 3, 5120>}
    pool.state_field "temporal" in "state" {dtype = "bf16", layers = 48 : i64, shape = array<i64: 24, 128, 128>}
    pool.entry_class "kv" "page" {bytes = 528384 : i64}
    pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  }
}

