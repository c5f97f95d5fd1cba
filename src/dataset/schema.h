// The dataset's columns in order: name, which VerdictRow member holds it (and so its type
// and nullability), and what it means. The Parquet codec, the validator and the dataset card
// all read this one table.
#pragma once

#include <span>
#include <string_view>
#include <variant>

#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! A pointer to the VerdictRow member behind a column; the alternative gives the Arrow type:
//! string → utf8 not null, optional<string> → utf8, optional<int32/int64/double> → int32 /
//! int64 / float64, vector<string> → list<utf8> not null, Timestamp → timestamp[us, UTC],
//! VerdictResult → utf8 not null (its dataset spelling).
using ColumnMember =
    std::variant<std::string VerdictRow::*, std::optional<std::string> VerdictRow::*,
                 std::optional<std::int32_t> VerdictRow::*,
                 std::optional<std::int64_t> VerdictRow::*, std::optional<double> VerdictRow::*,
                 std::vector<std::string> VerdictRow::*, Timestamp VerdictRow::*,
                 VerdictResult VerdictRow::*>;

struct ColumnSpec {
  std::string_view name;
  ColumnMember member;
  std::string_view meaning;
};

//! Every column, in file order (SPEC.md §8).
std::span<const ColumnSpec> verdict_columns();

//! The Arrow type of a column as pyarrow prints it ("string", "int32", "list<string>", ...).
std::string_view arrow_type_name(const ColumnSpec& column);
bool is_nullable(const ColumnSpec& column);

}  // namespace canrun::dataset
