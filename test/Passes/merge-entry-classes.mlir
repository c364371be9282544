// pool-merge-entry-classes folds same-name declarations into the first: bytes add, derived and transfer carry over, clashes are errors.
// RUN: pool-opt %s -split-input-file -verify-diagnostics --pool-merge-entry-classes | FileCheck %s

// Bytes add; the first declaration keeps its place between the others and the later ones are gone.
// CHECK-LABEL: pool.model "sum"
// CHECK-NEXT: pool.entry_class "a" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
// CHECK-NEXT: pool.entry_class "kv" "page" {bytes = 1250 : i64}
// CHECK-NEXT: pool.entry_class "b" "state" {bytes = 32 : i64, entries_per_req = 1 : i64}
// CHECK-NOT: pool.entry_class "kv"
// CHECK: }
pool.model "sum" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "a" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "b" "state" {bytes = 32 : i64, entries_per_req = 1 : i64}
  pool.entry_class "kv" "page" {bytes = 200 : i64}
  pool.entry_class "kv" "page" {bytes = 50 : i64}
}

// -----

// derived is ORed in, explicit bytes are kept, and a later transfer fills a missing one.
// CHECK-LABEL: pool.model "carry"
// CHECK: pool.entry_class "s" "state" {bytes = 128 : i64, derived, entries_per_req = 2 : i64, extra_entries = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "img">}
// CHECK-NEXT: pool.entry_class "t" "state" {bytes = 16 : i64, derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
// CHECK-NEXT: }
pool.model "carry" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "f" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.state_field "g" in "t" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {bytes = 128 : i64, entries_per_req = 2 : i64, extra_entries = 1 : i64}
  pool.entry_class "s" "state" {derived, entries_per_req = 2 : i64, extra_entries = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "img">}
  pool.entry_class "t" "state" {derived, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  pool.entry_class "t" "state" {bytes = 16 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}

// -----

// Distinct names are left alone and nothing is solved here.
// CHECK-LABEL: pool.model "distinct"
// CHECK-NEXT: pool.entry_class "kv" "page" {bytes = 1000 : i64}
// CHECK-NEXT: pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
// CHECK-NOT: entry_bytes
pool.model "distinct" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
}

// -----

// The same name in two pools is a clash.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.entry_class "x" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
  // expected-error @+1 {{'pool.entry_class' op entry class 'x' declared twice with different pool/multiplicity: SubPoolSpec(pool=state, name='x', entry_bytes=64, entries_per_req=1, extra_entries=0) vs SubPoolSpec(pool=page, name='x', entry_bytes=1000, entries_per_req=0, extra_entries=0)}}
  pool.entry_class "x" "page" {bytes = 1000 : i64}
}

// -----

// A different entries_per_req is a clash.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.state_field "f" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  // expected-note @+1 {{first declared here}}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
  // expected-error @+1 {{entry class 's' declared twice with different pool/multiplicity: SubPoolSpec(pool=state, name='s', entry_bytes=derived, entries_per_req=1, extra_entries=0) vs SubPoolSpec(pool=state, name='s', entry_bytes=64, entries_per_req=2, extra_entries=0)}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 2 : i64}
}

// -----

// A different extra_entries is a clash.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
  // expected-error @+1 {{entry class 's' declared twice with different pool/multiplicity: SubPoolSpec(pool=state, name='s', entry_bytes=64, entries_per_req=1, extra_entries=0) vs SubPoolSpec(pool=state, name='s', entry_bytes=64, entries_per_req=1, extra_entries=64)}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, extra_entries = 64 : i64}
}

// -----

// Two different transfers on one class are a clash.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  // expected-error @+1 {{'pool.entry_class' op entry class 's' declared twice with different transfers: #pool.transfer<"fork", tokens = 1> vs #pool.transfer<"fork", tokens = 2>}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 2>}
}

// -----

// A sum past int64 is an error, not a wrap.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 9223372036854775807 : i64}
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv': merged bytes overflow 64-bit arithmetic}}
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}
