// pool-layout-state-fields places state fields in 256-aligned entry-major arenas and sets every class's entry_bytes (spec §2.3, §2.5 vectors).
// RUN: pool-opt %s -split-input-file -verify-diagnostics --pool-layout-state-fields | FileCheck %s

// sa_misaligned_pad: two 12-byte f32 fields start at 0 and 256; the entry rounds up to 512.
// CHECK-LABEL: pool.model "misaligned_pad"
// CHECK: pool.state_field "a" in "s" {{.*}}end = 12 : i64, {{.*}}offset = 0 : i64
// CHECK: pool.state_field "b" in "s" {{.*}}end = 268 : i64, {{.*}}offset = 256 : i64
// CHECK: pool.entry_class "s" "state" {arena_bytes = [[ARENA:512]] : i64, checkpoint_ranges = array<i64: 0, 268>, derived, entries_per_req = 1 : i64, entry_bytes = [[ARENA]] : i64}
pool.model "misaligned_pad" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// sa_v4_like: naturally aligned fields pack with no padding; the whole entry is one checkpoint range.
// CHECK-LABEL: pool.model "v4_like"
// CHECK: pool.state_field "csa_main_kv" in "state" {{.*}}end = 3072 : i64, {{.*}}offset = 0 : i64
// CHECK: pool.state_field "csa_main_score" in "state" {{.*}}end = 6144 : i64, {{.*}}offset = 3072 : i64
// CHECK: pool.state_field "csa_idx_kv" in "state" {{.*}}end = 7680 : i64, {{.*}}offset = 6144 : i64
// CHECK: pool.state_field "csa_idx_score" in "state" {{.*}}end = 9216 : i64, {{.*}}offset = 7680 : i64
// CHECK: pool.state_field "hca_main_kv" in "state" {{.*}}end = 41984 : i64, {{.*}}offset = 9216 : i64
// CHECK: pool.state_field "hca_main_score" in "state" {{.*}}end = [[END:74752]] : i64, {{.*}}offset = 41984 : i64
// CHECK: pool.entry_class "state" "state" {arena_bytes = [[END]] : i64, checkpoint_ranges = array<i64: 0, [[END]]>, {{.*}}entry_bytes = [[END]] : i64
// CHECK: pool.entry_class "kv" "page" {bytes = 4096 : i64, entry_bytes = 4096 : i64}
pool.model "v4_like" attributes {block_size = 128 : i64, hash_block_size = 128 : i64} {
  pool.state_field "csa_main_kv" in "state" {dtype = "float32", layers = 3 : i64, shape = array<i64: 8, 32>}
  pool.state_field "csa_main_score" in "state" {dtype = "float32", fill = 0xFFF0000000000000 : f64, layers = 3 : i64, shape = array<i64: 8, 32>}
  pool.state_field "csa_idx_kv" in "state" {dtype = "float32", layers = 3 : i64, shape = array<i64: 8, 16>}
  pool.state_field "csa_idx_score" in "state" {dtype = "float32", fill = 0xFFF0000000000000 : f64, layers = 3 : i64, shape = array<i64: 8, 16>}
  pool.state_field "hca_main_kv" in "state" {dtype = "float32", layers = 2 : i64, shape = array<i64: 128, 32>}
  pool.state_field "hca_main_score" in "state" {dtype = "float32", fill = 0xFFF0000000000000 : f64, layers = 2 : i64, shape = array<i64: 128, 32>}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  pool.entry_class "kv" "page" {bytes = 4096 : i64}
}

// -----

// cr_drop_hca: the HCA pair left out of the image keeps its place in the entry but not in the checkpoint ranges.
// CHECK-LABEL: pool.model "drop_hca"
// CHECK: pool.state_field "csa_idx_score" in "state" {{.*}}end = [[CSA_END:9216]] : i64,
// CHECK: pool.state_field "hca_main_kv" in "state" {{.*}}in_checkpoint = false, {{.*}}offset = [[CSA_END]] : i64
// CHECK: pool.entry_class "state" "state" {arena_bytes = 74752 : i64, checkpoint_ranges = array<i64: 0, [[CSA_END]]>, {{.*}}entry_bytes = 74752 : i64
pool.model "drop_hca" attributes {block_size = 128 : i64, hash_block_size = 128 : i64} {
  pool.state_field "csa_main_kv" in "state" {dtype = "f32", layers = 3 : i64, shape = array<i64: 8, 32>}
  pool.state_field "csa_main_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, layers = 3 : i64, shape = array<i64: 8, 32>}
  pool.state_field "csa_idx_kv" in "state" {dtype = "f32", layers = 3 : i64, shape = array<i64: 8, 16>}
  pool.state_field "csa_idx_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, layers = 3 : i64, shape = array<i64: 8, 16>}
  pool.state_field "hca_main_kv" in "state" {dtype = "f32", in_checkpoint = false, layers = 2 : i64, shape = array<i64: 128, 32>}
  pool.state_field "hca_main_score" in "state" {dtype = "f32", fill = 0xFFF0000000000000 : f64, in_checkpoint = false, layers = 2 : i64, shape = array<i64: 128, 32>}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// cr_break_run: a dead field in the middle splits the carried bytes into two ranges.
// CHECK-LABEL: pool.model "break_run"
// CHECK: pool.state_field "a" in "s" {{.*}}end = 128 : i64, {{.*}}offset = 0 : i64
// CHECK: pool.state_field "dead" in "s" {{.*}}end = 2304 : i64, {{.*}}offset = 256 : i64
// CHECK: pool.state_field "b" in "s" {{.*}}end = 2432 : i64, {{.*}}offset = 2304 : i64
// CHECK: pool.entry_class "s" "state" {arena_bytes = 2560 : i64, checkpoint_ranges = array<i64: 0, 128, 2304, 128>,
pool.model "break_run" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4, 8>}
  pool.state_field "dead" in "s" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 64, 8>}
  pool.state_field "b" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4, 8>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// cr_zero_byte_runs: zero-byte carried runs are dropped, and an entry with nothing carried has no ranges.
// CHECK-LABEL: pool.model "zero_byte_runs"
// CHECK: pool.entry_class "none_carried" "state" {arena_bytes = 256 : i64, checkpoint_ranges = array<i64>,
// CHECK: pool.entry_class "mixed" "state" {arena_bytes = 512 : i64, checkpoint_ranges = array<i64>, {{.*}}entry_bytes = 512 : i64
pool.model "zero_byte_runs" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "dead" in "none_carried" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 8, 8>}
  pool.state_field "dead_a" in "mixed" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 8, 8>}
  pool.state_field "empty" in "mixed" {dtype = "f32", layers = 0 : i64, shape = array<i64: 4, 4>}
  pool.state_field "dead_b" in "mixed" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 8, 8>}
  pool.entry_class "none_carried" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "mixed" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A class whose fields hold nothing derives 0 bytes: refused (Q5).
pool.model "no_layers" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "empty" in "no_layers" {dtype = "f32", layers = 0 : i64, shape = array<i64: 4, 4>}
  // expected-error @+1 {{'pool.entry_class' op entry class 'no_layers' derives 0 bytes: its state fields hold nothing}}
  pool.entry_class "no_layers" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A field's own align=1024 moves its start past the default 256 boundary; the entry (the slot stride) is a multiple of 1024.
// CHECK-LABEL: pool.model "align"
// CHECK: pool.state_field "a" in "s" {{.*}}end = 12 : i64, {{.*}}offset = 0 : i64
// CHECK: pool.state_field "wide" in "s" {align = 1024 : i64, {{.*}}end = 1036 : i64, {{.*}}offset = 1024 : i64
// CHECK: pool.state_field "tail" in "s" {{.*}}end = 2040 : i64, {{.*}}offset = 1280 : i64
// CHECK: pool.entry_class "s" "state" {arena_bytes = 2048 : i64, checkpoint_ranges = array<i64: 0, 2040>,
pool.model "align" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "wide" in "s" {align = 1024 : i64, dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "tail" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 190>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// An entry that is not a multiple of its strongest field alignment would put later entries off the retype boundary.
pool.model "align_stride" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "wide" in "s" {align = 1024 : i64, dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  // expected-error @+1 {{'pool.entry_class' op entry class 's': an entry of 1280 bytes holding state fields must be a multiple of 1024, or entries past the first fall off the boundary their field views retype from}}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// In a row space each plane's fields form their own arena at the front of the slot: offsets restart at 0 in every plane, ranges are per plane, and the derived slot and PAGE classes get no entry_bytes (pool-solve-row-space derives them).
// CHECK-LABEL: pool.model "row_space"
// CHECK: pool.state_field "a" in "state" {{.*}}end = 12 : i64, {{.*}}offset = 0 : i64, plane = "rope"
// CHECK: pool.state_field "wide" in "state" {align = 1024 : i64, {{.*}}end = 12 : i64, {{.*}}offset = 0 : i64, plane = "nope"
// CHECK: pool.state_field "b" in "state" {{.*}}end = 268 : i64, {{.*}}offset = 256 : i64, plane = "rope"
// CHECK: pool.state_field "dead" in "state" {{.*}}end = 268 : i64, {{.*}}offset = 256 : i64, plane = "nope"
// CHECK: pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
// CHECK: pool.entry_class "state" "state" {arena_bytes = 1024 : i64, derived, entries_per_req = 1 : i64, plane_checkpoint_ranges = [array<i64: 0, 12>, array<i64: 0, 268>]}
// CHECK: pool.entry_class "aux" "state" {bytes = 512 : i64, entries_per_req = 1 : i64, entry_bytes = 512 : i64}
// CHECK-NOT: checkpoint_ranges = array
pool.model "row_space" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4]
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>, plane = "rope"}
  pool.state_field "wide" in "state" {align = 1024 : i64, dtype = "f32", layers = 1 : i64, shape = array<i64: 3>, plane = "nope"}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>, plane = "rope"}
  pool.state_field "dead" in "state" {dtype = "f32", in_checkpoint = false, layers = 1 : i64, shape = array<i64: 3>, plane = "nope"}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "aux" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
}

// -----

// In a row space a field without a plane has not been through pool-assign-field-planes.
pool.model "no_plane" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  // expected-error @+1 {{'pool.state_field' op state field 'a' has no plane; run pool-assign-field-planes first}}
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// derived adds the arena to explicit bytes; explicit-only classes (PAGE or STATE) keep their bytes and get no arena.
// CHECK-LABEL: pool.model "add"
// CHECK: pool.entry_class "kv" "page" {bytes = 1000 : i64, entry_bytes = 1000 : i64}
// CHECK: pool.entry_class "s" "state" {arena_bytes = 512 : i64, bytes = 256 : i64, {{.*}}derived, {{.*}}entry_bytes = 768 : i64
// CHECK: pool.entry_class "plain" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, entry_bytes = 64 : i64}
// CHECK: pool.entry_class "big" "state" {arena_bytes = 256 : i64, bytes = 512 : i64, {{.*}}entry_bytes = 512 : i64
pool.model "add" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "c" in "big" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "s" "state" {bytes = 256 : i64, derived, entries_per_req = 1 : i64}
  pool.entry_class "plain" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
  pool.entry_class "big" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
}

// -----

// Explicit bytes added to a derived arena must keep the entry on the 256 B boundary.
pool.model "add_misaligned" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  // expected-error @+1 {{'pool.entry_class' op entry class 's': an entry of 612 bytes holding state fields must be a multiple of 256, or entries past the first fall off the boundary their field views retype from}}
  pool.entry_class "s" "state" {bytes = 356 : i64, derived, entries_per_req = 1 : i64}
}

// -----

// Unmerged declarations are refused: the pass runs after pool-merge-entry-classes.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv' is declared more than once; run pool-merge-entry-classes first}}
  pool.entry_class "kv" "page" {bytes = 24 : i64}
}

// -----

// Explicit STATE bytes below the fields' arena are refused.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  // expected-error @+1 {{'pool.entry_class' op entry class 's' declares 511 bytes, but its state fields need an arena of 512 bytes}}
  pool.entry_class "s" "state" {bytes = 511 : i64, entries_per_req = 1 : i64}
}

// -----

// A derived class with no field naming it has nothing to derive from.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry class 's' derives its bytes, but nothing in this model derives them (no state field names it)}}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Fields whose sum passes int64 are an error, not a wrap.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "b" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "c" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "d" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  pool.state_field "e" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 2305843009213693951>}
  // expected-error @+1 {{'pool.entry_class' op entry class 's': state entry: aligning 9223372036854775807 overflows 64-bit arithmetic}}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Explicit bytes plus the arena past int64 is an error, not a wrap.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 256>}
  // expected-error @+1 {{'pool.entry_class' op entry class 's': entry bytes overflow 64-bit arithmetic}}
  pool.entry_class "s" "state" {bytes = 9223372036854775807 : i64, derived, entries_per_req = 1 : i64}
}
