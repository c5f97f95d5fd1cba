#include "dataset/parquet_codec.h"

#include <arrow/api.h>
#include <arrow/io/api.h>
#include <fmt/format.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/exception.h>

#include <charconv>
#include <set>

#include "core/parallel.h"
#include "core/text.h"
#include "core/verdict_result.h"
#include "dataset/schema.h"

namespace canrun::dataset {
namespace {

constexpr std::int64_t kRowGroupRows = 64 * 1024;

std::shared_ptr<arrow::DataType> timestamp_type() {
  return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
}

std::shared_ptr<arrow::DataType> arrow_type(const ColumnSpec& column) {
  return std::visit(
      [](auto member) -> std::shared_ptr<arrow::DataType> {
        using Value = std::remove_cvref_t<decltype(std::declval<VerdictRow>().*member)>;
        if constexpr (std::is_same_v<Value, std::optional<std::int32_t>>) {
          return arrow::int32();
        } else if constexpr (std::is_same_v<Value, std::optional<std::int64_t>>) {
          return arrow::int64();
        } else if constexpr (std::is_same_v<Value, std::optional<double>>) {
          return arrow::float64();
        } else if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
          return arrow::list(arrow::utf8());
        } else if constexpr (std::is_same_v<Value, Timestamp>) {
          return timestamp_type();
        } else if constexpr (std::is_same_v<Value, std::optional<bool>>) {
          return arrow::boolean();
        } else {  // std::string, std::optional<std::string>, VerdictResult
          return arrow::utf8();
        }
      },
      column.member);
}

std::shared_ptr<arrow::Schema> verdict_schema() {
  static const std::shared_ptr<arrow::Schema> kSchema = [] {
    arrow::FieldVector fields;
    for (const ColumnSpec& column : verdict_columns()) {
      fields.push_back(
          arrow::field(std::string(column.name), arrow_type(column), is_nullable(column)));
    }
    return arrow::schema(std::move(fields),
                         arrow::key_value_metadata({std::string(kSchemaVersionKey)},
                                                   {std::to_string(kCurrentSchemaVersion)}));
  }();
  return kSchema;
}

Error from_arrow(const arrow::Status& status, std::string_view doing) {
  return corrupt(fmt::format("{}: {}", doing, status.message()));
}

// --- writing ---------------------------------------------------------------------------------

template <typename Builder, typename Value, typename Append>
Result<std::shared_ptr<arrow::Array>> build_column(std::span<const VerdictRow> rows,
                                                   Value VerdictRow::*member, Builder builder,
                                                   Append append) {
  if (auto status = builder.Reserve(static_cast<std::int64_t>(rows.size())); !status.ok()) {
    return from_arrow(status, "reserving a column");
  }
  for (const VerdictRow& row : rows) {
    if (auto status = append(builder, row.*member); !status.ok()) {
      return from_arrow(status, "building a column");
    }
  }
  std::shared_ptr<arrow::Array> array;
  if (auto status = builder.Finish(&array); !status.ok())
    return from_arrow(status, "finishing a column");
  return array;
}

template <typename Builder, typename T>
arrow::Status append_optional(Builder& builder, const std::optional<T>& value) {
  return value ? builder.Append(*value) : builder.AppendNull();
}

Result<std::shared_ptr<arrow::Array>> build_array(std::span<const VerdictRow> rows,
                                                  const ColumnSpec& column) {
  return std::visit(
      [&](auto member) -> Result<std::shared_ptr<arrow::Array>> {
        using Value = std::remove_cvref_t<decltype(std::declval<VerdictRow>().*member)>;
        if constexpr (std::is_same_v<Value, std::string>) {
          return build_column(rows, member, arrow::StringBuilder(),
                              [](auto& b, const std::string& v) { return b.Append(v); });
        } else if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
          return build_column(rows, member, arrow::StringBuilder(),
                              [](auto& b, const auto& v) { return append_optional(b, v); });
        } else if constexpr (std::is_same_v<Value, std::optional<std::int32_t>>) {
          return build_column(rows, member, arrow::Int32Builder(),
                              [](auto& b, const auto& v) { return append_optional(b, v); });
        } else if constexpr (std::is_same_v<Value, std::optional<std::int64_t>>) {
          return build_column(rows, member, arrow::Int64Builder(),
                              [](auto& b, const auto& v) { return append_optional(b, v); });
        } else if constexpr (std::is_same_v<Value, std::optional<double>>) {
          return build_column(rows, member, arrow::DoubleBuilder(),
                              [](auto& b, const auto& v) { return append_optional(b, v); });
        } else if constexpr (std::is_same_v<Value, std::optional<bool>>) {
          return build_column(rows, member, arrow::BooleanBuilder(),
                              [](auto& b, const auto& v) { return append_optional(b, v); });
        } else if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
          auto values = std::make_shared<arrow::StringBuilder>();
          return build_column(rows, member,
                              arrow::ListBuilder(arrow::default_memory_pool(), values),
                              [values](auto& b, const std::vector<std::string>& items) {
                                ARROW_RETURN_NOT_OK(b.Append());
                                for (const auto& item : items)
                                  ARROW_RETURN_NOT_OK(values->Append(item));
                                return arrow::Status::OK();
                              });
        } else if constexpr (std::is_same_v<Value, VerdictResult>) {
          return build_column(rows, member, arrow::StringBuilder(),
                              [](auto& b, VerdictResult v) { return b.Append(to_string(v)); });
        } else {
          return build_column(
              rows, member, arrow::TimestampBuilder(timestamp_type(), arrow::default_memory_pool()),
              [](auto& b, const Timestamp& v) { return b.Append(v.time_since_epoch().count()); });
        }
      },
      column.member);
}

// --- reading ---------------------------------------------------------------------------------

bool type_matches(const arrow::DataType& actual, const arrow::DataType& expected) {
  // A list's item field may be named "item" or "element" depending on the writer.
  if (actual.id() == arrow::Type::LIST && expected.id() == arrow::Type::LIST) {
    return static_cast<const arrow::ListType&>(actual).value_type()->Equals(
        static_cast<const arrow::ListType&>(expected).value_type());
  }
  return actual.Equals(expected);
}

//! The version a file's metadata records; for a file without one (written before versions were
//! recorded), the version whose columns it has, or the current one when none matches (then
//! check_schema says what is wrong).
Result<FileSchema> schema_version_of(const arrow::Schema& schema) {
  const auto& metadata = schema.metadata();
  const int found = metadata ? metadata->FindKey(std::string(kSchemaVersionKey)) : -1;
  if (found < 0) {
    std::set<std::string_view> names;
    for (const auto& field : schema.fields()) names.insert(field->name());
    for (int version = kCurrentSchemaVersion; version >= 1; --version) {
      std::set<std::string_view> expected;
      for (const ColumnSpec& column : verdict_columns()) {
        if (in_schema_version(column, version)) expected.insert(column.name);
      }
      if (names == expected) return FileSchema{version, false};
    }
    return FileSchema{kCurrentSchemaVersion, false};
  }
  const std::string& text = metadata->value(found);
  int version = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || version < 1) {
    return corrupt(fmt::format("the file's {} is {}, not a schema version (a whole number >= 1)",
                               kSchemaVersionKey, quote_for_message(text)));
  }
  if (version > kCurrentSchemaVersion) {
    return corrupt(
        fmt::format("written by a newer canrun: schema version {}, this canrun reads up to {}",
                    version, kCurrentSchemaVersion));
  }
  return FileSchema{version, true};
}

//! The file's columns against those of schema `version`.
Status check_schema(const arrow::Schema& actual, int version) {
  std::vector<std::string> problems;
  for (const ColumnSpec& column : verdict_columns()) {
    if (!in_schema_version(column, version)) continue;
    const auto field = actual.GetFieldByName(std::string(column.name));
    if (field == nullptr) {
      problems.push_back(fmt::format("column {} is missing", column.name));
    } else if (!type_matches(*field->type(), *arrow_type(column))) {
      problems.push_back(fmt::format("column {} is {}, expected {}", column.name,
                                     field->type()->ToString(), arrow_type_name(column)));
    }
  }
  for (const auto& field : actual.fields()) {
    const auto columns = verdict_columns();
    const auto column = std::find_if(columns.begin(), columns.end(),
                                     [&](const ColumnSpec& c) { return c.name == field->name(); });
    if (column == columns.end()) {
      problems.push_back(fmt::format("column {} is not in the dataset schema", field->name()));
    } else if (!in_schema_version(*column, version)) {
      problems.push_back(fmt::format("column {} is not in schema version {} (it came in {})",
                                     field->name(), version, column->since_version));
    }
  }
  if (problems.empty()) return ok_status();
  return corrupt(fmt::format("wrong schema: {}", fmt::join(problems, "; ")));
}

//! Calls `store(row, array, idx)` for every value that is not null. `store` returns void, or a
//! Status for a value it refuses (its message is put after the column and row number).
template <typename ArrayType, typename Store>
Status read_column(const arrow::ChunkedArray& chunks, std::vector<VerdictRow>& rows,
                   std::string_view name, bool nullable, Store store) {
  std::size_t row_idx = 0;
  for (const auto& chunk : chunks.chunks()) {
    const auto& array = static_cast<const ArrayType&>(*chunk);
    for (std::int64_t idx = 0; idx < array.length(); ++idx, ++row_idx) {
      if (array.IsNull(idx)) {
        if (!nullable) {
          return corrupt(
              fmt::format("column {} is null in row {}, which it must not be", name, row_idx + 1));
        }
        continue;
      }
      if constexpr (std::is_same_v<decltype(store(rows[row_idx], array, idx)), Status>) {
        if (Status status = store(rows[row_idx], array, idx); !status.ok()) {
          return corrupt(
              fmt::format("column {} in row {}: {}", name, row_idx + 1, status.error().message()));
        }
      } else {
        store(rows[row_idx], array, idx);
      }
    }
  }
  return ok_status();
}

Status read_array(const arrow::ChunkedArray& chunks, const ColumnSpec& column,
                  std::vector<VerdictRow>& rows) {
  const bool nullable = is_nullable(column);
  return std::visit(
      [&](auto member) -> Status {
        using Value = std::remove_cvref_t<decltype(std::declval<VerdictRow>().*member)>;
        if constexpr (std::is_same_v<Value, std::string> ||
                      std::is_same_v<Value, std::optional<std::string>>) {
          return read_column<arrow::StringArray>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::StringArray& array, std::int64_t idx) {
                row.*member = std::string(array.GetView(idx));
              });
        } else if constexpr (std::is_same_v<Value, std::optional<std::int32_t>>) {
          return read_column<arrow::Int32Array>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::Int32Array& array, std::int64_t idx) {
                row.*member = array.Value(idx);
              });
        } else if constexpr (std::is_same_v<Value, std::optional<std::int64_t>>) {
          return read_column<arrow::Int64Array>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::Int64Array& array, std::int64_t idx) {
                row.*member = array.Value(idx);
              });
        } else if constexpr (std::is_same_v<Value, std::optional<double>>) {
          return read_column<arrow::DoubleArray>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::DoubleArray& array, std::int64_t idx) {
                row.*member = array.Value(idx);
              });
        } else if constexpr (std::is_same_v<Value, std::optional<bool>>) {
          return read_column<arrow::BooleanArray>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::BooleanArray& array, std::int64_t idx) {
                row.*member = array.Value(idx);
              });
        } else if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
          return read_column<arrow::ListArray>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::ListArray& array, std::int64_t idx) {
                const auto& items = static_cast<const arrow::StringArray&>(*array.values());
                auto& out = row.*member;
                for (std::int64_t item = array.value_offset(idx);
                     item < array.value_offset(idx + 1); ++item) {
                  out.emplace_back(items.GetView(item));
                }
              });
        } else if constexpr (std::is_same_v<Value, VerdictResult>) {
          return read_column<arrow::StringArray>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::StringArray& array,
                       std::int64_t idx) -> Status {
                const std::string_view text = array.GetView(idx);
                const auto result = parse_verdict_result(text);
                if (!result) {
                  return corrupt(fmt::format("{} is not a result; a result is one of {}",
                                             quote_for_message(text), verdict_result_names()));
                }
                row.*member = *result;
                return ok_status();
              });
        } else {
          return read_column<arrow::TimestampArray>(
              chunks, rows, column.name, nullable,
              [member](VerdictRow& row, const arrow::TimestampArray& array, std::int64_t idx) {
                row.*member = Timestamp(std::chrono::microseconds(array.Value(idx)));
              });
        }
      },
      column.member);
}

//! Opens Parquet data (a file, or bytes in memory) after checking the magic at both ends, for
//! clear messages.
Result<std::unique_ptr<parquet::arrow::FileReader>> open_checked(
    std::shared_ptr<arrow::io::RandomAccessFile> file) {
  auto size = file->GetSize();
  if (!size.ok()) return io_error(fmt::format("cannot stat: {}", size.status().message()));
  if (*size < 12) {
    return corrupt(
        fmt::format("not a Parquet file: only {} bytes (a Parquet file has at least 12)", *size));
  }
  char magic[4];
  auto head = file->ReadAt(0, 4, magic);
  if (!head.ok() || std::string_view(magic, 4) != "PAR1") {
    return corrupt("not a Parquet file: it does not start with the magic bytes PAR1");
  }
  auto tail = file->ReadAt(*size - 4, 4, magic);
  if (!tail.ok() || std::string_view(magic, 4) != "PAR1") {
    return corrupt(fmt::format(
        "truncated or damaged Parquet file: {} bytes and no PAR1 footer at the end", *size));
  }
  try {
    auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool());
    if (!reader.ok()) return from_arrow(reader.status(), "unreadable Parquet footer");
    return std::move(*reader);
  } catch (const parquet::ParquetException& error) {
    return corrupt(fmt::format("unreadable Parquet footer: {}", error.what()));
  }
}

Result<std::unique_ptr<parquet::arrow::FileReader>> open_checked(
    const std::filesystem::path& path) {
  auto opened = arrow::io::ReadableFile::Open(path.string());
  if (!opened.ok()) return io_error(fmt::format("cannot open: {}", opened.status().message()));
  return open_checked(*opened);
}

//! The file's schema version, after checking its columns against that version.
Result<FileSchema> checked_schema(parquet::arrow::FileReader& reader) {
  std::shared_ptr<arrow::Schema> schema;
  if (auto status = reader.GetSchema(&schema); !status.ok()) {
    return from_arrow(status, "unreadable schema");
  }
  CANRUN_ASSIGN_OR_RETURN(const FileSchema file_schema, schema_version_of(*schema));
  CANRUN_RETURN_IF_ERROR(check_schema(*schema, file_schema.version));
  return file_schema;
}

}  // namespace

Result<std::string> encode_parquet(std::span<const VerdictRow> rows) {
  arrow::ArrayVector arrays;
  for (const ColumnSpec& column : verdict_columns()) {
    CANRUN_ASSIGN_OR_RETURN(auto array, build_array(rows, column));
    arrays.push_back(std::move(array));
  }
  const auto table =
      arrow::Table::Make(verdict_schema(), arrays, static_cast<std::int64_t>(rows.size()));
  auto sink = arrow::io::BufferOutputStream::Create();
  if (!sink.ok()) return from_arrow(sink.status(), "allocating the output buffer");
  const auto properties =
      parquet::WriterProperties::Builder()
          .compression(arrow::Compression::ZSTD)
          ->created_by(fmt::format("canrun (parquet-cpp-arrow {})", ARROW_VERSION_STRING))
          ->build();
  const auto arrow_properties =
      parquet::ArrowWriterProperties::Builder().store_schema()->set_use_threads(true)->build();
  if (auto status = parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *sink,
                                               kRowGroupRows, properties, arrow_properties);
      !status.ok()) {
    return from_arrow(status, "writing Parquet");
  }
  auto buffer = (*sink)->Finish();
  if (!buffer.ok()) return from_arrow(buffer.status(), "finishing Parquet");
  return (*buffer)->ToString();
}

namespace {

//! Every row of the Parquet data the reader opened (read_parquet_file, decode_parquet).
Result<StoredRows> read_rows(std::unique_ptr<parquet::arrow::FileReader> reader) {
  try {
    CANRUN_ASSIGN_OR_RETURN(const FileSchema file_schema, checked_schema(*reader));
    reader->set_use_threads(true);  // decode columns in parallel on Arrow's CPU pool
    auto table = reader->ReadTable();
    if (!table.ok()) return from_arrow(table.status(), "unreadable data");
    std::vector<VerdictRow> rows(static_cast<std::size_t>((*table)->num_rows()));
    // Each column fills its own member of every row, so columns convert in parallel. A column
    // the file's version predates stays null in every row.
    const auto columns = verdict_columns();
    std::vector<Status> statuses(columns.size());
    parallel_for(columns.size(), [&](std::size_t idx) {
      if (!in_schema_version(columns[idx], file_schema.version)) {
        if (!is_nullable(columns[idx])) {
          statuses[idx] = internal_error(fmt::format(
              "column {} came in schema version {} but is not nullable, so files of version {} "
              "cannot be read",
              columns[idx].name, columns[idx].since_version, file_schema.version));
        }
        return;
      }
      const auto chunks = (*table)->GetColumnByName(std::string(columns[idx].name));
      statuses[idx] = read_array(*chunks, columns[idx], rows);
    });
    for (const Status& status : statuses) CANRUN_RETURN_IF_ERROR(status);
    // Derived columns a file predates read as what they derive from (fill_neuron_columns).
    if (file_schema.version < kNeuronColumnsVersion) {
      for (VerdictRow& row : rows) fill_neuron_columns(row);
    }
    return StoredRows{std::move(rows), file_schema};
  } catch (const parquet::ParquetException& error) {
    return corrupt(fmt::format("unreadable Parquet data: {}", error.what()));
  }
}

}  // namespace

Result<StoredRows> read_parquet_file(const std::filesystem::path& path) {
  CANRUN_ASSIGN_OR_RETURN(auto reader, open_checked(path));
  return read_rows(std::move(reader));
}

Result<StoredRows> decode_parquet(std::string_view bytes) {
  // A view of the caller's bytes, not a copy.
  const auto buffer = std::make_shared<arrow::Buffer>(
      reinterpret_cast<const std::uint8_t*>(bytes.data()), static_cast<std::int64_t>(bytes.size()));
  CANRUN_ASSIGN_OR_RETURN(auto reader,
                          open_checked(std::make_shared<arrow::io::BufferReader>(buffer)));
  return read_rows(std::move(reader));
}

Result<std::vector<VerdictRow>> read_parquet_rows(const std::filesystem::path& path) {
  CANRUN_ASSIGN_OR_RETURN(StoredRows stored, read_parquet_file(path));
  return std::move(stored.rows);
}

Result<FileSchema> read_file_schema(const std::filesystem::path& path) {
  CANRUN_ASSIGN_OR_RETURN(auto reader, open_checked(path));
  try {
    return checked_schema(*reader);
  } catch (const parquet::ParquetException& error) {
    return corrupt(fmt::format("unreadable Parquet schema: {}", error.what()));
  }
}

Result<std::map<std::string, std::int64_t>> count_results(const std::filesystem::path& path) {
  CANRUN_ASSIGN_OR_RETURN(auto reader, open_checked(path));
  try {
    std::shared_ptr<arrow::Schema> schema;
    if (auto status = reader->GetSchema(&schema); !status.ok()) {
      return from_arrow(status, "unreadable schema");
    }
    const int index = schema->GetFieldIndex("result");
    if (index < 0 || !schema->field(index)->type()->Equals(arrow::utf8())) {
      return corrupt("wrong schema: no string column result");
    }
    auto table = reader->ReadTable({index});
    if (!table.ok()) return from_arrow(table.status(), "unreadable data");
    std::map<std::string, std::int64_t> counts;
    for (const auto& chunk : (*table)->column(0)->chunks()) {
      const auto& array = static_cast<const arrow::StringArray&>(*chunk);
      for (std::int64_t idx = 0; idx < array.length(); ++idx) {
        if (!array.IsNull(idx)) ++counts[std::string(array.GetView(idx))];
      }
    }
    return counts;
  } catch (const parquet::ParquetException& error) {
    return corrupt(fmt::format("unreadable Parquet data: {}", error.what()));
  }
}

}  // namespace canrun::dataset
