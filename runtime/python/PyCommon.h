//===- PyCommon.h - What the poolrt module's sources share ------*- C++ -*-===//
//
// Errors become Python exceptions by kind (invalid argument -> ValueError,
// lookup -> KeyError, the rest -> RuntimeError); arguments are cast with a
// TypeError that names them.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_PY_COMMON_H
#define POOLRT_PY_COMMON_H

#include "poolrt/CacheManager.h"
#include "poolrt/Status.h"

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace poolrt {
namespace py_common {

namespace py = pybind11;

[[noreturn]] inline void raise(const Error &e) {
  switch (e.kind) {
  case ErrorKind::InvalidArgument:
    throw py::value_error(e.message);
  case ErrorKind::Lookup:
    throw py::key_error(e.message);
  default:
    throw std::runtime_error(e.message);
  }
}
inline void check(const Status &s) {
  if (!s.ok())
    raise(s.error());
}
template <typename T> T take(Result<T> r) {
  if (!r.ok())
    raise(r.error());
  return r.take();
}

inline std::string typeName(py::handle h) {
  return py::str(py::type::handle_of(h).attr("__name__"));
}

/// An explicit cast with a TypeError that names the argument, the expected
/// type and what came instead (pybind's own words name only C++ types).
template <typename T>
T castArg(py::handle h, const std::string &where, const char *expected) {
  try {
    return h.cast<T>();
  } catch (const py::cast_error &) {
    throw py::type_error(where + " must be " + expected + ", got " + typeName(h));
  }
}

inline Request &requestArg(py::handle h, const std::string &where) {
  if (!py::isinstance<Request>(h))
    throw py::type_error(where + " must be a poolrt.Request, got " + typeName(h));
  return h.cast<Request &>();
}

/// Token ids one by one, so a bad one is named by its position.
inline std::vector<int64_t> tokenList(py::handle h, const char *where) {
  if (!py::isinstance<py::list>(h) && !py::isinstance<py::tuple>(h))
    throw py::type_error(std::string(where) +
                         " must be a list of int token ids, got " + typeName(h));
  std::vector<int64_t> out;
  size_t i = 0;
  for (py::handle t : h) {
    if (!py::isinstance<py::int_>(t))
      throw py::type_error(std::string(where) + "[" + std::to_string(i) +
                           "] must be an int token id, got " + typeName(t));
    out.push_back(castArg<int64_t>(t, std::string(where) + "[" +
                                          std::to_string(i) + "]",
                                   "an int64 token id"));
    ++i;
  }
  return out;
}


} // namespace py_common
} // namespace poolrt

/// The serving engine (runtime/serve), in serve_py.cpp.
void bindServe(pybind11::module_ &m);

#endif
