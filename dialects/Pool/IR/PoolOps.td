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

    // Lookups over the declaration (one place for every pass and codegen).
    ::llvm::iterator_range<::mlir::Block::op_iterator<EntryClassOp>>
    getEntryClasses();
    ::llvm::iterator_range<::mlir::Block::op_iterator<StateFieldOp>>
    getStateFields();
    ::llvm::SmallVector<PlaneOp, 4> getPlanes();
    /// A model is a row-space model when it declares planes.
    bool inRowSpace();
    /// The plane called `name` (null when none).
    PlaneOp findPlane(::llvm::StringRef name);
    /// The layers op (null when none).
    LayersOp getLayersOp();
    /// The solved row space (null before pool-solve-row-space).
    RowSpaceOp getRowSpace();
    /// The first declaration of class `name` (after merging, the only one).
    EntryClassOp findClass(::llvm::StringRef name);
    /// The state fields of class `cls`, in declaration order.
    ::llvm::SmallVector<StateFieldOp, 8> fieldsOf(::llvm::StringRef cls);
    /// The STATE class whose entry is a row-space slot: the derived STATE
    /// class (exactly one in a row-space model; pool-verify checks).
    EntryClassOp getSlotClass();
    /// The PAGE class (null when none).
    EntryClassOp getPageClass();
    /// Whether pool-plan-pools has sized it: the model's budget, counts and
    /// allocation, and a row space's split, are all set.
    bool isPlanned();
    /// isPlanned(), or an error on the model saying which pass to run.
    ::mlir::LogicalResult requirePlanned();
    /// Passes after pool-merge-entry-classes assume one op per class name:
    /// a second declaration would get the merged counts and its own region,
    /// so the allocation would count the class twice. Diagnoses the first
    /// repeat.
    ::mlir::LogicalResult requireMergedClasses();
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

    In a row space, `pool-assign-field-planes` sets `plane` and the offsets
    are from the start of the slot in that plane. `window` marks a field
    that carries per-layer sliding windows (shape `[ring, ...]`, one window
    row per ring position) for layers declared absent (-1) from the row
    space; `pool-solve-row-space` sets `rows_per_window_row`, the plane rows
    one window row takes.

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
    DefaultValuedAttr<BoolAttr, "false">:$window,
    OptionalAttr<StrAttr>:$plane,
    OptionalAttr<I64Attr>:$offset,
    OptionalAttr<I64Attr>:$end,
    OptionalAttr<I64Attr>:$rows_per_window_row
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
    in a row space `arena_rows` and `plane_slack_bytes` (per plane) from
    `pool-assign-field-planes` and `plane_checkpoint_ranges` (per plane)
    from `pool-layout-state-fields`;
    `entries`, `reserved_bytes` and `region_offset` from `pool-plan-pools`.

    A PAGE class may declare its attention pattern: `attention` is
    `"full"` (the default), `"sliding"` (a window of `attention_tokens`
    tokens) or `"chunked"` (aligned chunks of `attention_tokens` tokens);
    `forward_tokens` is the new tokens of one forward its reserve covers
    (0: one window); `cache_percent` the share of the budget left after the
    reserves that a window pool of its own gets to cache released blocks
    in. `pool-plan-pools` solves a window class's
    `reserve_blocks` and marks `shares_blocks` when it draws from the full
    class's block id space (specs/window-classes.md).

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
    OptionalAttr<StrAttr>:$attention,
    DefaultValuedAttr<I64Attr, "0">:$attention_tokens,
    DefaultValuedAttr<I64Attr, "0">:$forward_tokens,
    DefaultValuedAttr<I64Attr, "0">:$cache_percent,
    OptionalAttr<I64Attr>:$reserve_blocks,
    UnitAttr:$shares_blocks,
    OptionalAttr<I64Attr>:$arena_bytes,
    OptionalAttr<I64Attr>:$entry_bytes,
    OptionalAttr<DenseI64ArrayAttr>:$checkpoint_ranges,
    OptionalAttr<I64Attr>:$arena_rows,
    OptionalAttr<DenseI64ArrayAttr>:$plane_slack_bytes,
    OptionalAttr<ArrayAttr>:$plane_checkpoint_ranges,
    OptionalAttr<I64Attr>:$entries,
    OptionalAttr<I64Attr>:$reserved_bytes,
    OptionalAttr<I64Attr>:$region_offset,
    UnitAttr:$needs_rebase
  );
  let assemblyFormat = "$name $pool attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isState() { return getPool() == "state"; }
    bool isPage() { return getPool() == "page"; }
    /// A PAGE class with sliding or chunked attention.
    bool isWindow() {
      return isPage() && getAttention() && *getAttention() != "full";
    }
  }];
}

def Pool_RowSpaceOp : Pool_Op<"row_space", [HasParent<"ModelOp">]> {
  let summary = "the solved row space of a model (planes, envelope, slots)";
  let description = [{
    Created by `pool-solve-row-space`. A row is one token's KV at one layer;
    every plane materializes the same rows at its own width. Per block the
    envelope holds `envelope_rows` compressed rows (HCA then CSA); per slot
    the arena takes `arena_rows` rows at the front and the windows
    `entry_rows` rows after it (dense, HCA, CSA), the slot rounded up to
    `slot_align_rows`. `classes` holds each compress class's layout,
    `entry_row_runs` the (row, count) runs of an entry some position
    reaches, and `image_ranges` per plane the (byte offset, bytes) runs of a
    slot a checkpoint image carries (`image_bytes` in all).

    `pool-plan-pools` adds the split: `num_blocks`, `num_slots`,
    `plane_rows`, `slot_positions` and each plane's `plane_offsets` in the
    allocation. `pool-check-addressing` adds `max_row`, and the planes whose
    element offsets pass 2^31 (`wide_offset_planes`) or whose span passes
    the 4 GiB an AMD buffer descriptor reaches (`rebase_planes`).
  }];
  let arguments = (ins
    StrAttr:$page_class,
    StrAttr:$slot_class,
    I64Attr:$block_size,
    I64Attr:$ring_slots,
    I64Attr:$arena_rows,
    I64Attr:$slot_align_rows,
    I64Attr:$envelope_rows,
    I64Attr:$entry_rows,
    I64Attr:$slot_rows,
    DenseI64ArrayAttr:$ratios,
    StrArrayAttr:$plane_names,
    DenseI64ArrayAttr:$plane_widths,
    TypedArrayAttrBase<Pool_RowClassAttr, "row classes">:$classes,
    DenseI64ArrayAttr:$entry_row_runs,
    ArrayAttr:$image_ranges,
    I64Attr:$image_bytes,
    OptionalAttr<I64Attr>:$num_blocks,
    OptionalAttr<I64Attr>:$num_slots,
    OptionalAttr<I64Attr>:$plane_rows,
    OptionalAttr<I64Attr>:$slot_positions,
    OptionalAttr<DenseI64ArrayAttr>:$plane_offsets,
    OptionalAttr<I64Attr>:$max_row,
    OptionalAttr<DenseI64ArrayAttr>:$wide_offset_planes,
    OptionalAttr<DenseI64ArrayAttr>:$rebase_planes
  );
  let assemblyFormat = "attr-dict";
}

#endif // POOL_OPS_TD
