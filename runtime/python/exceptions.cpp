//===- exceptions.cpp - poolrt's typed exceptions --------------------------===//

#include "PyCommon.h"

#include "poolrt/BlockPool.h"
#include "poolrt/StateGroupPool.h"

namespace poolrt {
namespace py_common {

namespace {

PyObject *types[9] = {};

struct TypeSpec {
  PyErrorType type;
  const char *name;
  PyErrorType parent;  // Error for the direct children
  PyObject *builtin;   // the builtin it also derives from, or null
  const char *doc;
};

} // namespace

PyObject *errorType(PyErrorType t) { return types[int(t)]; }

void bindExceptions(py::module_ &m) {
  types[int(PyErrorType::Error)] = PyErr_NewExceptionWithDoc(
      "poolrt.Error", "Every error libpoolrt reports; the message is C++'s.",
      PyExc_Exception, nullptr);
  m.attr("Error") = py::handle(types[int(PyErrorType::Error)]);
  const TypeSpec specs[] = {
      {PyErrorType::InvalidArgument, "InvalidArgument", PyErrorType::Error, PyExc_ValueError,
       "A bad argument or declaration (also a ValueError)."},
      {PyErrorType::CorruptArtifact, "CorruptArtifact", PyErrorType::InvalidArgument, nullptr,
       "An artifact that does not read: bad container, checksum, version or manifest."},
      {PyErrorType::InvalidId, "InvalidId", PyErrorType::Error, PyExc_KeyError,
       "An id the pool never had, or one already live (also a KeyError)."},
      {PyErrorType::StateError, "StateError", PyErrorType::Error, PyExc_RuntimeError,
       "An operation in the wrong state: double free, not allocated, ... (also a RuntimeError)."},
      {PyErrorType::OutOfBlocks, "OutOfBlocks", PyErrorType::StateError, nullptr,
       "No free or evictable PAGE block."},
      {PyErrorType::OutOfStateGroups, "OutOfStateGroups", PyErrorType::StateError, nullptr,
       "No free or evictable per-request state group."},
      {PyErrorType::InsufficientBudget, "InsufficientBudget", PyErrorType::Error,
       PyExc_RuntimeError, "A budget too small for what it must hold (also a RuntimeError)."},
      {PyErrorType::InternalError, "InternalError", PyErrorType::Error, PyExc_RuntimeError,
       "A broken invariant inside libpoolrt (also a RuntimeError)."},
  };
  for (const TypeSpec &t : specs) {
    PyObject *bases = t.builtin ? PyTuple_Pack(2, types[int(t.parent)], t.builtin)
                                : PyTuple_Pack(1, types[int(t.parent)]);
    std::string qual = std::string("poolrt.") + t.name;
    types[int(t.type)] = PyErr_NewExceptionWithDoc(qual.c_str(), t.doc, bases, nullptr);
    Py_DECREF(bases);
    if (!types[int(t.type)])
      throw py::error_already_set();
    m.attr(t.name) = py::handle(types[int(t.type)]);
  }
}

void raiseAs(PyErrorType type, const Error &e) {
  PyErr_SetString(errorType(type), e.message.c_str());
  throw py::error_already_set();
}

void raise(const Error &e) {
  if (BlockPool::isOutOfBlocks(e))
    raiseAs(PyErrorType::OutOfBlocks, e);
  if (StateGroupPool::isOutOfGroups(e))
    raiseAs(PyErrorType::OutOfStateGroups, e);
  switch (e.kind) {
  case ErrorKind::InvalidArgument:
    raiseAs(PyErrorType::InvalidArgument, e);
  case ErrorKind::Lookup:
    raiseAs(PyErrorType::InvalidId, e);
  case ErrorKind::State:
    raiseAs(PyErrorType::StateError, e);
  case ErrorKind::InsufficientBudget:
    raiseAs(PyErrorType::InsufficientBudget, e);
  case ErrorKind::Internal:
    break;
  }
  raiseAs(PyErrorType::InternalError, e);
}

} // namespace py_common
} // namespace poolrt
