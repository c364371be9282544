module {
  pool.model "deepseek-v4-flash-fp8" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
    pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
    pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
    pool.layers [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4]
    pool.state_field "csa_main_kv" in "state" {dtype = "f32", layers = 21 : i64, shape = array<i64: 8, 1024>}
    pool.state_field "csa_main_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, layers = 21 : i64, shape = array<i64: 8, 1024>}
    pool.state_field "csa_idx_kv" in "state" {dtype = "f32", layers = 21 : i64, shape = array<i64: 8, 256>}
    pool.state_field "csa_idx_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, layers = 21 : i64, shape = array<i64: 8, 256>}
    pool.state_field "hca_main_kv" in "state" {dtype = "f32", in_checkpoint = false, layers = 20 : i64, shape = array<i64: 128, 512>}
    pool.state_field "hca_main_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, in_checkpoint = false, layers = 20 : i64, shape = array<i64: 128, 512>}
    pool.entry_class "kv" "page" {derived}
    pool.entry_class "kv" "page" {bytes = 177408 : i64}
    pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "dsv4-paged-state-v3:block=256:ring=128:dims=512,64,128:state=8x1024,8x256,128x512:main=fp8-2buff:index=fp8:ratios=0,0,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4:nocopy=hca_main_kv,hca_main_score:entry=packed">}
  }
}

