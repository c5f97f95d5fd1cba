// How long a test is expected to take, start to finish (load, compile, generate, verify), so
// that the Scheduler can start the longest first and reserve cores for the tests it holds back.
//
// The model, in order:
// 1. History wins: the runtime_s of the latest row (by started_at) for the same model on the
//    same backend, whatever its stack or result (a TIMEOUT row's runtime is its limit).
// 2. Else a line per backend: fixed_s + per_weights_gib_s × weights GiB + per_extra_core_s ×
//    (cores − 1). Loading reads every weight and the compiled graph and its constants grow with
//    them; each rank beyond the first adds its start-up and collectives. The constants below
//    are round guesses, from neuronx-cc compiling for minutes even for a small model and tens
//    of minutes for an 8B one; a campaign's own rows replace them from its second run on.
// 3. A campaign that measures how well (an eager baseline before each compiled run, a long
//    generation after its check: trial::TrialRequest::perf, long_tokens) adds their time: the
//    line, and a runtime recorded by a run that measured neither, grow by kHowWellShare. (Their
//    memory adds nothing to plan: the eager run uses the model loaded once, in the same process,
//    before it is compiled, and the long generation the same static cache.)
// Only the order and rough size matter to the scheduler: an error in the guess delays packing,
// never correctness.
//
// Thread safety: free functions over values; RuntimeHistory is a value (const methods may be
// called from many threads, record() needs its owner's lock).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/utc_time.h"
#include "dataset/verdict_row.h"

namespace canrun::campaign {

//! expected_s = fixed_s + per_weights_gib_s × GiB + per_extra_core_s × (cores − 1).
struct TimeModel {
  double fixed_s = 0;            //!< process start, imports, a small model's compile
  double per_weights_gib_s = 0;  //!< loading, compiling and generating per GiB of weights
  double per_extra_core_s = 0;   //!< rank start-up and collectives, per core beyond the first
};

//! The line for a backend profile name: "neuron" {300, 120, 30}, "cuda" {60, 10, 15}, "cpu"
//! {30, 90, 10}; any other name gets neuron's, the slowest, so that an unknown backend's tests
//! are not started last by mistake.
TimeModel time_model_for(std::string_view backend);

//! The share of a trial's runtime the eager baseline and the long generation add. On the cpu
//! backend, bench/how_well_overhead.py finds it within noise for tiny fixtures (compile time
//! dominates), while a small real model over 3 ranks on 2 cores (the demo's SmolLM2) paid ~50 %
//! when its eager baseline generated 160 tokens; 0.2 sits between, for the scheduler's order.
inline constexpr double kHowWellShare = 0.2;

//! Runtimes of tests already run, per (model id, backend).
class RuntimeHistory {
 public:
  //! Whether the campaign's runs measure how well (their expected times grow, see above).
  void set_how_well(bool on) { how_well_ = on; }
  bool how_well() const { return how_well_; }

  //! Keeps `runtime_s` when it is finite and > 0 and `started_at` is the latest seen for the
  //! pair (at the same time: the longer runtime).
  //! `how_well`: the run measured how well (its runtime includes that time already).
  void record(std::string_view model_id, std::string_view backend, UtcTime started_at,
              double runtime_s, bool how_well = false);
  //! record() of a row that has a runtime_s; how well when it has an eager baseline (or its
  //! note) or a long generation.
  void record_row(const dataset::VerdictRow& row);
  //! record_row() for each row.
  void record_rows(const std::vector<dataset::VerdictRow>& rows);

  //! The runtime to expect (scaled as above), or nullopt when the pair was never run.
  std::optional<double> runtime_s(std::string_view model_id, std::string_view backend) const;
  std::size_t size() const { return latest_.size(); }

 private:
  struct Latest {
    UtcTime started_at;
    double runtime_s;
    bool how_well = false;
  };
  std::map<std::pair<std::string, std::string>, Latest> latest_;
  bool how_well_ = false;
};

//! What a test's expected time is computed from.
struct TestSize {
  std::string_view model_id;
  std::string_view backend;         //!< profile name, as the dataset's backend column
  std::uint64_t weights_bytes = 0;  //!< as planned (SPEC.md §5)
  int cores = 1;
};

//! Seconds `test` is expected to take: history when it has the pair, else `model`'s line.
double expected_seconds(const TestSize& test, const TimeModel& model,
                        const RuntimeHistory* history = nullptr);
//! The same with time_model_for(test.backend).
double expected_seconds(const TestSize& test, const RuntimeHistory* history = nullptr);

}  // namespace canrun::campaign
