//===- Passes.td - pool dialect passes ---------------------*- tablegen -*-===//
#ifndef POOL_PASSES_TD
#define POOL_PASSES_TD

include "mlir/Pass/PassBase.td"

def PoolVerify : Pass<"pool-verify", "::mlir::pool::ModelOp"> {
  let summary = "Check that every pool.model can be compiled";
  let description = [{
    The op verifiers check that each declaration is well formed; this pass
    checks that the model as a whole is one poolc can compile, in the order
    the reference should have (structure before budget, quirk Q4):

    * at least one entry class, and at most one PAGE class name;
    * a class whose bytes are `derived` has something to derive them from (a
      STATE class: state fields naming it);
    * a STATE class given explicit bytes and fields is at least as large as
      its fields' arena.

    It changes nothing. It is not a sizing pass: budgets are checked by
    `pool-plan-pools`.

    Example diagnostic:
    ```
    error: more than one PAGE entry class: ['kv', 'other']
    ```
  }];
  let statistics = [
    Statistic<"numModels", "models", "Models verified">,
  ];
}

def MergeEntryClasses : Pass<"pool-merge-entry-classes", "::mlir::pool::ModelOp"> {
  let summary = "Merge entry classes that share a name";
  let description = [{
    Declarations that share a name share an index space (an Eagle3 draft or an
    indexer cache riding the target's block table): they must agree on pool,
    `entries_per_req` and `extra_entries`, and their bytes add. The first
    declaration keeps its place and receives the sum; later ones are erased.
    A disagreement is an error on the later declaration with a note on the
    first. It does not size anything.

    Before:
    ```mlir
    pool.entry_class "kv" "page" {bytes = 1000 : i64}
    pool.entry_class "kv" "page" {bytes = 250 : i64}
    ```
    After:
    ```mlir
    pool.entry_class "kv" "page" {bytes = 1250 : i64}
    ```
  }];
  let statistics = [
    Statistic<"numMerged", "merged", "Declarations folded into an earlier one">,
  ];
}

def AssignFieldPlanes : Pass<"pool-assign-field-planes", "::mlir::pool::ModelOp"> {
  let summary = "Split a row space's state fields across its planes in the fewest rows";
  let description = [{
    In a model with planes, the slot class's state arena takes the same
    number of rows `r` at the front of a slot in every plane, offering
    `r * width` bytes in each; a field cannot straddle planes. This pass
    enumerates every assignment of fields to planes (field k takes base-P
    digit k of the code, least significant first), costs each plane as its
    fields' arena (256 B alignment walk) in whole rows, and keeps the first
    assignment with the fewest rows: the reference's deterministic
    tie-break. Field order within a plane stays the declared order. More
    than 2^16 assignments is refused with a diagnostic rather than searched.

    Sets `plane` on every field of the slot class, and `arena_rows` and
    `plane_slack_bytes` (per plane: `arena_rows * width` minus the plane's
    arena) on the class. It does nothing in a model without planes and does
    not place the fields inside a plane (`pool-layout-state-fields` does).

    After (the V4-like test fields over planes of 512 and 128 B):
    ```mlir
    pool.state_field "hca_main_kv" in "state" {..., plane = "nope"}
    pool.state_field "csa_main_kv" in "state" {..., plane = "rope"}
    pool.entry_class "state" "state" {arena_rows = 128 : i64, plane_slack_bytes = array<i64: 0, 7168>, ...}
    ```
  }];
  let statistics = [
    Statistic<"numAssignments", "assignments", "Assignments enumerated">,
  ];
}

def LayoutStateFields : Pass<"pool-layout-state-fields", "::mlir::pool::ModelOp"> {
  let summary = "Lay out each STATE class's fields in an entry-major arena";
  let description = [{
    For every STATE class with state fields: places the fields in declared
    order, each layer-major, each start aligned to 256 B (or the field's
    stronger `align`), the entry rounded up to 256 B; records each field's
    `offset`/`end`, the class's `arena_bytes`, and its `checkpoint_ranges`
    (the byte runs a checkpoint image carries: consecutive carried fields
    with the padding between them, merged where they abut). Then sets every
    class's `entry_bytes`: explicit bytes, plus the arena when `derived`.
    Run after `pool-merge-entry-classes`. In a row space (fields carry a
    `plane`), each plane's fields form their own arena within the slot and
    the class gets `plane_checkpoint_ranges` (one array per plane) instead
    of `checkpoint_ranges`; the slot class's and the PAGE class's
    `entry_bytes` are then left to `pool-solve-row-space`.

    After (two 12-byte fields):
    ```mlir
    pool.state_field "a" in "s" {..., offset = 0 : i64, end = 12 : i64}
    pool.state_field "b" in "s" {..., offset = 256 : i64, end = 268 : i64}
    pool.entry_class "s" "state" {arena_bytes = 512 : i64, entry_bytes = 512 : i64, ...}
    ```
  }];
  let statistics = [
    Statistic<"numArenas", "arenas", "Arenas laid out">,
    Statistic<"numFields", "fields", "Fields placed">,
  ];
}

def SolveRowSpace : Pass<"pool-solve-row-space", "::mlir::pool::ModelOp"> {
  let summary = "Solve the row space: envelope, entry, slot, windows, image";
  let description = [{
    For a model with planes and layers: groups the layers by compress ratio
    (dense 0, CSA 4, HCA 128; absent -1 leaves the row space), orders the
    envelope (HCA then CSA) and the entry (dense, HCA, CSA), interleaves
    each class's window runs in the minimal `entry_rows`, puts the state
    arena at the front of a slot and rounds the slot to `slot_align_rows`
    (2, or `lcm(2, k)` where a window carried as a state field takes `k`
    plane rows per window row). The ring is `sliding_window + spec_depth`.

    Derives the PAGE bytes per block (`envelope_rows * sum(widths)` plus any
    explicit bytes riding the block table, e.g. an indexer) and the slot
    class's bytes per request (`slot_rows * sum(widths)`), and records a
    `pool.row_space` op with the classes, window parameters, the rows a
    checkpoint image carries (`entry_row_runs`) and, per plane, the image's
    byte ranges (the carried fields merged with those rows where they abut).
    It does not size pools (`pool-plan-pools` does, and fills in the split).

    After:
    ```mlir
    pool.row_space {arena_rows = 20480 : i64, envelope_rows = 1384 : i64, slot_rows = 25984 : i64, ...}
    pool.entry_class "kv" "page" {bytes = 177408 : i64, derived, entry_bytes = 1063168 : i64}
    ```
  }];
  let statistics = [
    Statistic<"numRowSpaces", "row-spaces", "Row spaces solved">,
  ];
}

def CheckAddressing : Pass<"pool-check-addressing", "::mlir::pool::ModelOp"> {
  let summary = "Prove a planned layout addressable and free of overlaps";
  let description = [{
    Run after `pool-plan-pools`. Proves, by interval arithmetic on the
    solved numbers, that no two regions of the allocation overlap and each
    lies inside it; that in a row space the blocks stay below the lowest
    slot, every slot lies inside its plane, every class's envelope and
    entry rows stay inside the envelope and the entry, the arena and the
    windows fit the slot, every field fits its plane's share of the arena
    without overlapping another, and every window carried as a field fits
    its field. Every row index a kernel computes must fit int32.

    Marks (does not reject) what kernels must handle: planes whose element
    offsets (`row * row elements`) pass 2^31 need 64-bit offsets
    (`wide_offset_planes`, with a remark), and views spanning more than the
    4 GiB an AMD buffer descriptor reaches need a per-slot base rebase
    (`rebase_planes` in a row space, `needs_rebase` on a class's region).
    A layout that fails a proof is a diagnostic, never an artifact.
  }];
  let statistics = [
    Statistic<"numProofs", "proofs", "Interval facts checked">,
  ];
}

def PlanPools : Pass<"pool-plan-pools", "::mlir::pool::ModelOp"> {
  let summary = "Size every pool from a byte budget";
  let description = [{
    STATE classes first: `max-num-seqs * entries_per_req + extra_entries`
    entries each; the one PAGE class takes the rest
    (`remaining / entry_bytes`). A budget that cannot hold the STATE floor is
    an error carrying the reserved bytes, the available bytes and the entry
    count. An exact fit is a plan with 0 PAGE entries (quirk Q3: the
    reference raises there). `pp-min-blocks` (pipeline parallelism: the
    minimum block count over stages) lowers the PAGE count to it.

    Then carves one allocation: the PAGE region first, then each STATE
    class's arena, every start 256-aligned (`region_offset`), the total in
    the model's `allocation_bytes`.

    The counts are the reference's. Carving them into one allocation can
    pass the budget slightly: each region start is 256-aligned, and in a
    row space the blocks round up to whole slots (the reference allocates
    its planes the same way). `fit-allocation` instead gives up just enough
    PAGE entries that `allocation_bytes <= budget`.

    In a row space the planes hold both the blocks and the slots: the
    allocation is the planes (each `plane_rows * width`, tight:
    `plane_rows` fits the slots plus the blocks), then the PAGE class's
    explicit part (e.g. an indexer riding the block table), then any other
    STATE class; the `pool.row_space` op records the split. Its rows
    (envelope, slot) are read from that op, never re-solved here: the
    carving is `poolrt::carveWithinBudget` (runtime/layout/Plan.cpp).

    Requires `entry_bytes` (run `pool-layout-state-fields` first).

    After (`budget=10000 max-num-seqs=8`):
    ```mlir
    pool.entry_class "kv" "page" {entries = 2 : i64, reserved_bytes = 2000 : i64, ...}
    pool.entry_class "recurrent" "state" {entries = 16 : i64, reserved_bytes = 8000 : i64, ...}
    ```
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"::mlir::pool::kNoBudget",
           "Bytes available to the pools (required; >= 0)">,
    Option<"maxNumSeqs", "max-num-seqs", "int64_t", /*default=*/"-1",
           "Requests in flight at once (required; >= 0)">,
    Option<"ppMinBlocks", "pp-min-blocks", "int64_t",
           /*default=*/"::mlir::pool::kNoPpMinBlocks",
           "Minimum PAGE block count over pipeline stages (>= 0; not given: none)">,
    Option<"fitAllocation", "fit-allocation", "bool", /*default=*/"false",
           "Lower the PAGE count until the one allocation fits the budget">,
  ];
  let statistics = [
    Statistic<"numPageEntries", "page-entries", "PAGE entries planned">,
    Statistic<"numStateEntries", "state-entries", "STATE entries planned">,
  ];
}

def CheckServable : Pass<"pool-check-servable", "::mlir::pool::ModelOp"> {
  let summary = "Refuse a model the runtime cannot serve, at the declaration that asks for it";
  let description = [{
    The rule for what the runtime can serve is written once, in the layout
    library (`poolrt/Servable.h`, `checkServableShape`); the runtime applies
    it to every artifact it loads. This pass builds the model's shape (its
    classes in declaration order, their pools, attention, transfers, the row
    space's slot) and refuses at the declaration the rule names, with a note
    where a second one is involved. poolc runs it when it writes an
    artifact; a report of such a model is still a valid answer (the
    reference plans it), so the default pipeline does not.

    Refused: no PAGE class; several STATE classes with a transfer unless all
    fork outside a row space; a copy transfer without a row space; a fork of
    a row-space slot; a slot of more than one entry per request; a window
    class beside state with a transfer or a row space.

    Example diagnostic:
    ```
    error: STATE class 's2' declares a copy transfer, and 's1' a fork one: ...
    note: the first STATE class with a transfer
    ```

    It changes nothing.
  }];
  let statistics = [
    Statistic<"numRefused", "refused", "Models the runtime cannot serve">,
  ];
}

#endif // POOL_PASSES_TD
