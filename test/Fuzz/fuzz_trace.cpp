// libFuzzer target: pool-serve's trace readers (Mooncake JSONL, the
// shared-prefix trace, the multi-turn spec). Whatever the bytes, the reader
// returns a trace or a "SOURCE:LINE: error:" refusal; it never crashes,
// and a trace it accepts holds only requests the engine can take: a
// non-empty prompt (or a follow-up of an earlier turn), at least one output
// token, token ids in the synthetic vocabulary.
#include "poolrt/serve/Trace.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace poolrt::serve;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  TraceOptions o;
  o.tokensPerPrefixHash = 4;
  auto t = parseTrace(text, "fuzz.trace", o);
  if (t.ok()) {
    for (size_t i = 0; i < t->requests.size(); ++i) {
      const TraceRequest &r = t->requests[i];
      bool followUp = r.followUpOf >= 0 && size_t(r.followUpOf) < i;
      if ((r.prompt.empty() && !followUp) || r.maxOutput < 1)
        std::abort();
      for (int64_t tok : r.prompt)
        if (tok < 0 || tok >= kSyntheticVocab)
          std::abort();
    }
  } else if (t.error().message.rfind("fuzz.trace", 0) != 0) {
    std::abort(); // a refusal names the source
  }
  (void)parseMultiTurnSpec("multi-turn:" + text.substr(0, 256));
  return 0;
}
