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

#endif // POOL_ATTRS_TD
