// Every pool op and attribute form round-trips through pool-opt, custom and generic, with defaults elided.
// RUN: pool-opt %s -split-input-file | pool-opt -split-input-file | FileCheck %s
// RUN: pool-opt %s -split-input-file -mlir-print-op-generic | pool-opt -split-input-file | FileCheck %s

// A declaration with every op; written defaults are elided on print.
// CHECK-LABEL: pool.model "tiny"
// CHECK-SAME: attributes {block_size = 256 : i64, hash_block_size = 256 : i64} {
// CHECK-NEXT: pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
// CHECK-NEXT: pool.layers [0, 4, 128, -1]
// CHECK-NEXT: pool.state_field "a" in "state" {dtype = "f32", layers = 2 : i64, shape = array<i64: 3>}
// CHECK-NEXT: pool.entry_class "kv" "page" {bytes = 1000 : i64}
// CHECK-NEXT: pool.entry_class "state" "state" {derived, entries_per_req = 2 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
// CHECK-NOT: sliding_window
// CHECK-NOT: extra_entries
pool.model "tiny" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 0 : i64, spec_depth = 0 : i64} {
  pool.plane "kv" {row_bytes = 1024 : i64, dtype = "bf16"}
  pool.layers [0, 4, 128, -1]
  pool.state_field "a" in "state" {layers = 2 : i64, shape = array<i64: 3>, dtype = "f32", fill = 0.0 : f64, align = 0 : i64, in_checkpoint = true}
  pool.entry_class "kv" "page" {bytes = 1000 : i64, entries_per_req = 0 : i64, extra_entries = 0 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 2 : i64, extra_entries = 0 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}

// -----

// Non-default geometry, field attributes and every transfer kind survive.
// CHECK-LABEL: pool.model "full"
// CHECK-SAME: block_size = 128 : i64, hash_block_size = 128 : i64, sliding_window = 4096 : i64, spec_depth = 3 : i64
// CHECK: pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
// CHECK-NEXT: pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
// CHECK-NEXT: pool.layers [0, 0, 4, 128, 4]
// CHECK-NEXT: pool.state_field "score" in "s_none" {align = 1024 : i64, dtype = "f32", fill = 0xFFF0000000000000 : f64, in_checkpoint = false, layers = 3 : i64, shape = array<i64: 8, 32>}
// CHECK-NEXT: pool.state_field "ring" in "s_fork" {dtype = "bf16", fill = -1.000000e+00 : f64, layers = 0 : i64, shape = array<i64>}
// CHECK-NEXT: pool.entry_class "s_none" "state" {bytes = 64 : i64, derived, entries_per_req = 1 : i64, extra_entries = 3 : i64, transfer = #pool.transfer<"none">}
// CHECK-NEXT: pool.entry_class "s_fork" "state" {derived, entries_per_req = 4 : i64, transfer = #pool.transfer<"fork", tokens = 8>}
// CHECK-NEXT: pool.entry_class "s_copy" "state" {bytes = 4096 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "dsv4-flash-fp8">}
// CHECK-NEXT: pool.entry_class "kv" "page" {bytes = 2129920 : i64}
// CHECK-NEXT: }
pool.model "full" attributes {block_size = 128 : i64, hash_block_size = 128 : i64, sliding_window = 4096 : i64, spec_depth = 3 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 0, 4, 128, 4]
  pool.state_field "score" in "s_none" {dtype = "f32", layers = 3 : i64, shape = array<i64: 8, 32>, fill = 0xFFF0000000000000 : f64, align = 1024 : i64, in_checkpoint = false}
  pool.state_field "ring" in "s_fork" {dtype = "bf16", layers = 0 : i64, shape = array<i64>, fill = -1.0 : f64}
  pool.entry_class "s_none" "state" {bytes = 64 : i64, derived, entries_per_req = 1 : i64, extra_entries = 3 : i64, transfer = #pool.transfer<"none">}
  pool.entry_class "s_fork" "state" {derived, entries_per_req = 4 : i64, transfer = #pool.transfer<"fork", tokens = 8>}
  pool.entry_class "s_copy" "state" {bytes = 4096 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "dsv4-flash-fp8">}
  pool.entry_class "kv" "page" {bytes = 2129920 : i64}
}

// -----

// Transfer parameters parse in either order; the printer puts tokens first and elides defaults.
// CHECK-LABEL: pool.model "order"
// CHECK: transfer = #pool.transfer<"copy", layout_id = "img">
// CHECK: transfer = #pool.transfer<"fork", tokens = 2>
pool.model "order" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "a" "state" {bytes = 8 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "img">}
  pool.entry_class "b" "state" {bytes = 8 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 2, layout_id = "">}
}

// -----

// The attributes the passes solve are part of the declaration and survive a round trip.
// CHECK-LABEL: pool.model "solved"
// CHECK-SAME: allocation_bytes = 10240 : i64
// CHECK-SAME: budget = 10000 : i64
// CHECK-SAME: max_num_seqs = 8 : i64
// CHECK-SAME: total_reserved_bytes = 10000 : i64
// CHECK: pool.state_field "a" in "recurrent" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, shape = array<i64: 3>}
// CHECK-NEXT: pool.entry_class "kv" "page" {bytes = 1000 : i64, entries = 2 : i64, entry_bytes = 1000 : i64, region_offset = 0 : i64, reserved_bytes = 2000 : i64}
// CHECK-NEXT: pool.entry_class "recurrent" "state" {arena_bytes = 256 : i64, bytes = 244 : i64, checkpoint_ranges = array<i64: 0, 12>, derived, entries = 16 : i64, entries_per_req = 2 : i64, entry_bytes = 500 : i64, region_offset = 2048 : i64, reserved_bytes = 8000 : i64}
pool.model "solved" attributes {allocation_bytes = 10240 : i64, block_size = 16 : i64, budget = 10000 : i64, hash_block_size = 16 : i64, max_num_seqs = 8 : i64, total_reserved_bytes = 10000 : i64} {
  pool.state_field "a" in "recurrent" {dtype = "f32", end = 12 : i64, layers = 1 : i64, offset = 0 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64, entries = 2 : i64, entry_bytes = 1000 : i64, region_offset = 0 : i64, reserved_bytes = 2000 : i64}
  pool.entry_class "recurrent" "state" {arena_bytes = 256 : i64, bytes = 244 : i64, checkpoint_ranges = array<i64: 0, 12>, derived, entries = 16 : i64, entries_per_req = 2 : i64, entry_bytes = 500 : i64, region_offset = 2048 : i64, reserved_bytes = 8000 : i64}
}

// -----

// dtype aliases are accepted as written (the name is kept, not canonicalized).
// CHECK-LABEL: pool.model "aliases"
// CHECK: pool.plane "p" {dtype = "float8_e4m3fn", row_bytes = 512 : i64}
// CHECK: pool.state_field "x" in "s" {dtype = "bfloat16", layers = 1 : i64, shape = array<i64: 4>}
pool.model "aliases" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.plane "p" {dtype = "float8_e4m3fn", row_bytes = 512 : i64}
  pool.state_field "x" in "s" {dtype = "bfloat16", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A model may be empty and several models may share a module.
// CHECK-LABEL: pool.model "empty"
// CHECK-SAME: hash_block_size = 16 : i64} {
// CHECK-NEXT: {{^ *}}}
// CHECK-LABEL: pool.model "second"
pool.model "empty" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
}
pool.model "second" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// A solved row space round-trips: pool.row_space with every optional attribute, #pool.row_class, and the row-space attributes of fields and classes.
// CHECK-LABEL: pool.model "row_space"
// CHECK: pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
// CHECK-NEXT: pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, needs_rebase, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
// CHECK-NEXT: pool.entry_class "state" "state" {arena_bytes = 5120 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64>], plane_slack_bytes = array<i64: 0, 1280>, reserved_bytes = 33280 : i64}
// CHECK-NEXT: pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64,
// CHECK-SAME: classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 4, layers = [1, 2], block_rows = 64, ring_stride = 64, envelope_offset = 0, envelope_rows = 128, entry_offset = 5, entry_rows = 69, ring_start = 15, run_rows = 128>]
// CHECK-SAME: entry_row_runs = array<i64: 0, 74>, entry_rows = 74 : i64, envelope_rows = 128 : i64, image_bytes = 52480 : i64, image_ranges = [array<i64: 0, 43008>, array<i64: 1280, 9472>]
// CHECK-SAME: max_row = 1377 : i64, num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64
// CHECK-SAME: plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 4, -1>, rebase_planes = array<i64: 0>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 84 : i64, wide_offset_planes = array<i64>}
pool.model "row_space" attributes {allocation_bytes = 1050880 : i64, block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 4, -1]
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", end = 5120 : i64, layers = 1 : i64, offset = 0 : i64, plane = "nope", rows_per_window_row = 2 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 20 : i64, entry_bytes = 50688 : i64, needs_rebase, region_offset = 881920 : i64, reserved_bytes = 1013760 : i64}
  pool.entry_class "state" "state" {arena_bytes = 5120 : i64, arena_rows = 10 : i64, derived, entries = 2 : i64, entries_per_req = 1 : i64, entry_bytes = 16640 : i64, plane_checkpoint_ranges = [array<i64: 0, 5120>, array<i64>], plane_slack_bytes = array<i64: 0, 1280>, reserved_bytes = 33280 : i64}
  pool.row_space {arena_rows = 10 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 10, run_rows = 5>, #pool.row_class<ratio = 4, layers = [1, 2], block_rows = 64, ring_stride = 64, envelope_offset = 0, envelope_rows = 128, entry_offset = 5, entry_rows = 69, ring_start = 15, run_rows = 128>], entry_row_runs = array<i64: 0, 74>, entry_rows = 74 : i64, envelope_rows = 128 : i64, image_bytes = 52480 : i64, image_ranges = [array<i64: 0, 43008>, array<i64: 1280, 9472>], max_row = 1377 : i64, num_blocks = 20 : i64, num_slots = 2 : i64, page_class = "kv", plane_names = ["nope", "rope"], plane_offsets = array<i64: 0, 705536>, plane_rows = 1378 : i64, plane_widths = array<i64: 512, 128>, ratios = array<i64: 0, 4, 4, -1>, rebase_planes = array<i64: 0>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_positions = 53 : i64, slot_rows = 84 : i64, wide_offset_planes = array<i64>}
}

// -----

// A row space before pool-plan-pools (no split, no marks) prints without them; a row class's ring_start may be negative.
// CHECK-LABEL: pool.model "unplanned"
// CHECK: pool.row_space {{.*}}#pool.row_class<ratio = 128, layers = [0], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 0, entry_rows = 5, ring_start = -7, run_rows = 2>
// CHECK-NOT: num_blocks
// CHECK-NOT: max_row
// CHECK-NOT: slot_positions
pool.model "unplanned" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [128]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 128, layers = [0], block_rows = 2, ring_stride = 2, envelope_offset = 0, envelope_rows = 2, entry_offset = 0, entry_rows = 5, ring_start = -7, run_rows = 2>], entry_row_runs = array<i64: 0, 5>, entry_rows = 5 : i64, envelope_rows = 2 : i64, image_bytes = 5120 : i64, image_ranges = [array<i64: 0, 5120>], page_class = "kv", plane_names = ["kv"], plane_widths = array<i64: 1024>, ratios = array<i64: 128>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_rows = 6 : i64}
}
