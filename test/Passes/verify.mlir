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

// PAGE bytes cannot be derived yet: that needs the row-space solve.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv': derived PAGE bytes come from a row-space solve, which this compiler does not run yet; declare bytes explicitly}}
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
  pool.layers [0, 4]
  pool.state_field "a" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "b" in "state" {dtype = "f32", layers = 1 : i64, shape = array<i64: 3>}
  pool.state_field "c" in "conv" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 3, 64>}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "kv" "page" {bytes = 24 : i64}
  pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
  pool.entry_class "state" "state" {bytes = 256 : i64, entries_per_req = 1 : i64}
  pool.entry_class "conv" "state" {derived, entries_per_req = 2 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}
