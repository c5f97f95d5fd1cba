// How a model's weights are shared among the cores of one test (SPEC.md §5): not at all (one
// core), tensor parallel, or expert parallel. Parsed once where it enters canrun (the command
// line, a campaign's work list) and written out as its short name ("none", "tp", "ep") where it
// leaves (run.py, the dataset's `parallelism` column, JSON).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "core/result.h"

namespace canrun {

enum class Parallelism { kNone, kTensor, kExpert };

//! "none", "tp", "ep".
std::string_view to_string(Parallelism parallelism);
//! The short name back; nullopt for anything else.
std::optional<Parallelism> parse_parallelism(std::string_view text);
//! As parse_parallelism, with kInvalidArgument naming `what` and the value otherwise:
//! `--parallelism "pp" is not none, tp or ep`.
Result<Parallelism> parse_parallelism(std::string_view text, std::string_view what);

}  // namespace canrun
