// Failure causes (SPEC.md §9): the rows of one stack whose verdict is neither PASS nor EXCLUDED,
// grouped by error_signature (already normalised when the row was made: no addresses, paths,
// ids or varying numbers, run/classify.h), so that one broken op is one group however many
// models hit it.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "dataset/verdict_row.h"

namespace canrun::dataset {

struct FailureCause {
  std::string signature;  //!< the rows' error_signature; "(none)" for rows without one
  std::size_t count = 0;
  std::map<std::string, std::size_t> results;  //!< verdict (dataset spelling) → rows
  std::string excerpt;  //!< the end of one row's error (the first model's by id), a few lines
  std::vector<std::string>
      models;  //!< "model_id" or "model_id (task)" off the stack's main task; sorted
};

inline constexpr std::string_view kNoSignature = "(none)";
inline constexpr std::size_t kCauseExcerptBytes = 600;

//! The causes of `rows` (one stack's), most rows first, then by signature.
std::vector<FailureCause> failure_causes(const std::vector<VerdictRow>& rows);

}  // namespace canrun::dataset
