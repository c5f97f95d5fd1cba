#include "core/result.h"

#include <cstdio>
#include <cstdlib>

namespace canrun {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kIoError:
      return "io_error";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kFailedCheck:
      return "failed_check";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

Error Error::with_context(std::string_view context) const {
  std::string message(context);
  message += ": ";
  message += message_;
  Error out(code_, std::move(message));
  out.reason_ = reason_;
  out.subjects_ = subjects_;
  return out;
}

Error Error::with_reason(std::string_view reason, std::vector<std::string> subjects) const {
  Error out = *this;
  out.reason_ = reason;
  if (!subjects.empty()) out.subjects_ = std::move(subjects);
  return out;
}

namespace result_detail {

void value_of_error(const Error& error) {
  std::fprintf(stderr, "canrun: internal error: value() of a Result holding an error (%s: %s)\n",
               std::string(error_code_name(error.code())).c_str(), error.message().c_str());
  std::abort();
}

void error_of_value() {
  std::fprintf(stderr, "canrun: internal error: error() of a Result holding a value\n");
  std::abort();
}

}  // namespace result_detail

}  // namespace canrun
