// Result<T>: the one error type of canrun. A value or an Error, never both.
//
// Errors are values: functions that can fail return Result<T> (or Status for no value), and
// [[nodiscard]] makes a dropped result a compile error under -Werror. Exceptions are caught
// only at the outer boundary (the CLI's main). An Error's message names the input and what
// was wrong with it, so it can be shown to a user as it is.
//
// Thread safety: Result and Error are values; const methods may be called from many threads.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace canrun {

//! What kind of failure an Error is; decides the CLI's exit code.
enum class ErrorCode {
  kInvalidArgument,  //!< the user's input is malformed (exit 2)
  kNotFound,         //!< a named thing does not exist (exit 2)
  kCorrupt,          //!< data on disk or on the wire is malformed (exit 1)
  kIoError,          //!< the OS refused a read, write or spawn (exit 1)
  kUnavailable,      //!< a remote service could not be reached (exit 1)
  kTimeout,          //!< something ran past its limit (exit 1)
  kFailedCheck,      //!< a check or verdict came out negative (exit 1)
  kInternal,         //!< a bug in canrun (exit 1)
};

//! Stable lower-case name of a code, as printed in messages and JSON.
std::string_view error_code_name(ErrorCode code);

//! Machine-readable reasons an Error may carry, beside its code. Callers test the reason, never
//! the message, so a caller that adds context never changes what an error means.
namespace reason {
inline constexpr std::string_view kNoSafetensors = "no_safetensors";  //!< no weights to load
inline constexpr std::string_view kGated = "gated";                   //!< the token has no access
inline constexpr std::string_view kNotCached = "not_cached";          //!< not in the HF cache
inline constexpr std::string_view kNotFound = "not_found";            //!< no such model or file
inline constexpr std::string_view kBusy = "busy";  //!< held by another process (a lock)
inline constexpr std::string_view kBadParameter = "bad_parameter";  //!< a named input is wrong
}  // namespace reason

class [[nodiscard]] Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  //! The machine-readable reason (see namespace reason), or empty. Kept by with_context.
  const std::string& reason() const { return reason_; }
  //! The inputs at fault (query parameters, options, columns), for callers that name them
  //! apart from the message, e.g. an HTTP 400's "parameters". Kept by with_context.
  const std::vector<std::string>& subjects() const { return subjects_; }

  //! A copy with "context: " put before the message, e.g. the file being read.
  Error with_context(std::string_view context) const;
  //! A copy carrying `reason` (and, when given, the inputs at fault).
  Error with_reason(std::string_view reason, std::vector<std::string> subjects = {}) const;
  bool has_reason(std::string_view reason) const { return reason_ == reason; }

 private:
  ErrorCode code_;
  std::string message_;
  std::string reason_;
  std::vector<std::string> subjects_;
};

//! Shorthands that read like what they mean at the call site.
inline Error invalid_argument(std::string message) {
  return {ErrorCode::kInvalidArgument, std::move(message)};
}
inline Error not_found(std::string message) { return {ErrorCode::kNotFound, std::move(message)}; }
inline Error corrupt(std::string message) { return {ErrorCode::kCorrupt, std::move(message)}; }
inline Error io_error(std::string message) { return {ErrorCode::kIoError, std::move(message)}; }
inline Error internal_error(std::string message) {
  return {ErrorCode::kInternal, std::move(message)};
}

namespace result_detail {
//! Reports a Result read in the wrong state (value() of an error, error() of a value) on stderr
//! and aborts, in every build type: a bug in canrun, never a user's input.
[[noreturn]] void value_of_error(const Error& error);
[[noreturn]] void error_of_value();
}  // namespace result_detail

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  //! The value; only when ok(), else canrun aborts with the error's message.
  const T& value() const& {
    check_value();
    return *std::get_if<T>(&state_);
  }
  T& value() & {
    check_value();
    return *std::get_if<T>(&state_);
  }
  T&& value() && {
    check_value();
    return std::move(*std::get_if<T>(&state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  //! The error; only when !ok(), else canrun aborts.
  const Error& error() const {
    if (const Error* error = std::get_if<Error>(&state_)) return *error;
    result_detail::error_of_value();
  }

 private:
  void check_value() const {
    if (const Error* error = std::get_if<Error>(&state_)) result_detail::value_of_error(*error);
  }

  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  //! The error; only when !ok(), else canrun aborts.
  const Error& error() const {
    if (!failed_) result_detail::error_of_value();
    return error_;
  }

 private:
  Error error_{ErrorCode::kInternal, ""};
  bool failed_ = false;
};

using Status = Result<void>;

inline Status ok_status() { return {}; }

}  // namespace canrun

// Propagate a failed Result/Status from the enclosing function.
#define CANRUN_CONCAT_INNER(a, b) a##b
#define CANRUN_CONCAT(a, b) CANRUN_CONCAT_INNER(a, b)

#define CANRUN_RETURN_IF_ERROR(expr)                         \
  do {                                                       \
    auto canrun_status_ = (expr);                            \
    if (!canrun_status_.ok()) return canrun_status_.error(); \
  } while (0)

#define CANRUN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.error();                 \
  lhs = std::move(tmp).value()

#define CANRUN_ASSIGN_OR_RETURN(lhs, expr) \
  CANRUN_ASSIGN_OR_RETURN_IMPL(CANRUN_CONCAT(canrun_result_, __LINE__), lhs, expr)
