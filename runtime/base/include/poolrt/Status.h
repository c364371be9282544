//===- Status.h - Error values shared by the layout library -----*- C++ -*-===//
//
// The layout arithmetic is used by the compiler (built with -fno-exceptions)
// and by the runtime, so failures are values, never exceptions. An Error
// carries a kind that maps onto the reference's exception classes (see
// ../shared/spec/README.md) and, for an insufficient budget, the numbers the
// caller needs to print an actionable hint.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_STATUS_H
#define POOLRT_STATUS_H

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace poolrt {

enum class ErrorKind {
  InvalidArgument,    // reference ValueError: a bad declaration or argument
  InsufficientBudget, // reference InsufficientPoolBudget
  Lookup,             // reference KeyError
  State,              // reference RuntimeError: an operation in a wrong state
  Internal,           // reference AssertionError: an invariant was violated
};

const char *errorKindName(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::Internal;
  std::string message;
  // Filled for InsufficientBudget only.
  int64_t reservedBytes = 0;
  int64_t availableBytes = 0;
  int64_t entries = 0;

  static Error invalid(std::string msg) {
    return Error{ErrorKind::InvalidArgument, std::move(msg)};
  }
};

/// Either a value or an Error. Deliberately small: no exceptions, no
/// implicit conversions that could drop an error on the floor.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : v(std::move(value)) {}
  Result(Error error) : v(std::move(error)) {}

  bool ok() const { return v.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T &value() const & { return std::get<0>(v); }
  T &value() & { return std::get<0>(v); }
  T take() { return std::move(std::get<0>(v)); }
  const T &operator*() const { return value(); }
  const T *operator->() const { return &value(); }
  const Error &error() const { return std::get<1>(v); }

private:
  std::variant<T, Error> v;
};

/// Result of an operation that yields nothing on success.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error e) : err(std::move(e)), failed(true) {}
  static Status success() { return Status(); }
  bool ok() const { return !failed; }
  explicit operator bool() const { return ok(); }
  const Error &error() const { return err; }

private:
  Error err;
  bool failed = false;
};

} // namespace poolrt

#endif // POOLRT_STATUS_H
