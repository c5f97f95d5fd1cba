// Schema versions: files of older versions (as earlier canruns wrote them, with or without the
// version key) are read, upserted into and migrated; newer ones are refused and left alone.
// Old files are made the way they were made: canrun's bytes rewritten with Arrow, without the
// columns that came later and with the metadata of the time.
#include <arrow/api.h>
#include <arrow/io/api.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "core/atomic_file.h"
#include "dataset/dataset.h"
#include "dataset/parquet_codec.h"
#include "dataset/schema.h"
#include "dataset/test_rows.h"

namespace canrun::dataset {
namespace {

namespace fs = std::filesystem;
using testing::full_row;
using ::testing::HasSubstr;
using TablePtr = std::shared_ptr<arrow::Table>;

//! `bytes` (a Parquet file) read with Arrow, changed by `edit`, and written again with the
//! table's schema metadata (store_schema, as canrun and pyarrow write).
std::string rewritten(const std::string& bytes, const std::function<TablePtr(TablePtr)>& edit) {
  auto input = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes));
  auto reader = parquet::arrow::OpenFile(input, arrow::default_memory_pool());
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  auto read = (*reader)->ReadTable();
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  const TablePtr table = edit(*read);
  auto sink = *arrow::io::BufferOutputStream::Create();
  const auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  EXPECT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink, 1024,
                                         parquet::default_writer_properties(), arrow_properties)
                  .ok());
  return (*sink->Finish())->ToString();
}

TablePtr without_columns(TablePtr table, std::set<std::string> names) {
  for (int idx = table->num_columns() - 1; idx >= 0; --idx) {
    if (names.contains(table->field(idx)->name())) table = *table->RemoveColumn(idx);
  }
  return table;
}

//! The columns that came after schema `version`.
std::set<std::string> columns_after(int version) {
  std::set<std::string> names;
  for (const ColumnSpec& column : verdict_columns()) {
    if (!in_schema_version(column, version)) names.emplace(column.name);
  }
  return names;
}

//! The table with its schema version key set to `version`, or without one (nullopt).
TablePtr with_version(TablePtr table, std::optional<std::string> version) {
  if (!version) return table->ReplaceSchemaMetadata(nullptr);
  return table->ReplaceSchemaMetadata(
      arrow::key_value_metadata({std::string(kSchemaVersionKey)}, {*version}));
}

//! A version-1 file as canrun wrote it before versions were recorded: 34 columns, no key.
std::string version1_file(const std::vector<VerdictRow>& rows) {
  return rewritten(*encode_parquet(rows), [](TablePtr table) {
    return with_version(without_columns(table, columns_after(1)), std::nullopt);
  });
}

//! A version-2 file as canrun wrote it before versions were recorded: 36 columns, no key.
std::string version2_file(const std::vector<VerdictRow>& rows) {
  return rewritten(*encode_parquet(rows), [](TablePtr table) {
    return with_version(without_columns(table, columns_after(2)), std::nullopt);
  });
}

//! A row with the judge's columns set, so a file that lacks them visibly drops them.
VerdictRow judged_row(std::string model_id, std::string library_version = "5.18.0") {
  VerdictRow row = full_row(std::move(model_id), std::move(library_version));
  row.cores = 2;
  row.parallelism = "tp";
  row.verification = "judge";
  row.judge_score = -1.5;
  row.judge_threshold = -5.0;
  row.judge_model = "HuggingFaceTB/SmolLM2-135M-Instruct@24aa9a1";
  fill_neuron_columns(row);
  return row;
}

//! The row as a version-1 file holds it: without the columns that came in version 2.
VerdictRow as_version1(VerdictRow row) {
  row.judge_threshold.reset();
  row.judge_model.reset();
  return row;
}

class SchemaVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("canrun-schema-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "data");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path put(const fs::path& name, const std::string& bytes) {
    const fs::path path = root_ / "data" / name;
    EXPECT_TRUE(write_file_atomically(path, bytes).ok());
    return path;
  }

  DatasetDir data() const { return DatasetDir(root_); }
  StackKey key(const std::string& library_version = "5.18.0") const {
    return *stack_key_of(full_row("org/a", library_version));
  }

  fs::path root_;
};

TEST(SchemaTable, VersionsAreConsistent) {
  std::size_t version1 = 0;
  for (const ColumnSpec& column : verdict_columns()) {
    EXPECT_GE(column.since_version, 1) << column.name;
    EXPECT_LE(column.since_version, kCurrentSchemaVersion) << column.name;
    // Older files lack a column added later, so it reads as null: it must be nullable.
    if (column.since_version > 1) {
      EXPECT_TRUE(is_nullable(column)) << column.name;
    }
    version1 += in_schema_version(column, 1);
  }
  EXPECT_EQ(version1, 34u);
  EXPECT_EQ(std::count_if(verdict_columns().begin(), verdict_columns().end(),
                          [](const ColumnSpec& column) { return in_schema_version(column, 2); }),
            36);
  EXPECT_EQ(std::count_if(verdict_columns().begin(), verdict_columns().end(),
                          [](const ColumnSpec& column) { return in_schema_version(column, 3); }),
            37);
  EXPECT_EQ(std::count_if(verdict_columns().begin(), verdict_columns().end(),
                          [](const ColumnSpec& column) { return in_schema_version(column, 4); }),
            39);
  EXPECT_EQ(std::count_if(verdict_columns().begin(), verdict_columns().end(),
                          [](const ColumnSpec& column) { return in_schema_version(column, 5); }),
            41);
  EXPECT_EQ(std::count_if(verdict_columns().begin(), verdict_columns().end(),
                          [](const ColumnSpec& column) { return in_schema_version(column, 6); }),
            44);
  EXPECT_EQ(std::count_if(verdict_columns().begin(), verdict_columns().end(),
                          [](const ColumnSpec& column) { return in_schema_version(column, 7); }),
            45);
  EXPECT_EQ(std::count_if(verdict_columns().begin(), verdict_columns().end(),
                          [](const ColumnSpec& column) { return in_schema_version(column, 8); }),
            50);
  EXPECT_EQ(verdict_columns().size(), 61u);
  EXPECT_EQ(kCurrentSchemaVersion, 9);
}

TEST_F(SchemaVersionTest, CanrunRecordsTheCurrentVersion) {
  const fs::path path = put("a.parquet", *encode_parquet(std::vector<VerdictRow>{full_row()}));
  EXPECT_EQ(*read_file_schema(path), (FileSchema{kCurrentSchemaVersion, true}));
}

TEST_F(SchemaVersionTest, AVersion1FileWithoutAKeyReadsWithTheLaterColumnsNull) {
  const std::vector<VerdictRow> rows = {judged_row("org/a"), full_row("org/b")};
  const fs::path path = put("v1.parquet", version1_file(rows));
  EXPECT_EQ(*read_file_schema(path), (FileSchema{1, false}));
  auto stored = read_parquet_file(path);
  ASSERT_TRUE(stored.ok()) << stored.error().message();
  EXPECT_EQ(stored->schema, (FileSchema{1, false}));
  EXPECT_EQ(stored->rows, (std::vector<VerdictRow>{as_version1(rows[0]), as_version1(rows[1])}));
  EXPECT_EQ(stored->rows[0].judge_score, -1.5);  // a version-1 column is kept
}

TEST_F(SchemaVersionTest, AVersion2FileWithoutAKeyIsVersion2) {
  const std::vector<VerdictRow> rows = {judged_row("org/a")};
  const fs::path path = put("v2.parquet", version2_file(rows));
  EXPECT_EQ(*read_file_schema(path), (FileSchema{2, false}));
  EXPECT_EQ(*read_parquet_rows(path), rows);
}

TEST_F(SchemaVersionTest, ARecordedVersion1FileReadsAsVersion1) {
  const fs::path path =
      put("v1.parquet", rewritten(version1_file({judged_row("org/a")}),
                                  [](TablePtr table) { return with_version(table, "1"); }));
  EXPECT_EQ(*read_file_schema(path), (FileSchema{1, true}));
  EXPECT_EQ(*read_parquet_rows(path), std::vector<VerdictRow>{as_version1(judged_row("org/a"))});
}

TEST_F(SchemaVersionTest, ANewerVersionIsRefusedWithBothVersions) {
  const fs::path path =
      put("v99.parquet", rewritten(*encode_parquet(std::vector<VerdictRow>{full_row()}),
                                   [](TablePtr table) { return with_version(table, "99"); }));
  for (const Error& error : {read_parquet_rows(path).error(), read_file_schema(path).error()}) {
    EXPECT_EQ(error.code(), ErrorCode::kCorrupt);
    EXPECT_THAT(error.message(),
                HasSubstr(fmt::format("written by a newer canrun: schema version 99, this canrun "
                                      "reads up to {}",
                                      kCurrentSchemaVersion)));
  }
}

TEST_F(SchemaVersionTest, AVersionThatIsNotANumberOrColumnsOfALaterVersionAreCorrupt) {
  const std::string bytes = *encode_parquet(std::vector<VerdictRow>{full_row()});
  const fs::path word =
      put("word.parquet", rewritten(bytes, [](TablePtr t) { return with_version(t, "two"); }));
  EXPECT_THAT(read_parquet_rows(word).error().message(),
              HasSubstr("the file's canrun.schema_version is \"two\", not a schema version"));
  // Says version 1 but has the columns of version 2.
  const fs::path mislabelled =
      put("mislabelled.parquet", rewritten(bytes, [](TablePtr t) { return with_version(t, "1"); }));
  EXPECT_THAT(read_parquet_rows(mislabelled).error().message(),
              HasSubstr("column judge_threshold is not in schema version 1 (it came in 2)"));
  // No key and the columns of no version: checked against the current one.
  const fs::path partial =
      put("partial.parquet", rewritten(bytes, [](TablePtr t) {
            return with_version(without_columns(t, {"task", "judge_model"}), std::nullopt);
          }));
  EXPECT_THAT(read_parquet_rows(partial).error().message(),
              HasSubstr("wrong schema: column task is missing; column judge_model is missing"));
}

TEST_F(SchemaVersionTest, AnUnknownResultIsAnErrorNamingTheValue) {
  const fs::path path =
      put("maybe.parquet",
          rewritten(*encode_parquet(std::vector<VerdictRow>{full_row("org/a"), full_row("org/b")}),
                    [](TablePtr table) {
                      arrow::StringBuilder builder;
                      EXPECT_TRUE(builder.AppendValues({"PASS", "MAYBE"}).ok());
                      const int index = table->schema()->GetFieldIndex("result");
                      return *table->SetColumn(
                          index, table->field(index),
                          std::make_shared<arrow::ChunkedArray>(*builder.Finish()));
                    }));
  auto read = read_parquet_rows(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(read.error().message(),
              HasSubstr("column result in row 2: \"MAYBE\" is not a result; a result is one of "
                        "PASS, FAIL_LOAD"));
}

TEST_F(SchemaVersionTest, UpsertRewritesAnOlderFileInTheCurrentVersion) {
  const fs::path path = put(key().file_name(), version1_file({judged_row("org/a")}));
  ASSERT_TRUE(data().upsert({judged_row("org/b")}).ok());
  auto stored = read_parquet_file(path);
  ASSERT_TRUE(stored.ok()) << stored.error().message();
  EXPECT_EQ(stored->schema, (FileSchema{kCurrentSchemaVersion, true}));
  EXPECT_EQ(stored->rows,
            (std::vector<VerdictRow>{as_version1(judged_row("org/a")), judged_row("org/b")}));
}

TEST_F(SchemaVersionTest, UpsertUpgradesTheOlderFilesOfTheFolder) {
  const fs::path older =
      put(key("4.57.6").file_name(), version1_file({full_row("org/old", "4.57.6")}));
  const fs::path newer = put("cuda__inductor-2.13.0__transformers-5.18.0.parquet",
                             rewritten(*encode_parquet(std::vector<VerdictRow>{full_row()}),
                                       [](TablePtr table) { return with_version(table, "99"); }));
  const std::string newer_bytes = *read_file(newer);
  ASSERT_TRUE(data().upsert({full_row("org/a")}).ok());
  EXPECT_EQ(*read_file_schema(older), (FileSchema{kCurrentSchemaVersion, true}));
  EXPECT_EQ(*read_parquet_rows(older), std::vector<VerdictRow>{full_row("org/old", "4.57.6")});
  EXPECT_EQ(*read_file(newer), newer_bytes);  // a newer file is not touched
}

TEST_F(SchemaVersionTest, UpsertRefusesAFileOfANewerVersionAndLeavesIt) {
  const fs::path path =
      put(key().file_name(),
          rewritten(*encode_parquet(std::vector<VerdictRow>{full_row()}), [](TablePtr table) {
            return with_version(table, std::to_string(kCurrentSchemaVersion + 1));
          }));
  const std::string before = *read_file(path);
  Status status = data().upsert({full_row("org/b")});
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message(),
              HasSubstr(fmt::format("written by a newer canrun: schema version {}, this canrun "
                                    "reads up to {}",
                                    kCurrentSchemaVersion + 1, kCurrentSchemaVersion)));
  EXPECT_THAT(status.error().message(), HasSubstr("not overwriting it"));
  EXPECT_EQ(*read_file(path), before);
}

TEST_F(SchemaVersionTest, MigrateUpgradesEachFileOnceAndReportsWhatItCannotRead) {
  const fs::path v1 =
      put(key("4.57.6").file_name(), version1_file({judged_row("org/a", "4.57.6")}));
  const fs::path unrecorded =
      put(key("4.56.0").file_name(), version2_file({full_row("org/a", "4.56.0")}));
  const fs::path current =
      put(key().file_name(), *encode_parquet(std::vector<VerdictRow>{full_row()}));
  const fs::path newer = put("cuda__inductor-2.13.0__transformers-5.18.0.parquet",
                             rewritten(*encode_parquet(std::vector<VerdictRow>{full_row()}),
                                       [](TablePtr table) { return with_version(table, "99"); }));
  const std::string current_bytes = *read_file(current);
  const std::string newer_bytes = *read_file(newer);

  const auto steps = data().migrate();
  ASSERT_EQ(steps.size(), 4u);  // sorted by path: cuda, then neuron 4.56.0, 4.57.6, 5.18.0
  EXPECT_EQ(steps[0].path, newer);
  EXPECT_THAT(steps[0].problem, HasSubstr("written by a newer canrun: schema version 99"));
  EXPECT_FALSE(steps[0].rewritten);
  EXPECT_EQ(steps[1].path, unrecorded);
  EXPECT_EQ(steps[1].from, (FileSchema{2, false}));
  EXPECT_TRUE(steps[1].rewritten);  // the version is recorded now
  EXPECT_EQ(steps[2].path, v1);
  EXPECT_EQ(steps[2].from, (FileSchema{1, false}));
  EXPECT_TRUE(steps[2].rewritten);
  EXPECT_EQ(steps[3].path, current);
  EXPECT_EQ(steps[3].from, (FileSchema{kCurrentSchemaVersion, true}));
  EXPECT_FALSE(steps[3].rewritten);
  EXPECT_TRUE(steps[3].problem.empty());

  EXPECT_EQ(*read_file(newer), newer_bytes);
  EXPECT_EQ(*read_file(current), current_bytes);
  for (const fs::path& path : {v1, unrecorded}) {
    EXPECT_EQ(*read_file_schema(path), (FileSchema{kCurrentSchemaVersion, true})) << path;
  }
  EXPECT_EQ(*read_parquet_rows(v1),
            std::vector<VerdictRow>{as_version1(judged_row("org/a", "4.57.6"))});

  // Idempotent: nothing left to rewrite.
  for (const MigrationStep& step : data().migrate()) EXPECT_FALSE(step.rewritten) << step.path;
  const auto versions = data().schema_versions();
  ASSERT_EQ(versions.size(), 4u);
  EXPECT_FALSE(versions[0].schema.has_value());
  for (std::size_t idx = 1; idx < versions.size(); ++idx) {
    EXPECT_EQ(versions[idx].schema, (FileSchema{kCurrentSchemaVersion, true}));
  }
}

}  // namespace
}  // namespace canrun::dataset
