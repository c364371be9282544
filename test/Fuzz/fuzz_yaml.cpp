//===- fuzz_yaml.cpp - libFuzzer target: the YAML front end ---------------===//
//
// Any byte string is a model document: it is read, or refused with a
// message, and nothing crashes, hangs or reads out of bounds.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/Yaml/ModelDecl.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  pool::yaml::ModelDecl decl;
  pool::yaml::YamlError err;
  bool ok = pool::yaml::loadModelYamlText(text, "fuzz.yaml", {}, decl, err);
  // A refusal always says what; an accepted model has a name and classes.
  if (!ok && err.message.empty())
    std::abort();
  if (ok && (decl.name.empty() || decl.classes.empty() || decl.blockSize < 1))
    std::abort();
  return 0;
}
