//===- Runs.cpp - (start, count) run lists --------------------------------===//

#include "poolrt/Runs.h"

#include <string>

namespace poolrt {

static std::string runStr(const Run &r) {
  return "(" + std::to_string(r.first) + ", " + std::to_string(r.second) + ")";
}

Result<std::vector<Run>> mergeAbutting(const std::vector<Run> &runs) {
  std::vector<Run> out;
  for (const Run &r : runs) {
    if (r.first < 0 || r.second < 0)
      return Error::invalid("a run must be non-negative, got " + runStr(r));
    if (r.second > INT64_MAX - r.first)
      return Error::invalid("run " + runStr(r) + " overflows 64-bit arithmetic");
    if (!out.empty()) {
      int64_t end = out.back().first + out.back().second;
      if (r.first < end)
        return Error::invalid("runs must ascend and not overlap: " +
                              runStr(r) + " starts inside the run ending at " +
                              std::to_string(end));
      if (r.first == end) {
        out.back().second += r.second;
        continue;
      }
    }
    out.push_back(r);
  }
  return out;
}

} // namespace poolrt
