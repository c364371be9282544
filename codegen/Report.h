//===- Report.h - The layout report (JSON) and the text table ---*- C++ -*-===//
//
// The JSON schema is documented in specs/report-schema.md and kept stable:
// later work adds keys, never renames or removes them.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_CODEGEN_REPORT_H
#define POOL_CODEGEN_REPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::pool {

struct ReportInputs {
  std::string source;
  std::vector<std::pair<std::string, int64_t>> params;
  int64_t ppMinBlocks = -1;
};

/// The report of the first solved pool.model in `module` (run the poolc
/// pipeline first). Returns an error message in `error` and a null value if
/// the module is not solved.
llvm::json::Value buildReport(ModuleOp module, const ReportInputs &inputs,
                              std::string &error);

/// 1234567 -> "1,234,567"; bytes -> "1.50 GiB" (for every text view).
std::string withCommas(int64_t v);
std::string asGiB(int64_t bytes);

/// Human-readable tables of the same report.
void printTextReport(const llvm::json::Value &report, llvm::raw_ostream &os);

} // namespace mlir::pool

#endif // POOL_CODEGEN_REPORT_H
