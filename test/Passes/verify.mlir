// pool-verify rejects models poolc cannot compile (structure before budget) and leaves valid ones untouched.
// RUN: pool-opt %s -split-input-file -verify-diagnostics --pool-verify | FileCheck %s

// A model without an entry class has nothing to size.
// expected-error @+1 {{'pool.model' op model 'm' declares no entry class}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
}

// -----

// Two PAGE class names: one error on the model, one note per PAGE class.
// expected-error @+1 {{'pool.model' op more than one PAGE entry class: ['kv', 'other']}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{PAGE class 'kv'}}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "kv" "page" {bytes = 24 : i64}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
  // expected-note @+1 {{PAGE class 'other'}}
  pool.entry_class "other" "page" {bytes = 1000 : i64}
}

// -----

// Without planes nothing derives PAGE bytes: only a row space does.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv': derived PAGE bytes come from a row space; declare planes and layers, or give the bytes explicitly}}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "kv" "page" {derived}
}

// -----

// A derived STATE class needs state fields to derive from.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  // expected-error @+1 {{'pool.entry_class' op entry class 'state' derives its bytes from state fields, but no state field names it}}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Explicit STATE bytes must hold the fields' arena (two 12-byte fields: 512 B).
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  // expected-error @+1 {{'pool.entry_class' op entry class 'state' declares 500 bytes, but its state fields need an arena of 512 bytes}}
  pool.entry_class "state" "state" {bytes = 268 : i64, entries_per_req = 1 : i64}
  pool.entry_class "state" "state" {bytes = 232 : i64, entries_per_req = 1 : i64}
}

// -----

// A valid model passes unchanged: nothing is merged, laid out or sized.
// CHECK-LABEL: pool.model "ok"
// CHECK-NOT: offset =
// CHECK: pool.entry_class "kv" "page" {bytes = 1000 : i64}
// CHECK-NEXT: pool.entry_class "kv" "page" {bytes = 24 : i64}
// CHECK-NEXT: pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
// CHECK-NEXT: pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
// CHECK-NEXT: pool.entry_class "conv" "state" {derived, entries_per_req = 2 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
// CHECK-NOT: entry_bytes
// CHECK-NOT: entries =
pool.model "ok" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "c" in "conv" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 3, 64>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "kv" "page" {bytes = 24 : i64}
  pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
  pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
  pool.entry_class "conv" "state" {derived, entries_per_req = 2 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}

// -----

// Layers describe a row space: without planes they are refused.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.layers' op layers describe a row space, which needs planes (pool.plane)}}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
}

// -----

// A window field carries absent layers' windows, so it needs a row space too.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op window field 'w' needs a row space (planes and layers)}}
  pool.state_field "w" in "state" {dtype = "bf16", layers = 1 : i64, shape = array<i64: 8, 64>, window = true}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// Planes without layers: the row space has no compress ratios to solve.
// expected-error @+1 {{'pool.model' op model 'm' declares planes but no layers: a row space needs the per-layer compress ratios (pool.layers)}}
pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A row space without a sliding window has no windows to put in its slots.
// expected-error @+1 {{'pool.model' op a row space needs sliding_window >= 1 (every slot holds each layer's window)}}
pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A row space with no derived STATE class has no slot.
// expected-error @+1 {{'pool.model' op a row space needs exactly one STATE class with derived bytes (its slot), found 0}}
pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {bytes = 4096 : i64, entries_per_req = 1 : i64}
}

// -----

// Two derived STATE classes: which one is the slot is ambiguous; a note names each.
// expected-error @+1 {{'pool.model' op a row space needs exactly one STATE class with derived bytes (its slot), found 2}}
pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  // expected-note @+1 {{derived STATE class 'a'}}
  pool.entry_class "a" "state" {derived, entries_per_req = 1 : i64}
  // expected-note @+1 {{derived STATE class 'b'}}
  pool.entry_class "b" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// The slot's bytes are slot rows times the plane widths: explicit bytes (even in another declaration of the name) are refused.
pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {derived}
  // expected-error @+1 {{'pool.entry_class' op entry class 'state' is the row space's slot: its bytes are slot rows times the plane widths, so it takes no explicit bytes}}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
}

// -----

// In a row space every state field lives in the slot: a field of another STATE class is refused.
pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  // expected-error @+1 {{'pool.state_field' op state field 'conv' names class 'aux', but in a row space state fields live in the slot class 'state'}}
  pool.state_field "conv" in "aux" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.entry_class "kv" "page" {derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "aux" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
}

// -----

// The row space's PAGE class takes its bytes from the envelope: it must be derived.
pool.model "m" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
  pool.layers [0, 4]
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv' is the row space's PAGE class: declare it with derived bytes (envelope rows times the plane widths; explicit bytes in another declaration of the same name ride along)}}
  pool.entry_class "kv" "page" {bytes = 4096 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A valid row-space model passes unchanged: a derived PAGE class (explicit indexer bytes riding along), one derived slot, a plain STATE class without fields; nothing is solved.
// CHECK-LABEL: pool.model "rs_ok"
// CHECK: pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
// CHECK-NEXT: pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
// CHECK-NEXT: pool.entry_class "aux" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
// CHECK-NOT: pool.row_space
// CHECK-NOT: plane =
pool.model "rs_ok" attributes {block_size = 256 : i64, hash_block_size = 256 : i64, sliding_window = 128 : i64} {
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  pool.plane "rope" {dtype = "bf16", row_bytes = 128 : i64}
  pool.layers [0, 4, 128, -1]
  pool.state_field "w" in "state" {dtype = "bf16", layers = 1 : i64, shape = array<i64: 128, 64>, window = true}
  pool.entry_class "kv" "page" {bytes = 8448 : i64, derived}
  pool.entry_class "state" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "aux" "state" {bytes = 512 : i64, entries_per_req = 1 : i64}
}
