// Verdict rows to and from Parquet, with Apache Arrow C++ (the libraries inside the pinned
// pyarrow wheel). The only part of canrun that includes Arrow headers: everything else sees
// rows, bytes and Results.
//
// Files are zstd-compressed, one row group per 64k rows, and carry the Arrow schema
// (store_schema) so pyarrow and pandas read back the exact types (timestamp tz "UTC").
//
// Thread safety: free functions without shared state; may be called from many threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! The bytes of a Parquet file holding `rows` in the dataset schema.
Result<std::string> encode_parquet(std::span<const VerdictRow> rows);

//! Every row of a dataset file. Errors (kCorrupt) say what is wrong: not Parquet, truncated,
//! a column missing or of the wrong type, a null where none is allowed.
Result<std::vector<VerdictRow>> read_parquet_rows(const std::filesystem::path& path);

//! Rows per result ("PASS" → 12, ...), reading only the `result` column.
Result<std::map<std::string, std::int64_t>> count_results(const std::filesystem::path& path);

}  // namespace canrun::dataset
