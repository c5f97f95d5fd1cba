// How a process is pinned to cores (SPEC.md §4): the one rule, per pinning syntax of a backend
// profile ([pinning] syntax), of how the value that gives a process the cores
// [first, first + count) is written, and how one rank's share of a given value is cut.
//
//   syntax  value for cores 4..7   one rank's share (of `given`, among `cores` ranks)
//   count   (none: host threads)   the threads shared evenly, at least 1 each ("12", 3 → "4")
//   range   "4-7" ("4" for one)    a contiguous slice of the range ("0-7", 4, rank 1 → "2-3")
//   list    "4,5,6,7"              a slice of the ids ("0,1,2,3", 2, rank 1 → "2,3")
//
// canrun writes the value a run is given with pinning_value; the rendered run.py cuts each
// rank's share at run time with the same rule (rank_pinning in recipes/_ranks.py), so a copied
// script honours whatever cores a user or a scheduler hands it. src/backend/pinning_cases.json
// holds the cases both sides are tested against (pinning_test here; pinning_table_test, in
// tests/recipe/test_pinning.py, for both).
//
// Thread safety: free functions over constant data.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/profile.h"
#include "core/result.h"

namespace canrun::backend {

//! Cores [first, first + count) of one machine, as a backend numbers them.
struct CoreRange {
  int first = 0;  //!< id of the first core, >= 0
  int count = 1;  //!< how many, >= 1
};

//! The pinning syntaxes a profile may name, in the order messages list them.
std::vector<std::string_view> pinning_syntaxes();

//! Whether `syntax` is one of pinning_syntaxes().
bool is_pinning_syntax(std::string_view syntax);

//! The value of profile.pinning_env that gives a process `cores`; nullopt for "count" (threads
//! are left to the host) and for a profile that names no pinning. `cores` must be valid
//! (first >= 0, count >= 1).
std::optional<std::string> pinning_value(const BackendProfile& profile, CoreRange cores);

//! What `rank` (0 <= rank < cores) of `cores` ranks gets of `given`, the value the whole run was
//! given (empty: unset, which means the first `cores` cores for range and list, and every
//! thread this process may use for count). kInvalidArgument, naming the value, for an unknown
//! syntax, a value not of the syntax's form (a range wider than 65536 cores counts as one),
//! fewer cores given than `cores`, or a rank out of range.
Result<std::string> rank_share(std::string_view syntax, std::string_view given, int cores,
                               int rank);

}  // namespace canrun::backend
