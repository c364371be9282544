// pool-assign-field-planes splits the slot's state fields across the row space's planes in the fewest rows, ties to the lowest assignment code (spec §2.7, vectors pfp_v4_like, pfp_errors).
// RUN: pool-opt %s -split-input-file -verify-diagnostics --pool-assign-field-planes | FileCheck %s

// pfp_v4_like, two planes [512, 128]: the wide plane takes the HCA pair (65,536 B = 128 rows), the narrow one the four CSA fields (9,216 B = 72 rows); 128 rows, 7,168 B of slack in the narrow plane.
// CHECK-LABEL: pool.model "v4_two_planes"
// CHECK: pool.state_field "csa_main_kv" in "state" {{.*}}plane = "rope"
// CHECK: pool.state_field "csa_main_score" in "state" {{.*}}plane = "rope"
// CHECK: pool.state_field "csa_idx_kv" in "state" {{.*}}plane = "rope"
// CHECK: pool.state_field "csa_idx_score" in "state" {{.*}}plane = "rope"
// CHECK: pool.state_field "hca_main_kv" in "state" {{.*}}plane = "nope"
// CHECK: pool.state_field "hca_main_score" in "state" {{.*}}plane = "nope"
// CHECK: pool.entry_class "state" "state" {arena_rows = 128 : i64, derived, entries_per_req = 1 : i64, plane_slack_bytes = array<i64: 0, 7168>}
// CHECK-NOT: offset =
pool.model "v4_two_planes" attributes {block_size = 128 : i64, hash_block_size = 128 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
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

// -----

// pfp_v4_like, one plane [512]: every field in it, 74,752 B = 146 rows with no slack.
// CHECK-LABEL: pool.model "v4_one_plane"
// CHECK-COUNT-6: plane = "kv"
// CHECK: pool.entry_class "state" "state" {arena_rows = 146 : i64, derived, entries_per_req = 1 : i64, plane_slack_bytes = array<i64: 0>}
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

// -----

// Slack is per plane and counts the 256 B alignment walk: a 12 B field costs a 256 B arena, 1 row of the 512 B plane (256 B slack); the empty 128 B plane's row is all slack.
// CHECK-LABEL: pool.model "slack"
// CHECK: pool.state_field "a" in "state" {{.*}}plane = "nope"
// CHECK: pool.entry_class "state" "state" {arena_rows = 1 : i64, {{.*}}plane_slack_bytes = array<i64: 256, 128>}
pool.model "slack" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4]
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Tie-break: codes 1 (a on q, b on p) and 2 (a on p, b on q) both cost 1 row; the lowest code wins, so the first field lands on the second plane.
// CHECK-LABEL: pool.model "tie"
// CHECK: pool.state_field "a" in "state" {{.*}}plane = "q"
// CHECK: pool.state_field "b" in "state" {{.*}}plane = "p"
// CHECK: pool.entry_class "state" "state" {arena_rows = 1 : i64, {{.*}}plane_slack_bytes = array<i64: 0, 0>}
pool.model "tie" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "p" {dtype = "u8", row_bytes = 256 : i64}
  pool.plane "q" {dtype = "u8", row_bytes = 256 : i64}
  pool.layers [0, 4]
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 64>}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 64>}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A slot without state fields takes no arena rows.
// CHECK-LABEL: pool.model "no_fields"
// CHECK: pool.entry_class "state" "state" {arena_rows = 0 : i64, {{.*}}plane_slack_bytes = array<i64: 0, 0>}
pool.model "no_fields" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// pfp_errors: 17 fields over 2 planes is 131,072 assignments, past the 2^16 the pass enumerates.
pool.model "too_many" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4]
  pool.state_field "f0" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f1" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f2" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f3" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f4" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f5" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f6" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f7" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f8" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f9" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f10" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f11" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f12" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f13" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f14" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f15" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "f16" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {derived}
  // expected-error @+1 {{'pool.entry_class' op entry class 'state': refusing to enumerate 131072 assignments of 17 fields over 2 planes; declare fewer fields (merge fields that always travel together) or fewer planes}}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Without planes the pass does nothing: no plane, no arena rows.
// CHECK-LABEL: pool.model "no_planes"
// CHECK: pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
// CHECK: pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
// CHECK-NOT: plane
pool.model "no_planes" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}
