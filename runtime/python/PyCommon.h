//===- PyCommon.h - What the poolrt module's sources share ------*- C++ -*-===//
//
// Errors become poolrt's typed exceptions by kind (each also a ValueError,
// KeyError or RuntimeError as before); arguments are cast with a TypeError
// that names them.
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

/// poolrt's exception types (created once, at import: exceptions.cpp).
/// Each also derives from the builtin it replaces, so `except ValueError`
/// and `except KeyError` keep working:
///   Error(Exception)
///   InvalidArgument(Error, ValueError)   CorruptArtifact(InvalidArgument)
///   InvalidId(Error, KeyError)
///   StateError(Error, RuntimeError)      OutOfBlocks(StateError)
///                                        OutOfStateGroups(StateError)
///   InsufficientBudget(Error, RuntimeError)
///   InternalError(Error, RuntimeError)
enum class PyErrorType {
  Error, InvalidArgument, CorruptArtifact, InvalidId, StateError, OutOfBlocks,
  OutOfStateGroups, InsufficientBudget, InternalError
};
PyObject *errorType(PyErrorType t);
void bindExceptions(py::module_ &m);

/// Raise `e` as the type of its kind (C++'s message unchanged).
[[noreturn]] void raise(const Error &e);
/// Raise `e` as `type` (e.g. CorruptArtifact for an artifact that does not read).
[[noreturn]] void raiseAs(PyErrorType type, const Error &e);

inline void check(const Status &s) {
  if (!s.ok())
    raise(s.error());
}
template <typename T> T take(Result<T> r) {
  if (!r.ok())
    raise(r.error());
  return r.take();
}
/// take, raising CorruptArtifact: what reads an artifact or its manifest.
template <typename T> T takeArtifact(Result<T> r) {
  if (!r.ok())
    raiseAs(PyErrorType::CorruptArtifact, r.error());
  return r.take();
}

/// A hash scheme by name ("xxh3", "xxh64"); InvalidArgument otherwise.
inline HashScheme schemeArg(const std::string &name) {
  std::optional<HashScheme> s = parseHashScheme(name);
  if (!s)
    raise(Error::invalid("hash scheme '" + name + "' is neither 'xxh3' nor 'xxh64'"));
  return *s;
}

/// checkpoint_at and fork_checkpoints (pool-serve's --checkpoint-at and
/// --fork-checkpoints) onto a policy; InvalidArgument for an unknown name.
inline void placementArgs(CachePolicy &p, const std::vector<std::string> &at,
                   const std::string &fork) {
  p.placeAsReference();
  for (const std::string &k : at) {
    if (k == "prompt-end")
      p.promptEndCheckpoints = true;
    else if (k == "branch")
      p.branchCheckpoints = true;
    else if (k == "response-end")
      p.responseEndCheckpoints = true;
    else if (k != "ladder")
      raise(Error::invalid("checkpoint_at: '" + k +
                                 "' is none of prompt-end, branch, response-end, ladder"));
  }
  if (fork != "page-units" && fork != "groups")
    raise(Error::invalid("fork_checkpoints: '" + fork +
                               "' is neither page-units nor groups"));
  p.forkCheckpointsInPageUnits = fork == "page-units";
}

inline const std::vector<std::string> kDefaultPlacement{"prompt-end", "branch", "response-end"};

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
/// Devices, arenas and their DLPack views, in device_py.cpp.
void bindDevices(pybind11::module_ &m);

#endif
