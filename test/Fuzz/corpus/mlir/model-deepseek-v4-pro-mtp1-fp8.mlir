module {
  pool.model "deepseek-v4-pro-mtp1-fp8" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64, spec_depth = 1 : i64} {
    pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
    pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
    pool.layers [128, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0]
    pool.state_field "csa_main_kv" in "state" {dtype = "f32", layers = 30 : i64, shape = array<i64: 9, 1024>}
    pool.state_field "csa_main_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, layers = 30 : i64, shape = array<i64: 9, 1024>}
    pool.state_field "csa_idx_kv" in "state" {dtype = "f32", layers = 30 : i64, shape = array<i64: 9, 256>}
    pool.state_field "csa_idx_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, layers = 30 : i64, shape = array<i64: 9, 256>}
    pool.state_field "hca_main_kv" in "state" {dtype = "f32", in_checkpoint = false, layers = 31 : i64, shape = array<i64: 129, 512>}
    pool.state_field "hca_main_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, in_checkpoint = false, layers = 31 : i64, shape = array<i64: 129, 512>}
    pool.entry_class "kv" "page" {derived}
    pool.entry_class "kv" "page" {bytes = 253440 : i64}
    pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "dsv4-paged-state-v3:block=256:ring=129:dims=512,64,128:state=9x1024,9x256,129x512:main=fp8-2buff:index=fp8:ratios=128,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,128,4,0:nocopy=hca_main_kv,hca_main_score:entry=packed">}
  }
}

