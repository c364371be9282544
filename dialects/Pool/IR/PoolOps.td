//===- PoolOps.td - pool dialect operations ----------------*- tablegen -*-===//
#ifndef POOL_OPS_TD
#define POOL_OPS_TD

include "dialects/Pool/IR/PoolDialect.td"
include "dialects/Pool/IR/PoolAttrs.td"
include "mlir/IR/OpBase.td"

def Pool_ModelOp : Pool_Op<"model", [NoTerminator, SingleBlock,
                                      IsolatedFromAbove]> {
  let summary = "one model's cache declaration on one rank";
  let description = [{
    Holds the declaration ops of one model. Geometry attributes:
    `block_size` (tokens per PAGE block), `hash_block_size` (tokens per
    prefix-hash block, a multiple of `block_size`), `sliding_window` and
    `spec_depth` (speculative tokens per step).

    Solved attributes, set by `pool-plan-pools`: `budget`, `max_num_seqs`,
    `total_reserved_bytes`, `allocation_bytes` (one allocation holding every
    class's region, each start 256-aligned).

    ```mlir
    pool.model "llama" attributes {block_size = 16 : i64, hash_block_size = 16 : i64} {
      pool.entry_class "kv" "page" {bytes = 2129920 : i64}
    }
    ```
  }];
  let arguments = (ins
    StrAttr:$name,
    I64Attr:$block_size,
    I64Attr:$hash_block_size,
    DefaultValuedAttr<I64Attr, "0">:$sliding_window,
    DefaultValuedAttr<I64Attr, "0">:$spec_depth,
    OptionalAttr<I64Attr>:$budget,
    OptionalAttr<I64Attr>:$max_num_seqs,
    OptionalAttr<I64Attr>:$total_reserved_bytes,
    OptionalAttr<I64Attr>:$allocation_bytes
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

def Pool_PlaneOp : Pool_Op<"plane", [HasParent<"ModelOp">]> {
  let summary = "a plane of the row space: one row width and dtype";
  let description = [{
    Every plane materializes the same rows at its own width (DeepSeek-V4 fp8:
    a 512 B NoPE plane and a 128 B RoPE plane; bf16: one 1024 B plane).

    ```mlir
    pool.plane "nope" {dtype = "fp8_e4m3", row_bytes = 512 : i64}
    ```
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$row_bytes, StrAttr:$dtype);
  let assemblyFormat = "$name attr-dict";
  let hasVerifier = 1;
}

def Pool_LayersOp : Pool_Op<"layers", [HasParent<"ModelOp">]> {
  let summary = "per-layer compress ratios";
  let description = [{
    One entry per layer: 0 dense (window only), 4 CSA, 128 HCA, -1 absent
    (the layer keeps no KV in the row space; its window is a state field).

    ```mlir
    pool.layers [0, 0, 4, 128, 4]
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$ratios);
  let assemblyFormat = "$ratios attr-dict";
  let hasVerifier = 1;
}

def Pool_StateFieldOp : Pool_Op<"state_field", [HasParent<"ModelOp">]> {
  let summary = "a per-request state field held by a STATE entry class";
  let description = [{
    `shape` is what one (layer, entry) pair holds; the field spans `layers`
    layers, layer-major. `fill` is a fresh entry's value, `align` an extra
    start alignment (0 or a multiple of 256), `in_checkpoint` whether a
    checkpoint image carries it. `pool-layout-state-fields` sets `offset` and
    `end` (bytes from the start of an entry).

    ```mlir
    pool.state_field "conv" in "state" {dtype = "bf16", layers = 48 : i64, shape = array<i64: 3, 5120>}
    ```
  }];
  let arguments = (ins
    StrAttr:$name,
    StrAttr:$entry_class,
    I64Attr:$layers,
    DenseI64ArrayAttr:$shape,
    StrAttr:$dtype,
    DefaultValuedAttr<F64Attr, "0.0">:$fill,
    DefaultValuedAttr<I64Attr, "0">:$align,
    DefaultValuedAttr<BoolAttr, "true">:$in_checkpoint,
    OptionalAttr<I64Attr>:$offset,
    OptionalAttr<I64Attr>:$end
  );
  let assemblyFormat = "$name `in` $entry_class attr-dict";
  let hasVerifier = 1;
}

def Pool_EntryClassOp : Pool_Op<"entry_class", [HasParent<"ModelOp">]> {
  let summary = "an entry class the pools size";
  let description = [{
    `pool` is `"page"` (sized from the budget's remainder) or `"state"`
    (reserved per request first). `bytes` is the declared size of one entry;
    `derived` says the compiler adds what it derives (a STATE class: its
    fields' arena). Declarations that share a name share an index space and
    add their bytes (`pool-merge-entry-classes`).

    Solved attributes: `arena_bytes`, `entry_bytes` and `checkpoint_ranges`
    (flattened (offset, bytes) pairs) from `pool-layout-state-fields`;
    `entries`, `reserved_bytes` and `region_offset` from `pool-plan-pools`.

    ```mlir
    pool.entry_class "state" "state" {derived, entries_per_req = 2 : i64,
                                       transfer = #pool.transfer<"fork", tokens = 1>}
    ```
  }];
  let arguments = (ins
    StrAttr:$name,
    StrAttr:$pool,
    OptionalAttr<I64Attr>:$bytes,
    UnitAttr:$derived,
    DefaultValuedAttr<I64Attr, "0">:$entries_per_req,
    DefaultValuedAttr<I64Attr, "0">:$extra_entries,
    OptionalAttr<Pool_TransferAttr>:$transfer,
    OptionalAttr<I64Attr>:$arena_bytes,
    OptionalAttr<I64Attr>:$entry_bytes,
    OptionalAttr<DenseI64ArrayAttr>:$checkpoint_ranges,
    OptionalAttr<I64Attr>:$entries,
    OptionalAttr<I64Attr>:$reserved_bytes,
    OptionalAttr<I64Attr>:$region_offset
  );
  let assemblyFormat = "$name $pool attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isState() { return getPool() == "state"; }
    bool isPage() { return getPool() == "page"; }
  }];
}

#endif // POOL_OPS_TD
