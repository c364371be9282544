//===- Vectors.h - Shared helpers of the conformance runner -----*- C++ -*-===//
//
// Handlers for further algorithms live in their own files and register
// themselves with REGISTER_VECTORS; the runner (ConformanceTest.cpp) fails
// any vector whose algorithm has neither a handler nor a listed deferral.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_TEST_CONFORMANCE_VECTORS_H
#define POOL_TEST_CONFORMANCE_VECTORS_H

#include "poolrt/Status.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace conformance {
namespace json = llvm::json;

/// inputs, expected
using Handler = std::function<void(const json::Object &, const json::Value &)>;

struct Registrar {
  Registrar(const char *algorithm, Handler h);
};
#define REGISTER_VECTORS_CAT2(a, b) a##b
#define REGISTER_VECTORS_CAT(a, b) REGISTER_VECTORS_CAT2(a, b)
/// REGISTER_VECTORS("BlockPool", runBlockPool);
#define REGISTER_VECTORS(algorithm, handler)                                   \
  static ::conformance::Registrar REGISTER_VECTORS_CAT(registrar_, __LINE__)(  \
      algorithm, handler)

int64_t i64(const json::Value &v);
std::string str(const json::Value &v);
/// Numbers, and the strings "inf" / "-inf".
double number(const json::Value &v);
std::vector<int64_t> intList(const json::Value &v);
poolrt::ErrorKind kindOf(const std::string &pythonException);
/// Compare an error with {"raises": ..., "message": ...}; the message text
/// only when `exactMessage`.
void expectError(const poolrt::Error &e, const json::Object &expected,
                 bool exactMessage);
/// A JSON value as compact text (for failure messages and comparisons).
std::string render(const json::Value &v);
/// Another vector by id (for inputs that reference one).
const json::Object *vectorById(const std::string &id);

} // namespace conformance

#endif
