// How errors become exit codes and messages at the CLI boundary.
#pragma once

#include "core/result.h"

namespace canrun::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  //!< a failed verdict or check
inline constexpr int kExitUsage = 2;   //!< bad usage or bad input

//! 2 for errors in what the user gave (invalid argument, not found), 1 otherwise.
int exit_code_for(const Error& error);

//! Logs `error` as "canrun: error: ..." and returns its exit code.
int report(const Error& error);

}  // namespace canrun::cli

//! In a command: `lhs = value of expr`, or report its error and return the exit code.
#define CANRUN_ASSIGN_OR_RETURN_EXIT(lhs, expr)                                  \
  auto CANRUN_CONCAT(canrun_exit_, __LINE__) = (expr);                           \
  if (!CANRUN_CONCAT(canrun_exit_, __LINE__).ok())                               \
    return ::canrun::cli::report(CANRUN_CONCAT(canrun_exit_, __LINE__).error()); \
  lhs = std::move(CANRUN_CONCAT(canrun_exit_, __LINE__)).value()
