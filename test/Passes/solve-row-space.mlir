// pool-solve-row-space solves the row space (envelope, entry, slot, window params, image) and derives the PAGE and slot bytes (spec §3, §4; vectors geo_flash_test, ero_table, geo_field_window_params).
// Each part below runs under its own pipeline.
// RUN: split-file %s %t
// RUN: pool-opt %t/solve-only.mlir -split-input-file -verify-diagnostics --pool-solve-row-space | FileCheck %t/solve-only.mlir
// RUN: pool-opt %t/pipeline.mlir -split-input-file -verify-diagnostics --pool-assign-field-planes --pool-layout-state-fields --pool-solve-row-space | FileCheck %t/pipeline.mlir

//--- solve-only.mlir

// geo_flash_test: 46 layers (5 dense, 20 HCA, 21 CSA), ring 131 = sliding_window 128 + spec_depth 3, arena 0, fp8 planes [512, 128].
// Envelope HCA 20x2 then CSA 21x64 = 1384 rows; entry dense 655 + HCA 2639 + CSA 3971 = 7265 rows; slot 7266 (2-aligned).
// PAGE: 1384 x 640 = 885,760 B plus 177,408 B of indexer riding the block table = 1,063,168 B; slot 7266 x 640 = 4,650,240 B.
// CHECK-LABEL: pool.model "flash"
// CHECK: pool.entry_class "kv" "page" {bytes = 177408 : i64, derived, entry_bytes = 1063168 : i64}
// CHECK-NEXT: pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64, entry_bytes = 4650240 : i64}
// CHECK-NEXT: pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64,
// CHECK-SAME: classes = [#pool.row_class<ratio = 0, layers = [0, 1, 43, 44, 45], block_rows = 0, ring_stride = 131, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 655, ring_start = 0, run_rows = 655>,
// CHECK-SAME: #pool.row_class<ratio = 128, layers = [3, 5, 7, {{.*}}, 39, 41], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 40, entry_offset = 655, entry_rows = 2639, ring_start = 655, run_rows = 40>,
// CHECK-SAME: #pool.row_class<ratio = 4, layers = [2, 4, 6, {{.*}}, 40, 42], block_rows = 64, ring_stride = 64, envelope_offset = 40, envelope_rows = 1344, entry_offset = 3294, entry_rows = 3971, ring_start = 3254, run_rows = 1344>]
// CHECK-SAME: entry_row_runs = array<i64: 0, 3256, 3257, 1, 3259, 1, {{.*}}, 3291, 1, 3293, 2692, 6046, 3, 6110, 3, {{.*}}, 7198, 3, 7262, 3>
// CHECK-SAME: entry_rows = 7265 : i64, envelope_rows = 1384 : i64
// The image carries every row some (layer, position) reaches: 46 x 131 rows x 640 B.
// CHECK-SAME: image_bytes = 3856640 : i64
// CHECK-SAME: page_class = "kv", plane_names = ["nope", "rope"], plane_widths = array<i64: 512, 128>
// CHECK-SAME: ring_slots = 131 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_rows = 7266 : i64}
// CHECK-NOT: num_blocks
pool.model "flash" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64, spec_depth = 3 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0, 0, 0]
  pool.entry_class "kv" "page" {bytes = 177408 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Without planes the pass does nothing.
// CHECK-LABEL: pool.model "no_planes"
// CHECK: pool.entry_class "kv" "page" {bytes = 1000 : i64}
// CHECK-NOT: pool.row_space
pool.model "no_planes" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
}

// -----

// A row space with no PAGE class is refused (pool-verify says which rule it breaks).
// expected-error @+1 {{'pool.model' op a row space needs layers, a derived PAGE class and a derived STATE (slot) class; run pool-verify}}
pool.model "no_page" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Only dense layers and no explicit bytes: a block holds nothing, so the PAGE class would derive 0 bytes.
pool.model "dense_only" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 0]
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv' derives 0 bytes: no layer keeps compressed rows in the row space and nothing rides the block table}}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A window field must be placed (plane and offset) before the solve.
pool.model "unplaced" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [4, -1]
  // expected-error @+1 {{'pool.state_field' op window field 'win' is not placed; run pool-assign-field-planes and pool-layout-state-fields first}}
  pool.state_field "win" in "state" {dtype = "bf16", layers = 1 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// block_size must be a multiple of every compress ratio; the declaration is refused before any pass runs.
pool.model "block_ratio" attributes {block_size = 64 : i64, hash_block_size = 64 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  // expected-error @+1 {{'pool.layers' op block_size 64 is not a multiple of compress ratio 128 (layer 1): a block would hold a fractional compressed row}}
  pool.layers [4, 128]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

//--- pipeline.mlir

// A window carried as a state field for the 2 absent layers: 1,024 B window rows on a 128 B plane take k = 8 rows each,
// so rows_per_window_row = 8 and slot_align_rows = lcm(2, 8) = 8; arena 88 rows + entry 10 rows = 98 rounds to a 104-row slot.
// The image is the carried arena (conv, padding, win) abutting the window rows: one range of 11,264 + 10 x 128 B.
// CHECK-LABEL: pool.model "window"
// CHECK: pool.state_field "win" in "state" {{.*}}offset = 1024 : i64, plane = "kv", rows_per_window_row = 8 : i64,
// CHECK: pool.entry_class "kv" "page" {derived, entry_bytes = 8448 : i64}
// CHECK: pool.entry_class "state" "state" {{.*}}arena_rows = 88 : i64, {{.*}}entry_bytes = 13312 : i64
// CHECK: pool.row_space {arena_rows = 88 : i64,
// CHECK-SAME: #pool.row_class<ratio = 128, layers = [1], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 0, entry_rows = 5, ring_start = 88, run_rows = 2>
// CHECK-SAME: #pool.row_class<ratio = 4, layers = [0], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 5, entry_rows = 5, ring_start = 91, run_rows = 64>
// CHECK-SAME: entry_row_runs = array<i64: 0, 10>, entry_rows = 10 : i64, envelope_rows = 66 : i64, image_bytes = 12544 : i64, image_ranges = [array<i64: 0, 12544>]
// CHECK-SAME: ratios = array<i64: 4, 128, -1, -1>, ring_slots = 5 : i64, slot_align_rows = 8 : i64, slot_class = "state", slot_rows = 104 : i64}
pool.model "window" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [4, 128, -1, -1]
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", layers = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A window field holds one row per ring position: shape[0] must be the ring (4 + 1 = 5).
pool.model "ring_mismatch" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [4, 128, -1, -1]
  // expected-error @+1 {{'pool.state_field' op window field 'win' must hold one row per ring position: shape[0] is 4, the ring is 5 (sliding_window + spec_depth)}}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", layers = 2 : i64, shape = array<i64: 4, 512>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A window field spans exactly the absent layers.
pool.model "layer_mismatch" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [4, 128, -1, -1]
  // expected-error @+1 {{'pool.state_field' op window field 'win' spans 1 layers, but 2 layers are absent (-1) from the row space}}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", layers = 1 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A window row (96 bf16 = 192 B) that is not a whole number of 128 B plane rows cannot be read through a retyped plane: no plane can take the field.
pool.model "fractional_row" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [4, 128, -1, -1]
  // expected-error @+1 {{'pool.state_field' op window field 'win': a window row of 192 bytes is not a whole number of rows of any plane}}
  pool.state_field "win" in "state" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 5, 96>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Without align = 1024 the window field lands at byte 256 after conv, inside one of its own 1,024 B rows.
pool.model "misaligned" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [4, 128, -1, -1]
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  // expected-error @+1 {{'pool.state_field' op window field 'win' starts at byte 256, not on one of its own 1024-byte rows; give it align = 1024}}
  pool.state_field "win" in "state" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Absent layers keep their windows in a state field; without one their windows have nowhere to live.
pool.model "no_window_field" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 128 : i64}
  // expected-error @+1 {{'pool.layers' op 2 layers are absent (-1) from the row space, but no state field of the slot class carries their windows (window = true)}}
  pool.layers [4, 128, -1, -1]
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A window field of no layers (nothing absent to carry): a window row of 0
// bytes, which once divided the solve by zero (fuzz-mlir's first finding).
pool.model "empty_window_field" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, 0]
  // expected-error @+1 {{'pool.state_field' op window field 'w' carries no window rows: 0 layers of 0-byte rows (a window field needs at least one layer, one per absent layer)}}
  pool.state_field "w" in "state" {dtype = "bf16", layers = 0 : i64, shape = array<i64: 128, 64>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "aux" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
}

