//===- Output.h - Where the tools' output goes --------------------*- C++ -*-===//
//
// A tool's standard output can fail (a full disk, `> /dev/full`, a closed
// pipe). llvm::raw_fd_ostream would then abort with "IO failure on output
// stream" when it is destroyed; the tools report it in their own error
// format and exit non-zero instead.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_TOOLS_OUTPUT_H
#define POOL_TOOLS_OUTPUT_H

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace pool {

/// Flushes llvm::outs(). Returns `rc` when it was written, else 1 after
/// printing "TOOL: error: cannot write standard output: WHY".
inline int finishStdout(const char *tool, int rc = 0) {
  llvm::raw_fd_ostream &out = llvm::outs();
  out.flush();
  if (!out.has_error())
    return rc;
  std::string why = out.error().message();
  out.clear_error();
  llvm::errs() << tool << ": error: cannot write standard output: " << why
               << "\n";
  return 1;
}

} // namespace pool

#endif // POOL_TOOLS_OUTPUT_H
