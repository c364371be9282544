// pool-check-servable refuses, at the declaration that asks for it, what the
// runtime cannot serve (the rule is poolrt/Servable.h's, which the runtime
// applies to every artifact it loads), and leaves a servable model alone.
// RUN: pool-opt %s -split-input-file -verify-diagnostics --pool-check-servable | FileCheck %s

// A PAGE class and one fork class: served; nothing changes.
// CHECK-LABEL: pool.model "ok"
// CHECK: pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
pool.model "ok" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}

// -----

// No PAGE class: refused at the model.
// expected-error @+1 {{model 'np' declares no PAGE entry class}}
pool.model "np" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64}
}

// -----

// A fork beside a copy: refused at the second, with a note at the first.
pool.model "fc" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  // expected-note @+1 {{the first STATE class with a transfer}}
  pool.entry_class "s1" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  // expected-error @+1 {{STATE class 's2' declares a copy transfer, and 's1' a fork one}}
  pool.entry_class "s2" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "x">}
}

// -----

// Two forks outside a row space share one group: served.
// CHECK-LABEL: pool.model "ff"
pool.model "ff" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  pool.entry_class "s1" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
  pool.entry_class "s2" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 2>}
}

// -----

// A copy transfer without a row space.
pool.model "cp" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  // expected-error @+1 {{STATE class 's' has a copy transfer: its checkpoint image is copied into PAGE units}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", layout_id = "x">}
}

// -----

// A sliding-window class beside state with a transfer (the runtime runs
// window classes only in a stateless model): refused at the window class.
pool.model "ws" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1000 : i64}
  // expected-error @+1 {{window class 'swa' (sliding or chunked attention) runs beside a full PAGE class only in a stateless model without a row space: this model has STATE class 's' with a transfer}}
  pool.entry_class "swa" "page" {bytes = 1000 : i64, attention = "sliding", attention_tokens = 128 : i64}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1>}
}
