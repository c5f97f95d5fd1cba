// From what a run left behind to a verdict (SPEC.md §7): the stage it failed in, the
// exception, the exit status. And error signatures, so equal failures group together.
#pragma once

#include <optional>
#include <string>

#include "core/verdict_result.h"
#include "process/process.h"
#include "run/result_line.h"

namespace canrun::run {

struct Classification {
  VerdictResult result;
  std::string error;      //!< the useful tail of the traceback or of stderr; empty on success
  std::string signature;  //!< error normalised; empty on success
};

//! Ran to a good result line → nullopt (verification decides). Otherwise: TIMEOUT past the
//! limit; FAIL_OOM when an exception or the output says the device or host ran out of memory
//! (torch's OutOfMemoryError, "CUDA out of memory", the Neuron runtime's allocation failures,
//! MemoryError); FAIL_LOAD / FAIL_COMPILE / FAIL_RUNTIME by the stage of a reported failure;
//! CRASH for a signal or an exit without a result line.
std::optional<Classification> classify(const process::ProcessOutcome& outcome,
                                       const std::optional<RunReport>& report);

//! The last `max_lines` lines of a traceback or log, at most `max_bytes`.
std::string useful_tail(std::string_view text, std::size_t max_lines = 40,
                        std::size_t max_bytes = 16384);

//! The last line that names the error ("RuntimeError: ..."), with hex addresses, numbers,
//! quoted and absolute paths, temp names and a model type transformers names replaced,
//! prefixed by the exception type chain.
std::string error_signature(std::string_view error_text,
                            const std::vector<std::string>& error_types);

}  // namespace canrun::run
