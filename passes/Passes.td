//===- Passes.td - pool dialect passes ---------------------*- tablegen -*-===//
#ifndef POOL_PASSES_TD
#define POOL_PASSES_TD

include "mlir/Pass/PassBase.td"

def PoolVerify : Pass<"pool-verify", "::mlir::ModuleOp"> {
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

def MergeEntryClasses : Pass<"pool-merge-entry-classes", "::mlir::ModuleOp"> {
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

def LayoutStateFields : Pass<"pool-layout-state-fields", "::mlir::ModuleOp"> {
  let summary = "Lay out each STATE class's fields in an entry-major arena";
  let description = [{
    For every STATE class with state fields: places the fields in declared
    order, each layer-major, each start aligned to 256 B (or the field's
    stronger `align`), the entry rounded up to 256 B; records each field's
    `offset`/`end`, the class's `arena_bytes`, and its `checkpoint_ranges`
    (the byte runs a checkpoint image carries: consecutive carried fields
    with the padding between them, merged where they abut). Then sets every
    class's `entry_bytes`: explicit bytes, plus the arena when `derived`.
    Run after `pool-merge-entry-classes`. It does not place anything in a
    row space.

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

def PlanPools : Pass<"pool-plan-pools", "::mlir::ModuleOp"> {
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

    Requires `entry_bytes` (run `pool-layout-state-fields` first).

    After (`budget=10000 max-num-seqs=8`):
    ```mlir
    pool.entry_class "kv" "page" {entries = 2 : i64, reserved_bytes = 2000 : i64, ...}
    pool.entry_class "recurrent" "state" {entries = 16 : i64, reserved_bytes = 8000 : i64, ...}
    ```
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"std::numeric_limits<int64_t>::min()",
           "Bytes available to the pools (required)">,
    Option<"maxNumSeqs", "max-num-seqs", "int64_t", /*default=*/"-1",
           "Requests in flight at once (required; >= 0)">,
    Option<"ppMinBlocks", "pp-min-blocks", "int64_t", /*default=*/"-1",
           "Minimum PAGE block count over pipeline stages (-1: none)">,
  ];
  let statistics = [
    Statistic<"numPageEntries", "page-entries", "PAGE entries planned">,
    Statistic<"numStateEntries", "state-entries", "STATE entries planned">,
  ];
}

#endif // POOL_PASSES_TD
