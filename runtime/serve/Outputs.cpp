//===- Outputs.cpp - pool-serve's --outputs lines ---------------------------===//

#include "poolrt/serve/Engine.h"

#include <nlohmann/json.hpp>

#include <cinttypes>
#include <cstdio>

namespace poolrt {
namespace serve {

namespace {
std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}
} // namespace

std::string outcomesJsonl(const std::vector<RequestOutcome> &outcomes) {
  std::string s;
  for (const RequestOutcome &o : outcomes) {
    nlohmann::ordered_json j;
    j["request"] = o.name;
    if (o.refused) {
      j["status"] = "refused";
      j["reason"] = o.reason;
    } else {
      j["status"] = o.finished ? "finished" : "unfinished";
      j["output_tokens"] = o.outputTokens;
      j["output_checksum"] = hex(o.outputChecksum);
      j["state_checksum"] = hex(o.stateChecksum);
    }
    s += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return s;
}

} // namespace serve
} // namespace poolrt
