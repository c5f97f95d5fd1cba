// A verdict row as JSON, for `--json` output and the Space's API. Keys are the column names;
// nulls are JSON null; `stack` is the parsed object; `started_at` is ISO 8601 UTC.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/result.h"
#include "dataset/verdict_row.h"

namespace canrun::dataset {

nlohmann::json row_to_json(const VerdictRow& row);

//! The inverse of row_to_json: every column must be present with the right JSON type (null
//! only where the column is nullable); `stack` may be an object or its JSON text. The error
//! names the column. Rows that come back from a worker (a Slurm task, a test fixture) are
//! read with this.
Result<VerdictRow> row_from_json(const nlohmann::json& object);

//! Parses "2026-12-02T15:24:00Z" or with up to 6 fraction digits ("...00.123456Z").
Result<Timestamp> parse_timestamp(std::string_view text);

//! "2026-12-02T15:24:00.123456Z"
std::string format_timestamp(Timestamp time);

}  // namespace canrun::dataset
