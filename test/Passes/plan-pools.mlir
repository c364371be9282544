// pool-plan-pools reserves the STATE floor first, gives the PAGE class the remainder and carves one 256-aligned allocation (spec §1.3, quirks Q3-Q5).
// Each part below runs under its own pass options.
// RUN: split-file %s %t
// RUN: pool-opt %t/budget-10000.mlir -split-input-file -verify-diagnostics --pool-merge-entry-classes --pool-layout-state-fields --pool-plan-pools="budget=10000 max-num-seqs=8" | FileCheck %t/budget-10000.mlir
// RUN: pool-opt %t/plan-only.mlir -split-input-file -verify-diagnostics --pool-plan-pools="budget=10000 max-num-seqs=8" | FileCheck %t/plan-only.mlir
// RUN: pool-opt %t/pp-min-blocks.mlir -split-input-file -verify-diagnostics --pool-merge-entry-classes --pool-layout-state-fields --pool-plan-pools="budget=10000 max-num-seqs=8 pp-min-blocks=1" | FileCheck %t/pp-min-blocks.mlir
// RUN: pool-opt %t/large.mlir --pool-merge-entry-classes --pool-layout-state-fields --pool-plan-pools="budget=1099511627776 max-num-seqs=256" | FileCheck %t/large.mlir
// RUN: pool-opt %t/negative-budget.mlir -split-input-file -verify-diagnostics --pool-layout-state-fields --pool-plan-pools="budget=-1 max-num-seqs=8"
// RUN: pool-opt %t/row-space.mlir -split-input-file -verify-diagnostics --pool-verify --pool-merge-entry-classes --pool-assign-field-planes --pool-layout-state-fields --pool-solve-row-space --pool-plan-pools="budget=1048576 max-num-seqs=2" | FileCheck %t/row-space.mlir
// RUN: pool-opt %t/row-space-solved.mlir -split-input-file -verify-diagnostics --pool-plan-pools="budget=1048576 max-num-seqs=2"
// RUN: not pool-opt %t/options.mlir --pool-layout-state-fields --pool-plan-pools="max-num-seqs=8" 2>&1 | FileCheck %t/options.mlir --check-prefix=NO-BUDGET
// RUN: not pool-opt %t/options.mlir --pool-layout-state-fields --pool-plan-pools="budget=10000" 2>&1 | FileCheck %t/options.mlir --check-prefix=NO-SEQS
// RUN: not pool-opt %t/options.mlir --pool-layout-state-fields --pool-plan-pools="budget=10000 max-num-seqs=-3" 2>&1 | FileCheck %t/options.mlir --check-prefix=NEG-SEQS
// RUN: not pool-opt %t/options.mlir --pool-layout-state-fields --pool-plan-pools="budget=10000 max-num-seqs=8 pp-min-blocks=-5" 2>&1 | FileCheck %t/options.mlir --check-prefix=NEG-PP
// RUN: not pool-opt %t/options.mlir --pool-layout-state-fields --pool-plan-pools="budget=10000 max-num-seqs=8 pp-min-blocks=-1" 2>&1 | FileCheck %t/options.mlir --check-prefix=NEG-PP1

//--- budget-10000.mlir

// pp_state_floor_first: 8 seqs * 2 recurrent entries of 500 B are reserved first; kv gets the remaining 2000 B.
// CHECK-LABEL: pool.model "floor_first"
// CHECK-SAME: allocation_bytes = 10240 : i64
// CHECK-SAME: budget = 10000 : i64
// CHECK-SAME: max_num_seqs = 8 : i64
// CHECK-SAME: total_reserved_bytes = 10000 : i64
// CHECK: pool.entry_class "kv" "page" {bytes = 1000 : i64, entries = 2 : i64, entry_bytes = 1000 : i64, region_offset = 0 : i64, reserved_bytes = [[KV:2000]] : i64}
// CHECK: pool.entry_class "recurrent" "state" {bytes = 500 : i64, entries = 16 : i64, entries_per_req = 2 : i64, entry_bytes = 500 : i64, region_offset = 2048 : i64, reserved_bytes = 8000 : i64}
pool.model "floor_first" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "recurrent" "state" {bytes = 500 : i64, entries_per_req = 2 : i64}
}

// -----

// pp_remainder_only: without STATE classes kv takes floor(budget / entry) entries.
// CHECK-LABEL: pool.model "remainder_only"
// CHECK-SAME: allocation_bytes = 9216 : i64
// CHECK-SAME: total_reserved_bytes = 9000 : i64
// CHECK: pool.entry_class "kv" "page" {bytes = 3000 : i64, entries = 3 : i64, entry_bytes = 3000 : i64, region_offset = 0 : i64, reserved_bytes = 9000 : i64}
pool.model "remainder_only" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 3000 : i64}
}

// -----

// pp_flat_extra: extra_entries add a flat cushion of 3 to 8 * 1; the next region starts on a 256 boundary.
// CHECK-LABEL: pool.model "extra"
// CHECK-SAME: allocation_bytes = 10240 : i64
// CHECK-SAME: total_reserved_bytes = 9910 : i64
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 98 : i64, {{.*}}region_offset = 0 : i64, reserved_bytes = 9800 : i64}
// CHECK: pool.entry_class "recurrent" "state" {{.*}}entries = 11 : i64, {{.*}}region_offset = 9984 : i64, reserved_bytes = 110 : i64}
pool.model "extra" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 100 : i64}
  pool.entry_class "recurrent" "state" {bytes = 10 : i64, entries_per_req = 1 : i64, extra_entries = 3 : i64}
}

// -----

// Q3: a STATE floor that fits the budget exactly is a plan with 0 PAGE entries, not an error.
// CHECK-LABEL: pool.model "exact_fit"
// CHECK-SAME: total_reserved_bytes = 10000 : i64
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 0 : i64, {{.*}}reserved_bytes = 0 : i64}
// CHECK: pool.entry_class "recurrent" "state" {{.*}}entries = 8 : i64, {{.*}}reserved_bytes = 10000 : i64}
pool.model "exact_fit" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "recurrent" "state" {bytes = 1250 : i64, entries_per_req = 1 : i64}
}

// -----

// One byte over the budget is insufficient: the error carries the numbers and each STATE class gets a note.
// expected-error @+1 {{insufficient pool budget: state pool needs 10020B of 10000B (28 STATE entries for 8 sequences; reserved_bytes=10020 available_bytes=10000); raise the budget or lower max-num-seqs}}
pool.model "insufficient" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  // expected-note @+1 {{STATE class 'recurrent' reserves (8 * 1 + 0) entries * 1000 bytes}}
  pool.entry_class "recurrent" "state" {bytes = 1000 : i64, entries_per_req = 1 : i64}
  // expected-note @+1 {{STATE class 'window' reserves (8 * 2 + 4) entries * 101 bytes}}
  pool.entry_class "window" "state" {bytes = 101 : i64, entries_per_req = 2 : i64, extra_entries = 4 : i64}
}

// -----

// The whole pipeline: merged bytes size the PAGE class, a derived arena sizes the STATE class.
// CHECK-LABEL: pool.model "pipeline"
// CHECK-SAME: allocation_bytes = 9216 : i64
// CHECK-SAME: total_reserved_bytes = 9192 : i64
// CHECK: pool.entry_class "state" "state" {{.*}}entries = 16 : i64, {{.*}}entry_bytes = 512 : i64, region_offset = 1024 : i64, reserved_bytes = 8192 : i64}
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 1 : i64, entry_bytes = 1000 : i64, region_offset = 0 : i64, reserved_bytes = 1000 : i64}
// CHECK-NOT: pool.entry_class
pool.model "pipeline" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "state" "state" {derived, entries_per_req = 2 : i64}
  pool.entry_class "kv" "page" {bytes = 800 : i64}
  pool.entry_class "kv" "page" {bytes = 200 : i64}
}

// -----

// Q4: a second PAGE class is reported before the budget, even when the STATE floor would not fit either.
// expected-error @+1 {{'pool.model' op more than one PAGE entry class: ['kv', 'draft']}}
pool.model "two_pages" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "draft" "page" {bytes = 1000 : i64}
  pool.entry_class "recurrent" "state" {bytes = 100000 : i64, entries_per_req = 1 : i64}
}

// -----

// A STATE reservation past int64 is an error, not a wrap: one class's bytes.
// expected-error @+1 {{'pool.model' op recurrent reserved bytes: 8 * 4611686018427387904 overflows 64-bit arithmetic}}
pool.model "overflow_bytes" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "recurrent" "state" {bytes = 4611686018427387904 : i64, entries_per_req = 1 : i64}
}

// -----

// A STATE reservation past int64 is an error, not a wrap: one class's entry count.
// expected-error @+1 {{'pool.model' op recurrent entries: 8 * 2305843009213693952 overflows 64-bit arithmetic}}
pool.model "overflow_entries" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "recurrent" "state" {bytes = 1 : i64, entries_per_req = 2305843009213693952 : i64}
}

// -----

// A STATE reservation past int64 is an error, not a wrap: the sum over classes.
// expected-error @+1 {{'pool.model' op STATE reservation: 4611686018427387904 + 4611686018427387904 overflows 64-bit arithmetic}}
pool.model "overflow_sum" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "a" "state" {bytes = 576460752303423488 : i64, entries_per_req = 1 : i64}
  pool.entry_class "b" "state" {bytes = 576460752303423488 : i64, entries_per_req = 1 : i64}
}

//--- plan-only.mlir
// Q5: a class that reaches planning with 0 entry bytes (written by hand) is not a usable entry size.
pool.model "zero_entry" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op s: entry_bytes must be >= 1, got 0}}
  pool.entry_class "s" "state" {bytes = 1 : i64, entry_bytes = 0 : i64, entries_per_req = 1 : i64}
}

// -----

// The pass sizes from entry_bytes (set by pool-layout-state-fields), not from the declared bytes.
// CHECK-LABEL: pool.model "given"
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 8 : i64, {{.*}}reserved_bytes = 8000 : i64}
// CHECK: pool.entry_class "s" "state" {{.*}}entries = 8 : i64, {{.*}}reserved_bytes = 2000 : i64}
pool.model "given" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64, entry_bytes = 1000 : i64}
  pool.entry_class "s" "state" {bytes = 1 : i64, entries_per_req = 1 : i64, entry_bytes = 250 : i64}
}

// -----

// Without entry_bytes the pass asks for the layout pass.
pool.model "unlaid" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv' has no entry_bytes; run pool-layout-state-fields first}}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
}

// -----

// Unmerged declarations are refused rather than sized twice.
pool.model "unmerged" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.entry_class "s" "state" {bytes = 1 : i64, entries_per_req = 1 : i64, entry_bytes = 250 : i64}
  // expected-error @+1 {{'pool.entry_class' op entry class 's' is declared more than once; run pool-merge-entry-classes first}}
  pool.entry_class "s" "state" {bytes = 1 : i64, entries_per_req = 1 : i64, entry_bytes = 250 : i64}
}

//--- pp-min-blocks.mlir

// Pipeline stages reconcile to the minimum block count: kv drops from 2 to 1 entry; STATE is untouched.
// CHECK-LABEL: pool.model "lowered"
// CHECK-SAME: allocation_bytes = 9216 : i64
// CHECK-SAME: total_reserved_bytes = 9000 : i64
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 1 : i64, {{.*}}region_offset = 0 : i64, reserved_bytes = 1000 : i64}
// CHECK: pool.entry_class "recurrent" "state" {{.*}}entries = 16 : i64, {{.*}}region_offset = 1024 : i64, reserved_bytes = 8000 : i64}
pool.model "lowered" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "recurrent" "state" {bytes = 500 : i64, entries_per_req = 2 : i64}
}

// -----

// A stage minimum above this stage's own count changes nothing (the exact fit keeps 0 PAGE entries).
// CHECK-LABEL: pool.model "kept"
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 0 : i64,
pool.model "kept" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "recurrent" "state" {bytes = 1250 : i64, entries_per_req = 1 : i64}
}

// -----

// pp-min-blocks needs a PAGE class to reconcile.
// expected-error @+1 {{'pool.model' op pp-min-blocks given, but the model has no PAGE entry class to reconcile}}
pool.model "stateless_page" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "recurrent" "state" {bytes = 500 : i64, entries_per_req = 2 : i64}
}

//--- large.mlir

// A 2^40-byte budget with 20,000,000-byte entries: exact 64-bit numbers, nothing truncated to 32 bits.
// CHECK-LABEL: pool.model "large"
// CHECK-SAME: allocation_bytes = [[TOTAL:1099500000000]] : i64
// CHECK-SAME: budget = 1099511627776 : i64
// CHECK-SAME: max_num_seqs = 256 : i64
// CHECK-SAME: total_reserved_bytes = [[TOTAL]] : i64
// CHECK: pool.entry_class "kv" "page" {{.*}}entries = 54719 : i64, {{.*}}region_offset = 0 : i64, reserved_bytes = [[KV:1094380000000]] : i64}
// CHECK: pool.entry_class "state" "state" {{.*}}entries = 256 : i64, {{.*}}region_offset = [[KV]] : i64, reserved_bytes = 5120000000 : i64}
pool.model "large" attributes {block_size = 256 : i64, hash_block_size = 256 : i64} {
  pool.entry_class "kv" "page" {bytes = 20000000 : i64}
  pool.entry_class "state" "state" {bytes = 20000000 : i64, entries_per_req = 1 : i64}
}

//--- negative-budget.mlir

// A negative budget is refused, not planned: a stateless model would otherwise get 0 PAGE entries from it (a runner that subtracted more than it had must say so itself).
// expected-error @+1 {{pool-plan-pools needs a budget >= 0 bytes, got -1}}
pool.model "stateless" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
}

// -----

// With a STATE class too: the budget is refused before any reservation is sized against it.
// expected-error @+1 {{pool-plan-pools needs a budget >= 0 bytes, got -1}}
pool.model "stateful" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "s" "state" {bytes = 1 : i64, entries_per_req = 1 : i64}
}

//--- row-space.mlir

// In a row space the planes hold the blocks and the slots. Slot 26 rows, block (envelope) 66 rows, 640 B a row over both planes.
// STATE first: 2 slots x 16,640 B + 2 aux x 1,000 B; PAGE (66 x 640 + 8,448 B indexer = 50,688 B) takes the rest: 19 blocks.
// plane_rows = (num_slots + ceil(num_blocks * envelope / slot_rows)) * slot_rows = (2 + ceil(1254 / 26)) * 26 = 51 x 26 = 1326.
// Allocation: the planes (1326 x 512 at 0, 1326 x 128 at 678,912), then the PAGE class's explicit part (19 x 8,448 B) at 848,640,
// then the other STATE class at 1,009,152; the slot class has no region of its own. The planes round the blocks up to whole slots,
// so the allocation (1,011,200 B) passes the reservation (998,352 B) by 20 rows x 640 B plus 48 B of alignment.
// CHECK-LABEL: pool.model "split"
// CHECK-SAME: allocation_bytes = 1011200 : i64
// CHECK-SAME: total_reserved_bytes = 998352 : i64
// CHECK: pool.entry_class "kv" "page" {bytes = 8448 : i64, derived, entries = 19 : i64, entry_bytes = 50688 : i64, region_offset = 848640 : i64, reserved_bytes = 963072 : i64}
// CHECK: pool.entry_class "state" "state" {{.*}}entries = 2 : i64, {{.*}}entry_bytes = 16640 : i64, {{[^}]*}}reserved_bytes = 33280 : i64}
// CHECK: pool.entry_class "aux" "state" {{.*}}region_offset = 1009152 : i64, reserved_bytes = 2000 : i64}
// CHECK: pool.row_space
// CHECK-SAME: num_blocks = 19 : i64, num_slots = 2 : i64
// CHECK-SAME: plane_offsets = array<i64: 0, 678912>, plane_rows = 1326 : i64
// CHECK-SAME: slot_positions = 51 : i64, slot_rows = 26 : i64
pool.model "split" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "conv" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "win" in "state" {align = 1024 : i64, dtype = "bf16", layers = 1 : i64, shape = array<i64: 5, 512>, window = true}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "aux" "state" {bytes = 1000 : i64, entries_per_req = 1 : i64}
  pool.entry_class "kv" "page" {bytes = 8448 : i64}
}

// -----

// A PAGE class with no explicit bytes lives entirely in the plane: no class gets a region. 960 block rows fill 96 slots exactly,
// so the plane ((2 + 96) x 10 rows x 1,024 B) is exactly the reservation.
// CHECK-LABEL: pool.model "planes_only"
// CHECK-SAME: allocation_bytes = [[ALLOC:1003520]] : i64
// CHECK-SAME: total_reserved_bytes = [[ALLOC]] : i64
// CHECK-NOT: region_offset
// CHECK: pool.row_space
// CHECK-SAME: num_blocks = 15 : i64, num_slots = 2 : i64
// CHECK-SAME: plane_offsets = array<i64: 0>, plane_rows = 980 : i64
// CHECK-SAME: slot_positions = 98 : i64
pool.model "planes_only" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

//--- row-space-solved.mlir

// A row space whose slot_rows (12) is not what its own numbers give (10) was edited or is stale: refused.
pool.model "stale" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived, entry_bytes = 65536 : i64}
  pool.entry_class "state" "state" {arena_rows = 0 : i64, derived, entries_per_req = 1 : i64, entry_bytes = 10240 : i64}
  // expected-error @+1 {{'pool.row_space' op disagrees with its own geometry: re-run pool-solve-row-space}}
  pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 0, run_rows = 5>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 0, envelope_rows = 64, entry_offset = 5, entry_rows = 5, ring_start = 5, run_rows = 64>], entry_row_runs = array<i64: 0, 10>, entry_rows = 10 : i64, envelope_rows = 64 : i64, image_bytes = 10240 : i64, image_ranges = [array<i64: 0, 10240>], page_class = "kv", plane_names = ["kv"], plane_widths = array<i64: 1024>, ratios = array<i64: 0, 4>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_rows = 12 : i64}
}

// -----

// A row space naming a PAGE class the model does not declare.
pool.model "unknown_class" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 4 : i64, spec_depth = 1 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived, entry_bytes = 65536 : i64}
  pool.entry_class "state" "state" {arena_rows = 0 : i64, derived, entries_per_req = 1 : i64, entry_bytes = 10240 : i64}
  // expected-error @+1 {{'pool.row_space' op names classes the model does not plan}}
  pool.row_space {arena_rows = 0 : i64, block_size = 256 : i64, classes = [#pool.row_class<ratio = 0, layers = [0], block_rows = 0, ring_stride = 5, envelope_offset = 0, envelope_rows = 0, entry_offset = 0, entry_rows = 5, ring_start = 0, run_rows = 5>, #pool.row_class<ratio = 4, layers = [1], block_rows = 64, ring_stride = 64, envelope_offset = 0, envelope_rows = 64, entry_offset = 5, entry_rows = 5, ring_start = 5, run_rows = 64>], entry_row_runs = array<i64: 0, 10>, entry_rows = 10 : i64, envelope_rows = 64 : i64, image_bytes = 10240 : i64, image_ranges = [array<i64: 0, 10240>], page_class = "blocks", plane_names = ["kv"], plane_widths = array<i64: 1024>, ratios = array<i64: 0, 4>, ring_slots = 5 : i64, slot_align_rows = 2 : i64, slot_class = "state", slot_rows = 10 : i64}
}

//--- options.mlir

// The budget and max-num-seqs options are required, and max-num-seqs is not negative.
// NO-BUDGET: error: pool-plan-pools needs a budget (budget=BYTES)
// NO-SEQS: error: pool-plan-pools needs max-num-seqs >= 0, got -1{{$}}
// NEG-SEQS: error: pool-plan-pools needs max-num-seqs >= 0, got -3{{$}}
// pp-min-blocks is optional, but only leaving it out means none: a negative one (even -1) is refused.
// NEG-PP: error: pool-plan-pools needs pp-min-blocks >= 0 when given, got -5{{$}}
// NEG-PP1: error: pool-plan-pools needs pp-min-blocks >= 0 when given, got -1{{$}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
}
