// Every diagnostic the pool dialect's op, region and attribute verifiers emit, one case each.
// RUN: pool-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// pool.model geometry
//===----------------------------------------------------------------------===//

// A block holds at least one token.
// expected-error @+1 {{'pool.model' op block_size must be in 1..1048576, got 0}}
pool.model "m" attributes {block_size = 0 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// ... and at most 2^20 tokens, so blocks x block_size never wraps.
// expected-error @+1 {{'pool.model' op block_size must be in 1..1048576, got 4611686018427387904}}
pool.model "m" attributes {block_size = 4611686018427387904 : i64, hash_block_size = 4611686018427387904 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// A prefix-hash block is one block: decode-context parallelism > 1 (a hash
// block of several blocks) is not something the runtime serves.
// expected-error @+1 {{'pool.model' op hash_block_size 24 must equal block_size 16 (decode-context parallelism > 1 is not supported)}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 24 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// hash_block_size 0 neither.
// expected-error @+1 {{'pool.model' op hash_block_size 0 must equal block_size 16 (decode-context parallelism > 1 is not supported)}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 0 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// A whole multiple (DCP 2) is refused too.
// expected-error @+1 {{'pool.model' op hash_block_size 32 must equal block_size 16 (decode-context parallelism > 1 is not supported)}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 32 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// A negative sliding window is rejected.
// expected-error @+1 {{'pool.model' op sliding_window must be >= 0, got -1}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64, sliding_window = -1 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// A negative speculative depth is rejected.
// expected-error @+1 {{'pool.model' op spec_depth must be >= 0, got -2}}
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64, spec_depth = -2 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

//===----------------------------------------------------------------------===//
// pool.model region: what needs the whole declaration
//===----------------------------------------------------------------------===//

// Only pool declarations may sit in a model body.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  pool.entry_class "kv" "page" {bytes = 1 : i64}
  // expected-error @+1 {{'builtin.module' op is not a declaration a pool.model can hold}}
  builtin.module {}
}

// -----

// Plane names are unique; the note points at the first declaration.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
  // expected-error @+1 {{'pool.plane' op duplicate plane name 'nope'}}
  pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 128 : i64}
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// State field names are unique across the model, whatever class holds them.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.state_field "conv" in "s" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 4>}
  // expected-error @+1 {{'pool.state_field' op duplicate state field name 'conv'}}
  pool.state_field "conv" in "t" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
  pool.entry_class "t" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A model has one layers op.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-note @+1 {{first declared here}}
  pool.layers [0, 0]
  // expected-error @+1 {{'pool.layers' op a model declares its layers once}}
  pool.layers [0, 4]
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// A state field must name a class the model declares.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op names entry class 'missing', which this model does not declare}}
  pool.state_field "conv" in "missing" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 4>}
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// A state field cannot live in a PAGE class; the note points at the class.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op names entry class 'kv', which is a PAGE class; state fields live in STATE entries}}
  pool.state_field "conv" in "kv" {dtype = "bf16", layers = 2 : i64, shape = array<i64: 4>}
  // expected-note @+1 {{declared here}}
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// Every nonzero compress ratio divides block_size (quirk Q6).
pool.model "m" attributes {block_size = 64 : i64, hash_block_size = 64 : i64} {
  // expected-error @+1 {{'pool.layers' op block_size 64 is not a multiple of compress ratio 128 (layer 2): a block would hold a fractional compressed row}}
  pool.layers [0, 4, 128]
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

// At least one layer must keep rows in the row space (quirk Q6).
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.layers' op every layer is absent (-1): a row space needs at least one layer}}
  pool.layers [-1, -1]
  pool.entry_class "kv" "page" {bytes = 1 : i64}
}

// -----

//===----------------------------------------------------------------------===//
// pool.plane, pool.layers
//===----------------------------------------------------------------------===//

// A plane row is at least one byte wide.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.plane' op plane 'p': row_bytes must be >= 1, got 0}}
  pool.plane "p" {dtype = "bf16", row_bytes = 0 : i64}
}

// -----

// A plane's dtype must be one the layout library knows.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.plane' op plane 'p': unknown dtype 'f12' (expected one of f64, f32, f16, bf16, fp8_e4m3, fp8_e5m2, i64, i32, i8, u8)}}
  pool.plane "p" {dtype = "f12", row_bytes = 512 : i64}
}

// -----

// An empty ratio list declares no layer.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.layers' op needs at least one layer}}
  pool.layers []
}

// -----

// Ratios are 0, 4, 128 or -1.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.layers' op unknown compress ratio 8 at layer 1 (expected 0 dense, 4 CSA, 128 HCA or -1 absent)}}
  pool.layers [0, 8]
}

// -----

//===----------------------------------------------------------------------===//
// pool.state_field
//===----------------------------------------------------------------------===//

// A field's dtype must be one the layout library knows.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op state field 'a': unknown dtype 'float128' (expected one of f64, f32, f16, bf16, fp8_e4m3, fp8_e5m2, i64, i32, i8, u8)}}
  pool.state_field "a" in "s" {dtype = "float128", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A field needs a name.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a state field needs a non-empty name}}
  pool.state_field "" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A negative layer count is rejected.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: layers must be >= 0, got -1}}
  pool.state_field "a" in "s" {dtype = "f32", layers = -1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A negative shape dimension is rejected.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: shape dimensions must be >= 0, got -3}}
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4, -3>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// An extra alignment is a multiple of 256.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: alignment 100 must be a multiple of 256}}
  pool.state_field "a" in "s" {align = 100 : i64, dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A negative alignment is rejected by the same check.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: alignment -256 must be a multiple of 256}}
  pool.state_field "a" in "s" {align = -256 : i64, dtype = "f32", layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// 0.1 has no exact bf16 value.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: fill value 0.10000000000000001 is not representable in bf16}}
  pool.state_field "a" in "s" {dtype = "bf16", fill = 1.000000e-01 : f64, layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// fp8 holds only a 0 fill here, so a -inf score state must use a wider dtype.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: fill value -inf is not representable in fp8_e4m3}}
  pool.state_field "a" in "s" {dtype = "fp8_e4m3", fill = 0xFFF0000000000000 : f64, layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// An integer field needs an integral fill in range.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: fill value 256 is not representable in u8}}
  pool.state_field "a" in "s" {dtype = "u8", fill = 2.560000e+02 : f64, layers = 1 : i64, shape = array<i64: 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// The element count of a shape must fit in 64 bits.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a shape: 4611686018427387904 * 4 overflows 64-bit arithmetic}}
  pool.state_field "a" in "s" {dtype = "f32", layers = 1 : i64, shape = array<i64: 4611686018427387904, 4>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// So must the byte count (elements * itemsize * layers).
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a bytes: 1152921504606846976 * 16 overflows 64-bit arithmetic}}
  pool.state_field "a" in "s" {dtype = "f32", layers = 16 : i64, shape = array<i64: 288230376151711744>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

// A field that fits in 64 bits but leaves no headroom for the 256 B rounding is refused.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.state_field' op a: 4611686018427387904 bytes per entry is too large}}
  pool.state_field "a" in "s" {dtype = "u8", layers = 1 : i64, shape = array<i64: 4611686018427387904>}
  pool.entry_class "s" "state" {derived, entries_per_req = 1 : i64}
}

// -----

//===----------------------------------------------------------------------===//
// pool.entry_class
//===----------------------------------------------------------------------===//

// A class needs a name.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op an entry class needs a non-empty name}}
  pool.entry_class "" "page" {bytes = 1 : i64}
}

// -----

// The pool is "page" or "state".
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv': unknown pool 'paged' (expected "page" or "state")}}
  pool.entry_class "kv" "paged" {bytes = 1 : i64}
}

// -----

// A class declares its bytes, derives them, or both.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv' declares neither bytes nor derived}}
  pool.entry_class "kv" "page"
}

// -----

// Declared bytes are at least 1 (quirk Q5: a 0-byte PAGE class would divide by zero).
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op entry class 'kv': bytes must be >= 1, got 0}}
  pool.entry_class "kv" "page" {bytes = 0 : i64}
}

// -----

// A STATE class holds at least one entry per request.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op 's': STATE entries need entries_per_req >= 1}}
  pool.entry_class "s" "state" {bytes = 64 : i64}
}

// -----

// A PAGE class takes no entries_per_req.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op 'kv': PAGE entries are sized from the remainder (no entries_per_req or extra_entries)}}
  pool.entry_class "kv" "page" {bytes = 64 : i64, entries_per_req = 1 : i64}
}

// -----

// A PAGE class takes no extra_entries either.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op 'kv': PAGE entries are sized from the remainder (no entries_per_req or extra_entries)}}
  pool.entry_class "kv" "page" {bytes = 64 : i64, extra_entries = 4 : i64}
}

// -----

// A negative cushion would lower the STATE reservation (quirk Q5).
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op 's': extra_entries must be >= 0, got -3}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, extra_entries = -3 : i64}
}

// -----

// Only STATE classes checkpoint, so only they carry a transfer.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{'pool.entry_class' op 'kv': a PAGE class has no state transfer}}
  pool.entry_class "kv" "page" {bytes = 64 : i64, transfer = #pool.transfer<"none">}
}

// -----

//===----------------------------------------------------------------------===//
// #pool.transfer
//===----------------------------------------------------------------------===//

// "none" takes no tokens.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{transfer "none" takes neither tokens nor a layout_id}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"none", tokens = 1>}
}

// -----

// "none" takes no layout_id.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{transfer "none" takes neither tokens nor a layout_id}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"none", layout_id = "img">}
}

// -----

// "fork" needs successor room: the next forward carries at least one token.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{transfer "fork" needs tokens >= 1 (the successor room), got 0}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork">}
}

// -----

// A negative token count is no room either.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{transfer "fork" needs tokens >= 1 (the successor room), got -1}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = -1>}
}

// -----

// "fork" hands the live group over, so there is no image layout.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{transfer "fork" takes no layout_id}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"fork", tokens = 1, layout_id = "img">}
}

// -----

// "copy" must name the image geometry.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{transfer "copy" needs a non-empty layout_id naming the checkpoint image geometry}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy">}
}

// -----

// "copy" takes no tokens.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{transfer "copy" takes no tokens}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"copy", tokens = 2, layout_id = "img">}
}

// -----

// The kind is one of three.
pool.model "m" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
  // expected-error @+1 {{unknown transfer kind "move" (expected "none", "fork" or "copy")}}
  pool.entry_class "s" "state" {bytes = 64 : i64, entries_per_req = 1 : i64, transfer = #pool.transfer<"move">}
}
