// A declaration round-trips through pool-opt unchanged.
// RUN: pool-opt %s | pool-opt | FileCheck %s

// CHECK-LABEL: pool.model "tiny"
// CHECK: pool.plane "kv" {dtype = "bf16", row_bytes = 1024 : i64}
// CHECK: pool.layers [0, 4, 128, -1]
// CHECK: pool.state_field "a" in "state"
// CHECK: pool.entry_class "kv" "page" {bytes = 1000 : i64}
// CHECK: pool.entry_class "state" "state" {derived, entries_per_req = 2 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
pool.model "tiny" attributes {block_size = 256 : i64, hash_block_size = 256 : i64} {
  pool.plane "kv" {row_bytes = 1024 : i64, dtype = "bf16"}
  pool.layers [0, 4, 128, -1]
  pool.state_field "a" in "state" {layers = 2 : i64, shape = array<i64: 3>, dtype = "f32"}
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "state" "state" {derived, entries_per_req = 2 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}
