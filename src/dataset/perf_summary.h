// A stack's figures as PyTorch's compiler dashboard gives a suite's (../shared/notes/facts.md):
// pass rate, geometric-mean speedup over eager (PASS rows with a baseline), median compile
// time (PASS rows) and geometric-mean memory ratio (eager peak ÷ compiled peak), with the
// dashboard's alarms; and how many PASSes drift in the long generation. `canrun dataset show`
// prints it per stack, the Space shows it above each stack's table.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! The dashboard's regression alarms: pass rate below 90 %, speedup below 0.95×, compile time
//! above 120 s, memory ratio below 0.9.
inline constexpr double kAlarmPassRate = 0.90;
inline constexpr double kAlarmSpeedup = 0.95;
inline constexpr double kAlarmCompileSeconds = 120;
inline constexpr double kAlarmMemoryRatio = 0.9;

struct PerfSummary {
  std::size_t tested = 0;  //!< rows not EXCLUDED
  std::size_t passed = 0;
  std::optional<double> pass_rate;  //!< passed ÷ tested
  std::size_t with_baseline = 0;    //!< PASS rows with a speedup
  std::optional<double> geomean_speedup;
  std::size_t with_compile_time = 0;  //!< PASS rows with compile_s
  std::optional<double> median_compile_s;
  std::size_t with_memory_ratio = 0;
  std::optional<double> geomean_memory_ratio;
  //! How the memory ratios were read (memory_measure), when every row says the same.
  std::optional<std::string> memory_measure;
  std::size_t with_long_generation = 0;  //!< PASS rows with a long_agreement
  std::size_t drifting = 0;              //!< of those, with drifts_after
  //! The dashboard's alarms that fire, in words ("speedup 0.81x < 0.95x").
  std::vector<std::string> alarms;
};

//! The summary of rows added one at a time (a stack's, a task's, those a filter keeps),
//! without copying them.
class PerfTally {
 public:
  void add(const VerdictRow& row);
  PerfSummary summary() const;

 private:
  std::size_t tested_ = 0, passed_ = 0, with_long_generation_ = 0, drifting_ = 0;
  std::vector<double> speedups_, compile_times_, memory_ratios_;
  std::vector<std::string> measures_;  //!< memory_measure of each memory ratio
};

//! The summary of `rows` (one stack's).
PerfSummary summarize_perf(const std::vector<VerdictRow>& rows);

//! One line: "pass rate 92.0 % (23/25) · speedup 1.84x geomean (20 PASS) · compile 31.2 s
//! median · memory ratio 0.71 geomean (rss) · long generation: 1 of 18 drifts".
std::string perf_summary_line(const PerfSummary& summary);

//! As JSON: the fields above, null where unknown.
nlohmann::json perf_summary_json(const PerfSummary& summary);

}  // namespace canrun::dataset
