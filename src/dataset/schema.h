// The dataset's columns in order: name, which VerdictRow member holds it (and so its type
// and nullability), what it means, and the schema version that added it. The Parquet codec,
// the validator and the dataset card all read this one table.
//
// Schema versions. Each file records the version it was written in, in its Parquet key-value
// metadata under kSchemaVersionKey. History:
//   1  the first 34 columns;
//   2  adds judge_threshold and judge_model;
//   3  adds flaky;
//   4  adds neuronx_cc and neuron_cores (neuron's names of compiler_version and cores);
//   5  adds agreement and judge_parts;
//   6  adds throughput, throughput_unit and output_files (tasks beyond generation);
//   7  adds isolation;
//   8  adds model_type, claims_fullgraph, claims_tp_plan, claims_ep_plan (the census) and
//      near_tie;
//   9  adds the eager baseline (eager_throughput, eager_ttft_s, eager_peak_memory_bytes,
//      eager_note, speedup, memory_ratio, memory_measure) and the long generation
//      (long_tokens, long_decode_tokens_per_s, long_agreement, drifts_after).
// Files written before versions were recorded carry no key: their version is inferred from
// their columns. Readers accept every version up to kCurrentSchemaVersion (a column the file
// predates reads as null) and refuse a newer one. To add a column: a new entry in schema.cc
// with the next version (it must be nullable, since older files lack it), and bump
// kCurrentSchemaVersion.
#pragma once

#include <span>
#include <string_view>
#include <variant>

#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! A pointer to the VerdictRow member behind a column; the alternative gives the Arrow type:
//! string → utf8 not null, optional<string> → utf8, optional<int32/int64/double> → int32 /
//! int64 / float64, vector<string> → list<utf8> not null, Timestamp → timestamp[us, UTC],
//! VerdictResult → utf8 not null (its dataset spelling), optional<bool> → bool.
using ColumnMember =
    std::variant<std::string VerdictRow::*, std::optional<std::string> VerdictRow::*,
                 std::optional<std::int32_t> VerdictRow::*,
                 std::optional<std::int64_t> VerdictRow::*, std::optional<double> VerdictRow::*,
                 std::vector<std::string> VerdictRow::*, Timestamp VerdictRow::*,
                 VerdictResult VerdictRow::*, std::optional<bool> VerdictRow::*>;

//! The schema version canrun writes, and the newest it reads.
inline constexpr int kCurrentSchemaVersion = 9;
//! The version that added the derived neuron columns; reading an older file derives them.
inline constexpr int kNeuronColumnsVersion = 4;
//! The key of the version in a file's Parquet key-value metadata; its value is decimal text.
inline constexpr std::string_view kSchemaVersionKey = "canrun.schema_version";

struct ColumnSpec {
  std::string_view name;
  ColumnMember member;
  std::string_view meaning;
  int since_version = 1;  //!< the schema version that added the column
};

//! Every column of the current schema, in file order (SPEC.md §8).
std::span<const ColumnSpec> verdict_columns();

//! Whether `column` is part of schema `version` (it was added in that version or before).
inline bool in_schema_version(const ColumnSpec& column, int version) {
  return column.since_version <= version;
}

//! The Arrow type of a column as pyarrow prints it ("string", "int32", "list<string>", ...).
std::string_view arrow_type_name(const ColumnSpec& column);
bool is_nullable(const ColumnSpec& column);

}  // namespace canrun::dataset
