pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "conv" in "missing" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 4>}
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}
