//===- pool-opt.cpp - The pool dialect pass driver (for lit) --------------===//

#include "dialects/Pool/IR/PoolDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::pool::registerPoolPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::pool::PoolDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pool dialect pass driver\n", registry));
}
