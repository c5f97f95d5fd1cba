// huggingface_hub's command line, `hf`: how canrun reaches what it has no client of its own
// for, Storage Buckets (`hf buckets sync`) and dataset repos (`hf upload`, `hf download`).
//
// `hf` is looked up on PATH and run with canrun's environment, so HF_TOKEN, HF_ENDPOINT,
// HF_HOME and the rest apply to it as they do to canrun; NO_COLOR is set, as its output is
// captured (and quoted in errors), never shown on a terminal.
//
// Thread safety: free functions; run_hf may run several commands at once.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "process/process.h"

namespace canrun::hub {

//! The `hf` program on PATH; kNotFound saying to `pip install huggingface_hub` when none is.
Result<std::filesystem::path> find_hf_cli();

//! Runs `hf ARGS...` to completion; its output comes back in the outcome. kNotFound when `hf`
//! is not on PATH; kUnavailable when it exits with an error or runs past `timeout`, with the
//! command and the end of what it printed.
Result<process::ProcessOutcome> run_hf(const std::vector<std::string>& args,
                                       process::ProcessLauncher& launcher,
                                       std::chrono::seconds timeout);

}  // namespace canrun::hub
