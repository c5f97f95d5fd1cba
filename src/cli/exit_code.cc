#include "cli/exit_code.h"

#include "core/log.h"

namespace canrun::cli {

int exit_code_for(const Error& error) {
  switch (error.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
      return kExitUsage;
    default:
      return kExitFailed;
  }
}

int report(const Error& error) {
  log::error("{}", error.message());
  return exit_code_for(error);
}

}  // namespace canrun::cli
