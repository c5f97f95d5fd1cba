// The pieces of JSON that several of the Space's answers share, so a stack or a status reads
// the same in every answer.
//
// Thread safety: free functions of their arguments.
#pragma once

#include <nlohmann/json.hpp>

#include "dataset/stack_key.h"
#include "dataset/verdict_row.h"

namespace canrun::serve {

//! A stack as the API names it: backend, compiler and library with their versions, its display
//! name and its file name's stem.
nlohmann::json stack_json(const dataset::StackKey& key);

//! Sets `status` and its display class `status_class` ("pass", "fail", "warn", "excluded",
//! "untested"): the row's result; without a row, EXCLUDED when the catalog excludes the model,
//! else "not tested". The page draws its badge from the class, so it never classifies results.
void put_status(nlohmann::json& out, const dataset::VerdictRow* row, bool catalog_excludes);

}  // namespace canrun::serve
