// The judge (SPEC.md §7): after a sharded run, is the generated text fluent English? judge/judge.py
// measures a text with a small instruct model (asked whether the text is fluent: log P(yes) -
// log P(no); its likelihood of the text's new transitions) and with cheap checks that need no
// model (shares of letters, Latin letters, words, digits and whitespace; distinct tokens; the
// longest run of one token and of one character; repeated word trigrams; length). canrun combines
// them with a logistic regression fitted on the calibration part of a labelled set shipped with
// canrun (judge/labelled.jsonl, built by judge/build_labelled.py), and thresholds the combined
// score (its log-odds of fluent) so that no non-fluent text of that part passes. The held-out part
// and k folds over the whole set say how it does on texts it was not fitted on, per class.
//
// A calibration is computed once per (judge model and commit, transformers version of the judge's
// Python, judge script, labelled set, method) and kept in the cache (calibration_dir). The judge
// runs in canrun's own Python (CANRUN_JUDGE_PYTHON, else the project's .venv beside the
// executable), never the stack's, so a stack whose library cannot load the judge model is judged
// the same way. Any failure of the judge is an error of canrun, never a verdict on the backend.
//
// Thread safety: a Judge is used by one thread; several Judges may share a cache folder
// (calibrations are written atomically, and equal keys give equal contents).
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "judge/combination.h"
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
  std::string label_class;  //!< e.g. fluent_short, random_tokens
  std::string source;       //!< where the text comes from
  bool held_out = false;    //!< in the held-out part (not fitted on)
};

//! The labelled set embedded in the binary; kCorrupt names the bad line.
Result<std::vector<LabelledText>> labelled_set();

//! How a judge does on some texts: false PASS (a non-fluent text judged fluent) and false FAIL.
struct Tally {
  int texts = 0;
  int fluent = 0;
  int false_pass = 0;
  int false_fail = 0;
  int correct() const { return texts - false_pass - false_fail; }
  void add(bool fluent, bool judged_fluent);
};

//! One class of the labelled set: its texts judged by the fold that was not fitted on them.
struct ClassTally {
  std::string name;
  bool fluent = false;
  Tally held_out;  //!< by the calibration's own combination
  Tally folds;     //!< every text of the class, by the fold not fitted on it
};

struct Calibration {
  std::string judge;  //!< the judge model and its commit
  Combination combination;
  double threshold = 0;  //!< a combined score at or above it is fluent
  Tally calibrate;       //!< the fitting part, by its own fit
  Tally held_out;        //!< the held-out part
  int folds = 5;
  Tally folded;  //!< every text, by the fit of the other folds
  std::vector<ClassTally> classes;
};

struct Judgement {
  double score = 0;
  double threshold = 0;
  bool fluent = false;
  std::string judge;
  //! JSON object: each feature's value and what it added to the score, and the bias (the row's
  //! judge_parts).
  std::string parts = "{}";
};

//! Fits a calibration on labelled features: the combination and threshold from the texts not
//! held out, the held-out tally, and `folds`-fold figures over every text.
Calibration calibrate(const std::vector<std::string>& names,
                      const std::vector<std::vector<double>>& features,
                      const std::vector<LabelledText>& set, int folds = 5);

//! The calibration as JSON (what the cache keeps and `canrun judge calibrate --json` prints).
nlohmann::json to_json(const Calibration& calibration);

//! Where calibrations are kept: $CANRUN_JUDGE_CACHE, else <cache_dir>/judge.
std::filesystem::path calibration_dir(const std::filesystem::path& cache_dir);

//! canrun's own Python: $CANRUN_JUDGE_PYTHON, else the project's .venv beside the executable,
//! else stack::default_python().
std::string judge_python();

class Judge {
 public:
  struct Options {
    std::string model = std::string(kDefaultJudgeModel);  //!< Hub id in the HF cache, or folder
    std::string python;                                   //!< empty: judge_python()
    std::string library_version;  //!< transformers of that Python; empty: asked
    std::filesystem::path cache_dir;
    std::chrono::seconds timeout{900};
  };

  //! Finds the judge model (kNotFound says where it looked) and its Python's transformers.
  static Result<Judge> open(Options options, process::ProcessLauncher& launcher);

  const std::string& name() const { return name_; }

  //! What judge.py measures of each item, in order; `names` gets the features' names.
  Result<std::vector<std::vector<double>>> features(const std::vector<JudgeItem>& items,
                                                    std::vector<std::string>& names);

  //! Calibrates (when needed), then judges every item.
  Result<std::vector<Judgement>> judge_all(const std::vector<JudgeItem>& items);

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
};

}  // namespace canrun::judge
