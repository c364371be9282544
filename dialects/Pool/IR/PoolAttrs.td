//===- PoolAttrs.td - pool dialect attributes --------------*- tablegen -*-===//
#ifndef POOL_ATTRS_TD
#define POOL_ATTRS_TD

include "dialects/Pool/IR/PoolDialect.td"

def Pool_TransferAttr : Pool_Attr<"Transfer", "transfer"> {
  let summary = "how a stateful class's checkpoint is made";
  let description = [{
    `"none"`: the state cannot be checkpointed (a prefix hit past the last
    boundary is impossible). `"fork"` with `tokens = n`: the owner hands its
    live group to the checkpoint index and takes a fresh one; the next forward
    must carry at least `n` tokens. `"copy"` with `layout_id`: the carried part
    of the state is copied into an image whose geometry the id names.

    ```mlir
    #pool.transfer<"fork", tokens = 1>
    #pool.transfer<"copy", layout_id = "dsv4-flash-fp8">
    ```
  }];
  let parameters = (ins
    StringRefParameter<"transfer kind">:$kind,
    DefaultValuedParameter<"int64_t", "0">:$tokens,
    StringRefParameter<"image layout id", "\"\"">:$layout_id
  );
  // One optional group per parameter would not parse: both groups open with
  // `,`, so the first one commits to `tokens` and `<"copy", layout_id = ...>`
  // fails. A struct parses the keys in any order and elides defaults.
  let assemblyFormat = [{
    `<` $kind (`,` struct($tokens, $layout_id)^)? `>`
  }];
  let genVerifyDecl = 1;
}

def Pool_RowClassAttr : Pool_Attr<"RowClass", "row_class"> {
  let summary = "one compress class of a solved row space";
  let description = [{
    The solved layout of the layers of one compress ratio: their global
    ids, rows per block (`block_rows`, 0 for dense), layer stride of the
    window interleave (`ring_stride`), place and height in the envelope and
    in the entry, and the window parameters a kernel needs (`ring_start`
    relative to the class's layer base row, `run_rows`).
  }];
  let parameters = (ins
    "int64_t":$ratio,
    ArrayRefParameter<"int64_t">:$layers,
    "int64_t":$block_rows,
    "int64_t":$ring_stride,
    "int64_t":$envelope_offset,
    "int64_t":$envelope_rows,
    "int64_t":$entry_offset,
    "int64_t":$entry_rows,
    "int64_t":$ring_start,
    "int64_t":$run_rows
  );
  let assemblyFormat = [{
    `<` `ratio` `=` $ratio `,` `layers` `=` `[` $layers `]` `,`
    `block_rows` `=` $block_rows `,` `ring_stride` `=` $ring_stride `,`
    `envelope_offset` `=` $envelope_offset `,` `envelope_rows` `=` $envelope_rows `,`
    `entry_offset` `=` $entry_offset `,` `entry_rows` `=` $entry_rows `,`
    `ring_start` `=` $ring_start `,` `run_rows` `=` $run_rows `>`
  }];
}

#endif // POOL_ATTRS_TD
