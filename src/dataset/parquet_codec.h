// Verdict rows to and from Parquet, with Apache Arrow C++ (the libraries inside the pinned
// pyarrow wheel). The only part of canrun that includes Arrow headers: everything else sees
// rows, bytes and Results.
//
// Files are zstd-compressed, one row group per 64k rows, and carry the Arrow schema
// (store_schema) so pyarrow and pandas read back the exact types (timestamp tz "UTC"), and the
// schema version in the key-value metadata (schema.h).
//
// Thread safety: free functions without shared state; may be called from many threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "dataset/schema.h"
#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! The bytes of a Parquet file holding `rows` in the current dataset schema, its version
//! recorded.
Result<std::string> encode_parquet(std::span<const VerdictRow> rows);

//! The schema version of a file.
struct FileSchema {
  int version = kCurrentSchemaVersion;
  //! The file records its version; false for files written before versions were recorded,
  //! whose version is inferred from their columns.
  bool recorded = true;

  friend bool operator==(const FileSchema&, const FileSchema&) = default;
};

//! A dataset file read whole: its rows (columns the file's version predates are null) and
//! its schema version.
struct StoredRows {
  std::vector<VerdictRow> rows;
  FileSchema schema;
};

//! Every row of a dataset file of any schema version up to kCurrentSchemaVersion. Errors
//! (kCorrupt) say what is wrong: not Parquet, truncated, a schema version newer than this
//! canrun reads, a column missing or of the wrong type, a null where none is allowed, an
//! unknown result.
Result<StoredRows> read_parquet_file(const std::filesystem::path& path);
//! read_parquet_file of Parquet bytes already in memory (the same checks and errors); the rows
//! own their data, `bytes` need outlive the call only.
Result<StoredRows> decode_parquet(std::string_view bytes);
//! read_parquet_file without the version.
Result<std::vector<VerdictRow>> read_parquet_rows(const std::filesystem::path& path);

//! The schema version of a file, from its footer only (no data is read); the same errors as
//! read_parquet_file for a file that is not Parquet, is newer, or has columns of no version.
Result<FileSchema> read_file_schema(const std::filesystem::path& path);

//! Rows per result ("PASS" → 12, ...), reading only the `result` column.
Result<std::map<std::string, std::int64_t>> count_results(const std::filesystem::path& path);

}  // namespace canrun::dataset
