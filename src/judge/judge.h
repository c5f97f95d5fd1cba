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
// A calibration is computed once per key (judge model and commit, transformers version of the
// judge's Python, judge script, labelled set, method) and kept in the cache (calibration_dir), as
// calibration-<hash of the key>.json. canrun ships the calibrations of the project's own stack
// (judge/calibrations/, embedded in the binary): one whose key matches exactly is used when the
// cache has none, so a fresh machine does not calibrate. Computing one measures the labelled set
// (minutes on a CPU), with progress lines on stderr. The judge runs in canrun's own Python
// (CANRUN_JUDGE_PYTHON, else the project's .venv beside the executable), never the stack's, so a
// stack whose library cannot load the judge model is judged the same way. Any failure of the
// judge is an error of canrun, never a verdict on the backend.
//
// Thread safety: a Judge is used by one thread; several Judges may share a cache folder
// (calibrations are written atomically, and equal keys give equal contents).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "judge/combination.h"
#include "process/process.h"

namespace canrun::judge {

inline constexpr std::string_view kDefaultJudgeModel = "HuggingFaceTB/SmolLM2-135M-Instruct";

//! How often a calibration in progress says how far it is (after its first batch of texts).
inline constexpr std::chrono::seconds kProgressEvery{15};

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

//! Names a file in judge/labelled.jsonl's format to calibrate on instead of the embedded set (a
//! small one makes calibrating fast, e.g. in tests); its calibrations have keys of their own.
inline constexpr std::string_view kLabelledVariable = "CANRUN_JUDGE_LABELLED";

//! The labelled set: $CANRUN_JUDGE_LABELLED's file when set, else the one embedded in the binary
//! (judge/labelled.jsonl). kCorrupt names the bad line; kNotFound a file that cannot be read.
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

//! The key of a calibration of `judge` (model@commit) on a Python whose transformers is
//! `library_version`, with this canrun's judge script, labelled set and method.
Result<nlohmann::json> calibration_key(const std::string& judge,
                                       const std::string& library_version);

//! "calibration-<hash of key>": the stem of its file, in the cache and in judge/calibrations/.
std::string calibration_stem(const nlohmann::json& key);

//! The calibrations shipped with canrun (judge/calibrations/): each file's stem → the key it
//! holds (null when it holds none).
std::map<std::string, nlohmann::json> shipped_keys();

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

  //! What judge.py measures of each item, in order; `names` gets the features' names. With a
  //! `progress` heading, logs (info) "<progress>: N/M texts, about T left" while it measures:
  //! after the first batch, then every kProgressEvery, the time left from the rate so far.
  Result<std::vector<std::vector<double>>> features(const std::vector<JudgeItem>& items,
                                                    std::vector<std::string>& names,
                                                    std::string_view progress = {});

  //! Calibrates (when needed), then judges every item.
  Result<std::vector<Judgement>> judge_all(const std::vector<JudgeItem>& items);

  //! Where a calibration came from.
  enum class Source {
    kCache,     //!< the cache's (computed on this machine, or shared through the cache)
    kShipped,   //!< shipped with canrun (judge/calibrations/) for this exact key
    kComputed,  //!< computed now, and kept in the cache
  };
  struct Found {
    Calibration calibration;
    Source source = Source::kComputed;
    std::filesystem::path file;  //!< the cache's file; for kShipped, judge/calibrations/<name>
  };

  //! The calibration for this judge: the cache's; else the one shipped for this exact key (used
  //! from the binary, not copied); else computed now, measuring the labelled set with progress
  //! lines (and kept in the cache). `recompute`: computed now whatever the cache holds.
  Result<Found> find_calibration(bool recompute = false);

  //! find_calibration().calibration.
  Result<Calibration> calibration();

  //! The calibration shipped with canrun for this judge's exact key, if any.
  std::optional<Calibration> shipped_calibration() const;

  //! "calibration-<hash of the key>.json": this judge's file in the cache and in
  //! judge/calibrations/ (kCorrupt when the labelled set cannot be read).
  Result<std::string> calibration_file_name() const;

  //! Writes `calibration` under this judge's key to folder/calibration_file_name(), as
  //! judge/calibrations/ ships it (the key and the calibration; not the measured features).
  Result<std::filesystem::path> save(const Calibration& calibration,
                                     const std::filesystem::path& folder) const;

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
