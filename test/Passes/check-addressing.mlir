// pool-check-addressing proves a planned layout's regions, blocks, slots, classes and fields disjoint and inside their spaces, every row index int32,
// and marks the planes whose element offsets pass 2^31 (wide_offset_planes, with a remark) or whose span passes the 4 GiB of a buffer descriptor (rebase_planes).
// Each part below runs under its own pipeline and budget.
// RUN: split-file %s %t
// RUN: pool-opt %t/planned.mlir -verify-diagnostics --pool-verify --pool-merge-entry-classes --pool-assign-field-planes --pool-layout-state-fields --pool-solve-row-space --pool-plan-pools="budget=1048576 max-num-seqs=2" --pool-check-addressing | FileCheck %t/planned.mlir
// RUN: pool-opt %t/large.mlir -verify-diagnostics --pool-verify --pool-merge-entry-classes --pool-assign-field-planes --pool-layout-state-fields --pool-solve-row-space --pool-plan-pools="budget=161061273600 max-num-seqs=256" --pool-check-addressing | FileCheck %t/large.mlir
// RUN: pool-opt %t/under-4gib.mlir -verify-diagnostics --pool-verify --pool-merge-entry-classes --pool-assign-field-planes --pool-layout-state-fields --pool-solve-row-space --pool-plan-pools="budget=4831838208 max-num-seqs=256" --pool-check-addressing | FileCheck %t/under-4gib.mlir
// RUN: pool-opt %t/hand-written.mlir -split-input-file -verify-diagnostics --pool-check-addressing | FileCheck %t/hand-written.mlir

//--- planned.mlir

// A small planned row space (1 MiB, 2 sequences) passes: rows 0..1377, no plane needs 64-bit offsets or a rebase (no remark), no region needs a rebase.
// CHECK-LABEL: pool.model "base"
// CHECK-NOT: needs_rebase
// CHECK: pool.row_space
// CHECK-SAME: max_row = 1377 : i64
// CHECK-SAME: plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64
// CHECK-SAME: rebase_planes = array<i64>
// CHECK-SAME: wide_offset_planes = array<i64>
pool.model "base" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", layers = 1 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

//--- large.mlir

// The geo_flash_test geometry at 150 GiB and 256 sequences (V4-Flash-like): 209,980,134 rows a plane.
// Both planes pass 2^31 elements (512 fp8 and 64 bf16 a row) and 4 GiB: each gets a remark and both marks; the indexer region (150,372 x 177,408 B) needs a rebase.
// CHECK-LABEL: pool.model "flash"
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 150372 : i64, {{.*}}needs_rebase, region_offset = 134387285760 : i64
// CHECK: pool.row_space
// CHECK-SAME: max_row = 209980133 : i64, num_blocks = 150372 : i64, num_slots = 256 : i64
// CHECK-SAME: plane_offsets = array<i64: 0, 107509828608>, plane_rows = 209980134 : i64
// CHECK-SAME: rebase_planes = array<i64: 0, 1>
// CHECK-SAME: slot_positions = 28899 : i64
// CHECK-SAME: wide_offset_planes = array<i64: 0, 1>
pool.model "flash" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64, spec_depth = 3 : i64} {
  // expected-remark @+1 {{plane 'nope': row * 512 elements passes 2^31 at row 4194304 of 209980134; its views need 64-bit element offsets}}
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  // expected-remark @+1 {{plane 'rope': row * 64 elements passes 2^31 at row 33554432 of 209980134; its views need 64-bit element offsets}}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0, 0, 0]
  pool.entry_class "kv" "page" {bytes = 177408 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

//--- under-4gib.mlir

// Negative control, the same geometry at 4.5 GiB: 6,604,794 rows, so the 512 B plane (3.15 GiB) needs 64-bit element offsets but no plane
// and no region passes 4 GiB: no rebase anywhere; the 128 B plane (64 elements a row) stays under 2^31 and gets no remark.
// CHECK-LABEL: pool.model "flash"
// CHECK-NOT: needs_rebase
// CHECK: pool.row_space
// CHECK-SAME: max_row = 6604793 : i64
// CHECK-SAME: rebase_planes = array<i64>
// CHECK-SAME: wide_offset_planes = array<i64: 0>
pool.model "flash" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64, spec_depth = 3 : i64} {
  // expected-remark @+1 {{plane 'nope': row * 512 elements passes 2^31 at row 4194304 of 6604794; its views need 64-bit element offsets}}
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0, 0, 0]
  pool.entry_class "kv" "page" {bytes = 177408 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

//--- hand-written.mlir

// The hand-written base (the planned 1 MiB model above) passes; every case after it changes one solved number.
// CHECK-LABEL: pool.model "base"
// CHECK: max_row = 1377 : i64
// CHECK-SAME: rebase_planes = array<i64>
// CHECK-SAME: wide_offset_planes = array<i64>
pool.model "base" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A model pool-plan-pools has not run on is refused, not guessed at.
// expected-error @+1 {{'pool.model' op is not planned; run pool-plan-pools first}}
pool.model "not_planned" attributes {block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A row space without its split (plane offsets) is refused.
pool.model "rs_not_planned" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op is not planned; run pool-plan-pools first}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// One plane offset for two planes: the lists disagree.
pool.model "plane_lists" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: plane lists disagree}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// The PAGE class's explicit region starts 256 B inside the rope plane.
// expected-error @+1 {{'pool.model' op layout check failed: plane 'rope' [705536, 881920) overlaps class 'kv' [881664, 1050624) in the allocation}}
pool.model "region_overlap" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881664 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// An allocation 256 B short leaves the last region hanging past its end.
// expected-error @+1 {{'pool.model' op layout check failed: class 'kv' [881920, 1050880) lies outside the allocation [0, 1050624)}}
pool.model "region_outside" attributes {allocation_bytes = 1050624 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A region start off the 256 B boundary.
pool.model "region_misaligned" attributes {allocation_bytes = 1051136 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  // expected-error @+1 {{'pool.entry_class' op layout check failed: region offset 882000 is not 256-aligned}}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 882000 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A plane of 2^31 + 2 rows: its last row index does not fit the int32 index buffers.
pool.model "int32_rows" attributes {allocation_bytes = 1374389704960 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 1374389536000 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op row index 2147483649 does not fit int32 (kernels index rows with int32): the plane holds 2147483650 rows; lower the budget or split the pool}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 1099511628800>, plane_rows = 2147483650 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A third slot, at position 50 (row 1300), reaches into the 20 blocks of 66 rows (rows 0-1319).
pool.model "blocks_into_slots" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: the blocks [0, 1320) overlaps the slots [1300, 1378) in the plane}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 3 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// 21 blocks of 66 rows (1386) run past the 1378-row plane.
pool.model "blocks_past_plane" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: the blocks [0, 1386) lies outside the plane [0, 1378)}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 21 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// More slots than the plane holds (1378 / 26 = 53).
pool.model "too_many_slots" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: 54 slots in a plane that holds 53}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 54 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A slot of 0 rows is not a layout.
pool.model "zero_slot_rows" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: non-positive row counts}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 0 : i64}
}

// -----

// CSA's envelope moved to row 1 overlaps HCA's two rows.
pool.model "envelope_overlap" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: class 128 [0, 2) overlaps class 4 [1, 65) in the envelope}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 1, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A CSA envelope past envelope_rows.
pool.model "envelope_outside" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: class 4 [3, 67) lies outside the envelope [0, 66)}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 3, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// CSA reserves 4 window rows; its one layer reaches 5 (ring 5).
pool.model "entry_short" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: class 4 reserves fewer rows than its layers reach}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 4, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// HCA's windows moved to entry row 1 overlap the dense windows.
pool.model "entry_overlap" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: class 0 windows [0, 5) overlaps class 128 windows [1, 6) in the entry}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 1, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// An entry of 17 rows after a 10-row arena does not fit a 26-row slot.
pool.model "windows_past_slot" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: the windows [10, 27) lies outside a slot [0, 26)}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 17 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// conv moved past the rope plane's 10 x 128 = 1280 arena bytes.
pool.model "field_past_arena" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 1292 : i64, layers = 1 : i64, offset = 1280 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: field 'conv' [1280, 1292) lies outside the arena in plane 'rope' [0, 1280)}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A field placed inside win's bytes in the same plane.
pool.model "field_overlap" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.state_field "x" in "state" {dtype = "f32", end = 4108 : i64, layers = 1 : i64, offset = 4096 : i64, plane = "nope", shape = array<i64: 3>}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  // expected-error @+1 {{'pool.row_space' op layout check failed: field 'win' [0, 5120) overlaps field 'x' [4096, 4108) in the arena in plane 'nope'}}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A field with a plane but no offset has not been laid out.
pool.model "field_unplaced" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  // expected-error @+1 {{'pool.state_field' op is not placed; run pool-layout-state-fields}}
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, plane = "rope", shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// Read 3 plane rows per window row, 5 positions x 3 x 512 B = 7680 B overrun the 5120 B field.
pool.model "window_past_field" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, budget = 1048576 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 1047040 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, plane = "rope", shape = array<i64: 3>}
  // expected-error @+1 {{'pool.state_field' op layout check failed: its windows reach 7680 bytes past its start, beyond the field}}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 3 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5376 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64: 0, 12>], plane_slack_bytes = array<i64: 0, 1024>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 128, layers = [2], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 5, entry_rows = 5, ring_start = 15, run_rows = 2>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 2, envelope_rows = 64, entry_offset = 10, entry_rows = 5, ring_start = 18, run_rows = 64>], entry_row_runs = array<i64: 0, 15>, entry_rows = 15 : i64, envelope_rows = 66 : i64, image_bytes = 14732 : i64, image_ranges = [array<i64: 0, 12800>, array<i64: 0, 12, 1280, 1920>], num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 128, -1>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 26 : i64}
}

// -----

// A plane past 4 GiB is rebased per slot, but a slot of 8,388,610 x 512 B is itself past the 4 GiB a descriptor reaches.
pool.model "huge_slot" attributes {allocation_bytes = 8589936640 : i64, block_size = 256 : i64, budget = 8589936640 : i64, hash_block_size = 256 : i64, max_num_seqs = 2 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64, total_reserved_bytes = 8589936640 : i64} {
  // expected-remark @+1 {{plane 'kv': row * 512 elements passes 2^31 at row 4194304 of 16777220; its views need 64-bit element offsets}}
  pool.plane "kv" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.layers [0]
  pool.entry_class "kv" "page" {derived, entries = 0 : i64, entry_bytes = 0 : i64, reserved_bytes = 0 : i64}
  pool.entry_class "state" "state" {derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 4294968320 : i64, reserved_bytes = 8589936640 : i64}
  // expected-error @+1 {{'pool.row_space' op a slot or block of plane 'kv' spans more than the 4 GiB a rebased buffer descriptor reaches}}
  pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 0, run_rows = 5>], entry_row_runs = array<i64: 0, 5>, entry_rows = 8388610 : i64, envelope_rows = 0 : i64, image_bytes = 2560 : i64, image_ranges = [array<i64: 0, 2560>], num_blocks = 0 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["kv"], plane_offsets = array<i64: 0>, plane_rows = 16777220 : i64, plane_widths = array<i64: 512>, ratios = array<i64: 0>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 2 : i64, slot_rows = 8388610 : i64}
}

// -----

// Without a row space: a 6 GiB region of 3 GiB entries is marked needs_rebase (each entry is within reach of a rebased descriptor).
// CHECK-LABEL: pool.model "rebase_region"
// CHECK: pool.entry_class "kv" "page" {{.*}}needs_rebase, region_offset = 0 : i64
// CHECK: pool.entry_class "small" "state" {bytes = 256 : i64, entries = 1 : i64, entries_per_req = 1 : i64, entry_bytes = 256 : i64, region_offset = 6442450944 : i64, reserved_bytes = 256 : i64}
pool.model "rebase_region" attributes {allocation_bytes = 6442451200 : i64, block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 3221225472 : i64, entries = 2 : i64, entry_bytes = 3221225472 : i64, region_offset = 0 : i64, reserved_bytes = 6442450944 : i64}
  pool.entry_class "small" "state" {bytes = 256 : i64, entries = 1 : i64, entries_per_req = 1 : i64, entry_bytes = 256 : i64, region_offset = 6442450944 : i64, reserved_bytes = 256 : i64}
}

// -----

// One entry of 4 GiB + 256 B is past what even a rebased descriptor reaches.
pool.model "huge_entry" attributes {allocation_bytes = 4294967552 : i64, block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op one entry of 4294967552 bytes spans more than the 4 GiB a rebased buffer descriptor reaches}}
  pool.entry_class "kv" "page" {bytes = 4294967552 : i64, entries = 1 : i64, entry_bytes = 4294967552 : i64, region_offset = 0 : i64, reserved_bytes = 4294967552 : i64}
}

// -----

// 2^31 + 1 entries: the last entry id does not fit int32.
pool.model "int32_entries" attributes {allocation_bytes = 549755814144 : i64, block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry index 2147483648 does not fit int32}}
  pool.entry_class "kv" "page" {bytes = 256 : i64, entries = 2147483649 : i64, entry_bytes = 256 : i64, region_offset = 0 : i64, reserved_bytes = 549755814144 : i64}
}
