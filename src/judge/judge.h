// The judge (SPEC.md §7): after a sharded run, a small causal LM scores how fluent English the
// generated text is (judge/judge.py: its mean log-likelihood over the text's new transitions,
// less the log of the text's share of repeats), and the verdict compares the score with a
// threshold calibrated for that judge model on a labelled set shipped with canrun
// (judge/labelled.jsonl: fluent texts, and non-fluent ones, random-weight models' output among
// them). A calibration is computed once per (judge model and commit, transformers version,
// judge script, labelled set) and kept in the cache. Any failure of the judge is an error of
// canrun, never a verdict on the backend.
//
// Thread safety: a Judge is used by one thread; several Judges may share a cache folder
// (calibrations are written atomically, and equal keys give equal contents).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "process/process.h"

namespace canrun::judge {

inline constexpr std::string_view kDefaultJudgeModel = "HuggingFaceTB/SmolLM2-135M-Instruct";

struct JudgeItem {
  std::string prompt;  //!< what the text continues (the judge reads it first)
  std::string text;
};

struct LabelledText {
  JudgeItem item;
  bool fluent = false;
  std::string source;  //!< where the text comes from
};

//! The labelled set embedded in the binary; kCorrupt names the bad line.
Result<std::vector<LabelledText>> labelled_set();

struct Threshold {
  double threshold = 0;
  int correct = 0;  //!< scores on the right side: fluent at or above, the others below
};

//! The threshold that puts the most labelled scores on their side; among equals, the middle
//! of the widest gap between neighbouring scores. Needs one score of each label.
Threshold best_threshold(const std::vector<double>& scores, const std::vector<bool>& fluent);

struct Calibration {
  std::string judge;  //!< the judge model and its commit
  double threshold = 0;
  int texts = 0;
  int fluent = 0;
  int correct = 0;                //!< right at the threshold chosen on all texts
  int leave_one_out_correct = 0;  //!< each text judged by a threshold chosen without it
  double lowest_fluent = 0;       //!< the scores either side of the threshold
  double highest_other = 0;
  double accuracy() const { return texts ? static_cast<double>(correct) / texts : 0; }
  double leave_one_out_accuracy() const {
    return texts ? static_cast<double>(leave_one_out_correct) / texts : 0;
  }
};

struct Judgement {
  double score = 0;
  double threshold = 0;
  bool fluent = false;
  std::string judge;
  std::string parts = "{}";  //!< JSON object: what was combined into `score` (the row's judge_parts)
};

class Judge {
 public:
  struct Options {
    std::string model = std::string(kDefaultJudgeModel);  //!< Hub id in the HF cache, or folder
    std::string python;                                   //!< empty: stack::default_python()
    std::string library_version;  //!< transformers of that Python; empty: asked
    std::filesystem::path cache_dir;
    std::chrono::seconds timeout{900};
  };

  //! Finds the judge model (kNotFound says where it looked) and its Python's transformers.
  static Result<Judge> open(Options options, process::ProcessLauncher& launcher);

  const std::string& name() const { return name_; }

  //! One score per item, in order.
  Result<std::vector<double>> score(const std::vector<JudgeItem>& items);

  //! The calibration for this judge, from the cache or computed now (scoring the labelled set).
  Result<Calibration> calibration();

  //! Calibrates (when needed), then scores one text.
  Result<Judgement> judge(const JudgeItem& item);

 private:
  Judge(Options options, process::ProcessLauncher& launcher)
      : options_(std::move(options)), launcher_(&launcher) {}

  Options options_;
  process::ProcessLauncher* launcher_;
  std::string load_from_;
  std::string name_;
  bool offline_ = false;
};

}  // namespace canrun::judge
