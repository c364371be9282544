//===- PoolDialect.td - The pool dialect -------------------*- tablegen -*-===//
#ifndef POOL_DIALECT_TD
#define POOL_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Pool_Dialect : Dialect {
  let name = "pool";
  let summary = "Declarations and solved layouts of LLM serving-engine memory";
  let description = [{
    A `pool.model` declares what a serving engine keeps for one model on one
    rank: the planes of its row space, its layers and their compress ratios,
    its per-request state fields and its entry classes. Passes solve the
    layout and the pool sizes and record the results as attributes on the
    same ops, so a solved module is still a valid declaration.
  }];
  let cppNamespace = "::mlir::pool";
  let useDefaultAttributePrinterParser = 1;
}

class Pool_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pool_Dialect, mnemonic, traits>;

class Pool_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Pool_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // POOL_DIALECT_TD
