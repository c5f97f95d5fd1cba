#include "dataset/perf_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dataset/test_rows.h"

namespace canrun::dataset {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

VerdictRow pass_row(std::string model, double speedup, double compile_s, double memory_ratio) {
  VerdictRow row = testing::full_row(std::move(model));
  row.speedup = speedup;
  row.compile_s = compile_s;
  row.memory_ratio = memory_ratio;
  row.memory_measure = "rss";
  row.long_agreement = 0.99;
  return row;
}

TEST(PerfSummaryTest, DashboardFiguresOverPassesAndPassRateOverTested) {
  std::vector<VerdictRow> rows = {pass_row("a/one", 2.0, 10, 0.5), pass_row("a/two", 8.0, 30, 0.8),
                                  pass_row("a/three", 1.0, 20, 0.8)};
  rows.push_back(testing::minimal_row("a/failed", VerdictResult::kFailCompile));
  rows.push_back(testing::minimal_row("a/excluded", VerdictResult::kExcluded));
  rows.back().exclusion_reason = "gated";
  rows[2].speedup.reset();  // no baseline (--no-perf): not in the speedup's mean
  rows[1].drifts_after = 70;
  const PerfSummary summary = summarize_perf(rows);
  EXPECT_EQ(summary.tested, 4u);
  EXPECT_EQ(summary.passed, 3u);
  EXPECT_DOUBLE_EQ(*summary.pass_rate, 0.75);
  EXPECT_EQ(summary.with_baseline, 2u);
  EXPECT_NEAR(*summary.geomean_speedup, 4.0, 1e-12);  // sqrt(2 × 8)
  EXPECT_DOUBLE_EQ(*summary.median_compile_s, 20);
  EXPECT_NEAR(*summary.geomean_memory_ratio, std::cbrt(0.5 * 0.8 * 0.8), 1e-12);
  EXPECT_EQ(summary.memory_measure, "rss");
  EXPECT_EQ(summary.with_long_generation, 3u);
  EXPECT_EQ(summary.drifting, 1u);
  // The dashboard's alarms: pass rate < 90 %, memory ratio < 0.9; speedup and compile are fine.
  EXPECT_THAT(summary.alarms, ElementsAre("pass rate 75.0 % < 90 %", "memory ratio 0.68 < 0.9"));
  const std::string line = perf_summary_line(summary);
  EXPECT_THAT(line, HasSubstr("pass rate 75.0 % (3/4)"));
  EXPECT_THAT(line, HasSubstr("speedup 4.00x geomean (2 PASS)"));
  EXPECT_THAT(line, HasSubstr("compile 20.0 s median"));
  EXPECT_THAT(line, HasSubstr("long generation: 1 of 3 drifts"));
  EXPECT_EQ(perf_summary_json(summary)["geomean_speedup"], 4.0);
}

TEST(PerfSummaryTest, NothingMeasuredSaysSo) {
  const PerfSummary none = summarize_perf({});
  EXPECT_FALSE(none.pass_rate.has_value());
  EXPECT_FALSE(none.geomean_speedup.has_value());
  EXPECT_THAT(perf_summary_line(none), HasSubstr("no eager baseline"));
  EXPECT_TRUE(perf_summary_json(none)["geomean_speedup"].is_null());
}

}  // namespace
}  // namespace canrun::dataset
