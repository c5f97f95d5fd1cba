#include "dataset/parquet_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "dataset/test_rows.h"

namespace canrun::dataset {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ParquetCodecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("canrun-codec-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<VerdictRow> round_trip(const std::vector<VerdictRow>& rows) {
    auto bytes = encode_parquet(rows);
    EXPECT_TRUE(bytes.ok()) << bytes.error().message();
    const fs::path path = dir_ / "rows.parquet";
    EXPECT_TRUE(write_file_atomically(path, *bytes).ok());
    auto read = read_parquet_rows(path);
    EXPECT_TRUE(read.ok()) << read.error().message();
    return read.ok() ? *read : std::vector<VerdictRow>{};
  }

  fs::path dir_;
};

TEST_F(ParquetCodecTest, EveryColumnTypeRoundTrips) {
  std::vector<VerdictRow> rows = {testing::full_row("org/a"), testing::full_row("org/b")};
  rows[0].flaky = true;  // bool, both values
  rows[1].flaky = false;
  // Version 8's: the model type and what the stack claims for it, a near-tie.
  rows[0].model_type = "qwen3";
  rows[0].claims_fullgraph = true;
  rows[0].claims_tp_plan = true;
  rows[0].claims_ep_plan = false;
  rows[1].near_tie = true;
  EXPECT_EQ(round_trip(rows), rows);
}

TEST_F(ParquetCodecTest, NullsRoundTripAsNulls) {
  std::vector<VerdictRow> rows = {testing::minimal_row("org/a", VerdictResult::kCrash),
                                  testing::full_row("org/b"),
                                  testing::minimal_row("org/c", VerdictResult::kExcluded)};
  rows[0].packages = {};
  const auto read = round_trip(rows);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read, rows);
  EXPECT_FALSE(read[0].cores.has_value());
  EXPECT_FALSE(read[0].judge_score.has_value());
  EXPECT_TRUE(read[0].packages.empty());
  EXPECT_EQ(read[2].exclusion_reason, "gated");
}

TEST_F(ParquetCodecTest, UnicodeAndBigTextRoundTrip) {
  VerdictRow row = testing::full_row();
  row.output_text = "Ünïcödé — 日本語のテキスト — emoji 😀 — RTL مرحبا";
  row.error = std::string(1 << 20, 'e');  // 1 MiB, stored as is by the codec
  row.packages = {"päckage==1.0", ""};
  const auto read = round_trip({row});
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].output_text, row.output_text);
  EXPECT_EQ(read[0].error->size(), std::size_t{1} << 20);
  EXPECT_EQ(read[0].packages, row.packages);
}

TEST_F(ParquetCodecTest, ExtremeNumbersRoundTrip) {
  VerdictRow row = testing::full_row();
  row.weights_bytes = std::numeric_limits<std::int64_t>::max();
  row.cores = std::numeric_limits<std::int32_t>::max();
  row.runtime_s = 1e-300;
  row.judge_score = 0.0;
  row.started_at = Timestamp(std::chrono::microseconds(0));
  EXPECT_EQ(round_trip({row}), std::vector<VerdictRow>{row});
}

TEST_F(ParquetCodecTest, ManyRowsAcrossRowGroups) {
  std::vector<VerdictRow> rows;
  for (int idx = 0; idx < 70'000; ++idx) {
    rows.push_back(testing::minimal_row("org/m" + std::to_string(idx),
                                        idx % 2 ? VerdictResult::kPass : VerdictResult::kFailOom));
    if (idx % 3 == 0) rows.back().cores = idx;
  }
  EXPECT_EQ(round_trip(rows), rows);
  auto counts = count_results(dir_ / "rows.parquet");
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)["PASS"], 35'000);
  EXPECT_EQ((*counts)["FAIL_OOM"], 35'000);
}

TEST_F(ParquetCodecTest, NotParquetIsCorruptWithReason) {
  const fs::path path = dir_ / "notes.parquet";
  std::ofstream(path) << "model,result\nQwen/Qwen3-0.6B,PASS\n";
  auto read = read_parquet_rows(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(read.error().message(), HasSubstr("does not start with the magic bytes PAR1"));
}

TEST_F(ParquetCodecTest, TruncatedIsCorruptWithReason) {
  auto bytes = encode_parquet(std::vector<VerdictRow>{testing::full_row()});
  ASSERT_TRUE(bytes.ok());
  const fs::path path = dir_ / "cut.parquet";
  ASSERT_TRUE(write_file_atomically(path, bytes->substr(0, bytes->size() / 2)).ok());
  auto read = read_parquet_rows(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(read.error().message(), HasSubstr("truncated"));
}

TEST_F(ParquetCodecTest, MissingFileIsAnIoError) {
  auto read = read_parquet_rows(dir_ / "absent.parquet");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kIoError);
}

}  // namespace
}  // namespace canrun::dataset
