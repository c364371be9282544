//===- Report.h - The layout report (JSON) and the text table ---*- C++ -*-===//
//
// The JSON schema is documented in specs/report-schema.md and kept stable:
// later work adds keys, never renames or removes them.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_CODEGEN_REPORT_H
#define POOL_CODEGEN_REPORT_H

#include "dialects/Pool/IR/PoolOps.h"

#include "mlir/Support/LLVM.h"
#include "poolrt/SolvedLayout.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::pool {

struct ReportInputs {
  std::string source;
  std::vector<std::pair<std::string, int64_t>> params;
  int64_t ppMinBlocks = -1;
  std::vector<std::pair<std::string, std::string>> dtypeParams;
};

/// The one writer of SolvedLayout: everything the passes solved for
/// `model` (run the poolc pipeline first). The manifest-only members
/// (kernels, targets, fingerprint) stay empty; the artifact writer fills
/// them. Fails, with the error on the model, if it is not planned.
FailureOr<poolrt::SolvedLayout> solvedLayoutOf(ModelOp model,
                                               const ReportInputs &inputs);

/// The JSON report of `layout` (specs/report-schema.md); the one
/// serialisation of its report members (codegen/Manifest.cpp).
llvm::json::Value reportJson(const poolrt::SolvedLayout &layout);

/// reportJson(solvedLayoutOf(model)).
FailureOr<llvm::json::Value> buildReport(ModelOp model,
                                         const ReportInputs &inputs);

/// 1234567 -> "1,234,567"; bytes -> "1.50 GiB" (for every text view).
std::string withCommas(int64_t v);
std::string asGiB(int64_t bytes);

/// Human-readable tables of the same layout.
void printTextReport(const poolrt::SolvedLayout &layout, llvm::raw_ostream &os);

} // namespace mlir::pool

#endif // POOL_CODEGEN_REPORT_H
