//===- fuzz_artifact.cpp - libFuzzer target: the .poolpack container -------===//
//
// Any byte string is a .poolpack file: parseArtifact never reads outside
// it, and what it accepts re-serialises to the same bytes and goes on to
// the manifest reader.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Artifact.h"
#include "poolrt/SolvedLayout.h"

#include <cstdint>
#include <cstdlib>

using namespace poolrt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto a = parseArtifact(data, size);
  if (!a.ok()) {
    if (a.error().message.empty())
      std::abort();
    return 0;
  }
  if (!validateArtifact(*a).ok())
    std::abort(); // the reader accepted what the writer would refuse
  auto layout = readSolvedLayout(*a);
  (void)layout;
  return 0;
}
