// Error values at module edges (LLVM-style Expected<T>).
//
// Every public entry point that can fail returns Expected<T> (or Status for
// no value). An Error carries a category (mapped one-to-one to sk-compile's
// exit codes) and a message; callers add context on the way up with
// Error::context("while compiling add_100"), so the final text reads
// outermost-first: "sk-compile: examples/x.json: ops[3].args.z: unknown buffer".
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace sk {

enum class ErrorKind {
  BadInput,   // malformed op list, option, argument (exit 2)
  Compile,    // compiler missing/failed, link failure (exit 3)
  Runtime,    // wait timed out, kernel reported an error, dlopen failed (exit 4)
  Mismatch,   // fused and unfused results differ (exit 1)
  Io,         // file system trouble (exit 4 unless a caller reclassifies)
  Internal,   // a bug in superkernel itself
};

/// Exit code of sk-compile for an error kind (DESIGN section 7).
int exitCodeFor(ErrorKind kind);
const char* errorKindName(ErrorKind kind);

class Error {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }

  /// Prefix with "what: " (returns a copy, for chaining in return statements).
  Error context(const std::string& what) const& { return Error(kind_, what + ": " + message_); }
  Error context(const std::string& what) && {
    message_ = what + ": " + message_;
    return std::move(*this);
  }

 private:
  ErrorKind kind_;
  std::string message_;
};

inline Error badInput(std::string m) { return Error(ErrorKind::BadInput, std::move(m)); }
inline Error compileError(std::string m) { return Error(ErrorKind::Compile, std::move(m)); }
inline Error runtimeError(std::string m) { return Error(ErrorKind::Runtime, std::move(m)); }
inline Error ioError(std::string m) { return Error(ErrorKind::Io, std::move(m)); }
inline Error internalError(std::string m) { return Error(ErrorKind::Internal, std::move(m)); }

/// A value or an Error. Check with `if (!e)` / `e.ok()`, then `*e` or `e.error()`.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}          // NOLINT(implicit)
  Expected(Error error) : v_(std::move(error)) {}      // NOLINT(implicit)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { assert(!ok()); return std::get<1>(v_); }
  Error&& error() && { assert(!ok()); return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

/// Success or an Error, for operations with no value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : err_(std::move(error)), failed_(true) {}  // NOLINT(implicit)
  static Status success() { return Status(); }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { assert(failed_); return err_; }

 private:
  Error err_{ErrorKind::Internal, ""};
  bool failed_ = false;
};

}  // namespace sk

/// Propagate an error with added context: SK_TRY_CTX(x, expr, "ctx")
#define SK_CONCAT_IMPL(a, b) a##b
#define SK_CONCAT(a, b) SK_CONCAT_IMPL(a, b)
#define SK_ASSIGN_OR_RETURN(lhs, expr)                                 \
  auto SK_CONCAT(sk_tmp_, __LINE__) = (expr);                          \
  if (!SK_CONCAT(sk_tmp_, __LINE__)) return std::move(SK_CONCAT(sk_tmp_, __LINE__)).error(); \
  lhs = std::move(*SK_CONCAT(sk_tmp_, __LINE__))
#define SK_RETURN_IF_ERROR(expr)                        \
  do {                                                  \
    auto sk_status_ = (expr);                           \
    if (!sk_status_) return sk_status_.error();         \
  } while (0)
