#include "dataset/perf_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/json_output.h"

namespace canrun::dataset {
namespace {

//! The geometric mean of positive values, or nothing.
std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double logs = 0;
  for (const double value : values) logs += std::log(value);
  return std::exp(logs / static_cast<double>(values.size()));
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

void PerfTally::add(const VerdictRow& row) {
  if (row.result == VerdictResult::kExcluded) return;
  ++tested_;
  if (row.result != VerdictResult::kPass) return;
  ++passed_;
  if (row.speedup && *row.speedup > 0 && std::isfinite(*row.speedup)) {
    speedups_.push_back(*row.speedup);
  }
  if (row.compile_s && std::isfinite(*row.compile_s)) compile_times_.push_back(*row.compile_s);
  if (row.memory_ratio && *row.memory_ratio > 0 && std::isfinite(*row.memory_ratio)) {
    memory_ratios_.push_back(*row.memory_ratio);
    measures_.push_back(row.memory_measure.value_or(""));
  }
  if (row.long_agreement) {
    ++with_long_generation_;
    if (row.drifts_after) ++drifting_;
  }
}

PerfSummary summarize_perf(const std::vector<VerdictRow>& rows) {
  PerfTally tally;
  for (const VerdictRow& row : rows) tally.add(row);
  return tally.summary();
}

PerfSummary PerfTally::summary() const {
  PerfSummary out;
  out.tested = tested_;
  out.passed = passed_;
  out.with_long_generation = with_long_generation_;
  out.drifting = drifting_;
  if (out.tested > 0) {
    out.pass_rate = static_cast<double>(out.passed) / static_cast<double>(out.tested);
  }
  out.with_baseline = speedups_.size();
  out.geomean_speedup = geomean(speedups_);
  out.with_compile_time = compile_times_.size();
  out.median_compile_s = median(compile_times_);
  out.with_memory_ratio = memory_ratios_.size();
  out.geomean_memory_ratio = geomean(memory_ratios_);
  if (!measures_.empty() &&
      std::all_of(measures_.begin(), measures_.end(),
                  [&](const std::string& measure) { return measure == measures_.front(); })) {
    out.memory_measure = measures_.front();
  }
  if (out.pass_rate && *out.pass_rate < kAlarmPassRate) {
    out.alarms.push_back(
        fmt::format("pass rate {:.1f} % < {:.0f} %", *out.pass_rate * 100, kAlarmPassRate * 100));
  }
  if (out.geomean_speedup && *out.geomean_speedup < kAlarmSpeedup) {
    out.alarms.push_back(
        fmt::format("speedup {:.2f}x < {:.2f}x", *out.geomean_speedup, kAlarmSpeedup));
  }
  if (out.median_compile_s && *out.median_compile_s > kAlarmCompileSeconds) {
    out.alarms.push_back(
        fmt::format("compile {:.0f} s > {:.0f} s", *out.median_compile_s, kAlarmCompileSeconds));
  }
  if (out.geomean_memory_ratio && *out.geomean_memory_ratio < kAlarmMemoryRatio) {
    out.alarms.push_back(
        fmt::format("memory ratio {:.2f} < {:.1f}", *out.geomean_memory_ratio, kAlarmMemoryRatio));
  }
  return out;
}

std::string perf_summary_line(const PerfSummary& summary) {
  std::string line = summary.pass_rate
                         ? fmt::format("pass rate {:.1f} % ({}/{})", *summary.pass_rate * 100,
                                       summary.passed, summary.tested)
                         : std::string("pass rate - (nothing tested)");
  line += summary.geomean_speedup ? fmt::format(" · speedup {:.2f}x geomean ({} PASS)",
                                                *summary.geomean_speedup, summary.with_baseline)
                                  : std::string(" · speedup - (no eager baseline)");
  if (summary.median_compile_s) {
    line += fmt::format(" · compile {:.1f} s median", *summary.median_compile_s);
  }
  if (summary.geomean_memory_ratio) {
    line += fmt::format(
        " · memory ratio {:.2f} geomean{}", *summary.geomean_memory_ratio,
        summary.memory_measure ? fmt::format(" ({})", *summary.memory_measure) : std::string());
  }
  if (summary.with_long_generation > 0) {
    line += fmt::format(" · long generation: {} of {} drift{}", summary.drifting,
                        summary.with_long_generation, summary.drifting == 1 ? "s" : "");
  }
  return line;
}

nlohmann::json perf_summary_json(const PerfSummary& summary) {
  return {{"tested", summary.tested},
          {"passed", summary.passed},
          {"pass_rate", optional_json(summary.pass_rate)},
          {"with_baseline", summary.with_baseline},
          {"geomean_speedup", optional_json(summary.geomean_speedup)},
          {"with_compile_time", summary.with_compile_time},
          {"median_compile_s", optional_json(summary.median_compile_s)},
          {"with_memory_ratio", summary.with_memory_ratio},
          {"geomean_memory_ratio", optional_json(summary.geomean_memory_ratio)},
          {"memory_measure", optional_json(summary.memory_measure)},
          {"with_long_generation", summary.with_long_generation},
          {"drifting", summary.drifting},
          {"alarms", summary.alarms}};
}

}  // namespace canrun::dataset
