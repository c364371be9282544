pool.model "v4_one_plane" attributes {block_size = 128 : i64, hash_block_size = 128 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.layers [4, 4, 4, 128, 128]
  pool.state_field "csa_main_kv" in "state" {dtype = "float32", layers = 3 : i64, shape = array<i64: 8, 32>}
  pool.state_field "csa_main_score" in "state" {dtype = "float32", fill = 0xFFF0000000000000 : f64, layers = 3 : i64, shape = array<i64: 8, 32>}
  pool.state_field "csa_idx_kv" in "state" {dtype = "float32", layers = 3 : i64, shape = array<i64: 8, 16>}
  pool.state_field "csa_idx_score" in "state" {dtype = "float32", fill = 0xFFF0000000000000 : f64, layers = 3 : i64, shape = array<i64: 8, 16>}
  pool.state_field "hca_main_kv" in "state" {dtype = "float32", layers = 2 : i64, shape = array<i64: 128, 32>}
  pool.state_field "hca_main_score" in "state" {dtype = "float32", fill = 0xFFF0000000000000 : f64, layers = 2 : i64, shape = array<i64: 128, 32>}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}
