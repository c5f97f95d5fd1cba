// Failure causes (SPEC.md §9): the rows of one stack whose verdict is neither PASS nor EXCLUDED,
// grouped by error_signature (already normalised when the row was made: no addresses, paths,
// ids or varying numbers, run/classify.h), so that one broken op is one group however many
// models hit it. kSignatureHelp says what a signature is made of.
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
  //! The end of one row's error (the first model's by id), a few lines, up to the end of the
  //! paragraph of its last exception line: what a library adds after it (transformers' advice
  //! to upgrade) is left out.
  std::string excerpt;
  std::vector<std::string>
      models;  //!< "model_id" or "model_id (task)" off the stack's main task; sorted
  //! The rows' model types, sorted, distinct: a row's model_type column (schema 8), else what
  //! its error names: transformers' "model type `x`", else the last
  //! transformers/models/<type>/ folder the traceback passed through.
  std::vector<std::string> model_types;
};

inline constexpr std::string_view kNoSignature = "(none)";
inline constexpr std::size_t kCauseExcerptBytes = 600;

//! What an error_signature is, for people (`canrun dataset causes --help` and its output).
inline constexpr std::string_view kSignatureHelp =
    "An error_signature is \"CHAIN | LINE\": CHAIN is the exception's type, then the one it was "
    "raised from or while handling, and so on (\"ValueError<KeyError\": a ValueError raised while "
    "handling a KeyError); LINE is the last line of the error that names it, with what varies "
    "between models replaced: numbers by N, paths by <path>, addresses by 0x?, hashes by <hash>, "
    "temporary names by <tmp>, a model type transformers names by <model type>. So one cause "
    "is one group however many models hit it. A run that ended without reporting its error has "
    "TIMEOUT, \"signal N\" or \"exit N | LINE\" (its stderr's last line); (none): no signature.";

//! The model types `error` names (see FailureCause::model_types); empty when it names none.
std::vector<std::string> model_types_in(std::string_view error);

//! The causes of `rows` (one stack's), most rows first, then by signature.
std::vector<FailureCause> failure_causes(const std::vector<VerdictRow>& rows);

}  // namespace canrun::dataset
