#include "judge/judge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stop_token>
#include <thread>

#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/log.h"
#include "core/text.h"
#include "hub/local_model.h"
#include "judge/judge_files.h"
#include "process/environment.h"
#include "stack/stack.h"

namespace canrun::judge {
namespace {

namespace fs = std::filesystem;

std::string_view embedded(std::string_view name) { return judge_files().at(name); }

//! Bumped when the way features become a verdict changes, so older calibrations are not reused.
constexpr std::string_view kMethod = "logistic-pairs-cautious-v2";

//! $CANRUN_JUDGE_LABELLED, or empty.
std::string labelled_file() {
  const char* env = std::getenv(kLabelledVariable.data());
  return env == nullptr ? "" : env;
}

//! The labelled set's text: $CANRUN_JUDGE_LABELLED's file, else the embedded one.
Result<std::string> labelled_text() {
  const std::string file = labelled_file();
  if (file.empty()) return std::string(embedded("labelled"));
  auto text = read_file(file);
  if (!text.ok()) return text.error().with_context(kLabelledVariable);
  return text;
}

//! "40 s", "4 min": a duration as people read it.
std::string duration_text(double seconds) {
  if (seconds < 90) return fmt::format("{} s", static_cast<long>(std::lround(seconds)));
  return fmt::format("{} min", static_cast<long>(std::lround(seconds / 60)));
}

//! While judge.py measures, reads the progress file it rewrites after each batch and logs how
//! far it is: after the first batch, then every kProgressEvery when a batch more is done. The
//! time left is the time its batches took so far, scaled by the work left (token positions of
//! the padded batches), less the time since the file was written.
class ProgressLines {
 public:
  ProgressLines(fs::path file, std::string heading)
      : file_(std::move(file)),
        heading_(std::move(heading)),
        thread_([this](std::stop_token stop) { watch(stop); }) {}

 private:
  void watch(std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::optional<std::chrono::steady_clock::time_point> last;
    int shown = 0;  // texts done at the last line
    std::unique_lock lock(mutex);
    while (!stop.stop_requested()) {
      // Wakes when stopped (the run ended), else after a tenth of a second.
      wake.wait_for(lock, stop, std::chrono::milliseconds(100), [] { return false; });
      if (stop.stop_requested()) break;
      if (last && std::chrono::steady_clock::now() - *last < kProgressEvery) continue;
      auto text = read_file(file_);
      if (!text.ok()) continue;
      const auto record = nlohmann::json::parse(*text, nullptr, false);
      if (!record.is_object()) continue;
      const double work = record.value("work", 0.0), of_work = record.value("of_work", 0.0);
      const int texts = record.value("texts", 0), of = record.value("of", 0);
      if (work <= 0 || texts >= of || texts <= shown) continue;  // a batch more than last time
      shown = texts;
      std::error_code no_time;
      const auto written = fs::last_write_time(file_, no_time);
      const double age =
          no_time
              ? 0.0
              : std::chrono::duration<double>(fs::file_time_type::clock::now() - written).count();
      const double left =
          std::max(0.0, record.value("elapsed", 0.0) * (of_work - work) / work - age);
      log::info("{}: {}/{} texts, about {} left", heading_, texts, of, duration_text(left));
      last = std::chrono::steady_clock::now();
    }
  }

  fs::path file_;
  std::string heading_;
  std::jthread thread_;  // last: stopped and joined first
};

nlohmann::json to_json(const Tally& t) {
  return {{"texts", t.texts},
          {"fluent", t.fluent},
          {"false_pass", t.false_pass},
          {"false_fail", t.false_fail},
          {"correct", t.correct()}};
}

Tally tally_from_json(const nlohmann::json& json) {
  Tally t;
  t.texts = json.at("texts").get<int>();
  t.fluent = json.at("fluent").get<int>();
  t.false_pass = json.at("false_pass").get<int>();
  t.false_fail = json.at("false_fail").get<int>();
  return t;
}

nlohmann::json calibration_to_json(const Calibration& c) {
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& k : c.classes) {
    classes.push_back({{"class", k.name},
                       {"fluent", k.fluent},
                       {"held_out", to_json(k.held_out)},
                       {"folds", to_json(k.folds)}});
  }
  return {{"judge", c.judge},
          {"threshold", c.threshold},
          {"combination",
           {{"names", c.combination.names},
            {"mean", c.combination.mean},
            {"scale", c.combination.scale},
            {"weights", c.combination.weights},
            {"bias", c.combination.bias}}},
          {"calibrate", to_json(c.calibrate)},
          {"held_out", to_json(c.held_out)},
          {"k", c.folds},
          {"folds", to_json(c.folded)},
          {"classes", classes}};
}

std::optional<Calibration> from_json(const nlohmann::json& json) {
  try {
    Calibration c;
    c.judge = json.at("judge").get<std::string>();
    c.threshold = json.at("threshold").get<double>();
    const auto& combination = json.at("combination");
    c.combination.names = combination.at("names").get<std::vector<std::string>>();
    c.combination.mean = combination.at("mean").get<std::vector<double>>();
    c.combination.scale = combination.at("scale").get<std::vector<double>>();
    c.combination.weights = combination.at("weights").get<std::vector<double>>();
    c.combination.bias = combination.at("bias").get<double>();
    c.calibrate = tally_from_json(json.at("calibrate"));
    c.held_out = tally_from_json(json.at("held_out"));
    c.folds = json.at("k").get<int>();
    c.folded = tally_from_json(json.at("folds"));
    for (const auto& k : json.at("classes")) {
      c.classes.push_back({k.at("class").get<std::string>(), k.at("fluent").get<bool>(),
                           tally_from_json(k.at("held_out")), tally_from_json(k.at("folds"))});
    }
    const std::size_t d = c.combination.names.size();
    if (c.combination.mean.size() != d || c.combination.scale.size() != d ||
        c.combination.weights.size() != d)
      return std::nullopt;
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

//! The features of `row` in the order of `names`; nullopt when one is missing.
std::optional<std::vector<double>> in_order(const std::vector<std::string>& names,
                                            const nlohmann::json& row) {
  std::vector<double> values;
  for (const auto& name : names) {
    const auto found = row.find(name);
    if (found == row.end() || !found->is_number()) return std::nullopt;
    values.push_back(found->get<double>());
  }
  return values;
}

//! Fits on the rows where `fit` is true and returns the combination and its strict threshold.
std::pair<Combination, double> fit_on(const std::vector<std::string>& names,
                                      const std::vector<std::vector<double>>& features,
                                      const std::vector<LabelledText>& set,
                                      const std::vector<bool>& fit) {
  std::vector<std::vector<double>> x;
  std::vector<bool> y;
  for (std::size_t at = 0; at < set.size(); ++at) {
    if (!fit[at]) continue;
    x.push_back(with_pairs(features[at]));
    y.push_back(set[at].fluent);
  }
  Combination combination = fit_combination(with_pair_names(names), x, y);
  std::vector<double> scores;
  for (const auto& row : x) scores.push_back(combination.score(row));
  return {std::move(combination), cautious_threshold(scores, y)};
}

}  // namespace

Result<nlohmann::json> calibration_key(const std::string& judge,
                                       const std::string& library_version) {
  CANRUN_ASSIGN_OR_RETURN(const std::string labelled, labelled_text());
  return nlohmann::json{{"judge", judge},
                        {"library_version", library_version},
                        {"method", kMethod},
                        {"judge_py", fmt::format("{:016x}", fnv1a(embedded("judge")))},
                        {"labelled", fmt::format("{:016x}", fnv1a(labelled))}};
}

std::map<std::string, nlohmann::json> shipped_keys() {
  std::map<std::string, nlohmann::json> keys;
  for (const auto& [name, text] : judge_files()) {
    if (!name.starts_with("calibration-")) continue;
    const auto json = nlohmann::json::parse(text, nullptr, false);
    keys[std::string(name)] = json.is_object() ? json.value("key", nlohmann::json()) : nullptr;
  }
  return keys;
}

std::string calibration_stem(const nlohmann::json& key) {
  return fmt::format("calibration-{:016x}", fnv1a(key.dump()));
}

Result<std::vector<LabelledText>> labelled_set() {
  CANRUN_ASSIGN_OR_RETURN(const std::string text, labelled_text());
  const std::string origin = labelled_file().empty() ? "judge/labelled.jsonl" : labelled_file();
  std::vector<LabelledText> set;
  std::istringstream lines{text};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty()) continue;
    const auto json = nlohmann::json::parse(line, nullptr, false);
    if (!json.is_object() || !json.value("text", nlohmann::json()).is_string() ||
        !json.value("fluent", nlohmann::json()).is_boolean()) {
      return corrupt(
          fmt::format("{} line {}: not an object with a string \"text\" and a boolean \"fluent\"",
                      origin, number));
    }
    const std::string split = json.value("split", "calibrate");
    if (split != "calibrate" && split != "held_out") {
      return corrupt(fmt::format("{} line {}: \"split\" is {}, not \"calibrate\" or \"held_out\"",
                                 origin, number, quote_for_message(split)));
    }
    const bool fluent = json["fluent"].get<bool>();
    set.push_back({{json.value("prompt", ""), json["text"].get<std::string>()},
                   fluent,
                   json.value("class", fluent ? "fluent" : "not_fluent"),
                   json.value("source", ""),
                   split == "held_out"});
  }
  return set;
}

nlohmann::json to_json(const Calibration& calibration) { return calibration_to_json(calibration); }

void Tally::add(bool is_fluent, bool judged_fluent) {
  ++texts;
  fluent += is_fluent;
  false_pass += !is_fluent && judged_fluent;
  false_fail += is_fluent && !judged_fluent;
}

Calibration calibrate(const std::vector<std::string>& names,
                      const std::vector<std::vector<double>>& features,
                      const std::vector<LabelledText>& set, int folds) {
  Calibration c;
  c.folds = folds;
  std::vector<bool> fit;
  for (const auto& labelled : set) fit.push_back(!labelled.held_out);
  std::tie(c.combination, c.threshold) = fit_on(names, features, set, fit);

  std::map<std::string, std::size_t> class_at;
  for (const auto& labelled : set) {
    if (class_at.try_emplace(labelled.label_class, c.classes.size()).second)
      c.classes.push_back({labelled.label_class, labelled.fluent, {}, {}});
  }
  for (std::size_t at = 0; at < set.size(); ++at) {
    const bool judged = c.combination.score(with_pairs(features[at])) >= c.threshold;
    (set[at].held_out ? c.held_out : c.calibrate).add(set[at].fluent, judged);
    if (set[at].held_out)
      c.classes[class_at[set[at].label_class]].held_out.add(set[at].fluent, judged);
  }

  std::vector<std::string> classes;
  for (const auto& labelled : set) classes.push_back(labelled.label_class);
  const std::vector<int> fold_of = stratified_folds(classes, folds);
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<bool> others;
    for (const int f : fold_of) others.push_back(f != fold);
    const auto [combination, threshold] = fit_on(names, features, set, others);
    for (std::size_t at = 0; at < set.size(); ++at) {
      if (fold_of[at] != fold) continue;
      const bool judged = combination.score(with_pairs(features[at])) >= threshold;
      c.folded.add(set[at].fluent, judged);
      c.classes[class_at[set[at].label_class]].folds.add(set[at].fluent, judged);
    }
  }
  return c;
}

fs::path calibration_dir(const fs::path& cache_dir) {
  if (const char* env = std::getenv("CANRUN_JUDGE_CACHE"); env != nullptr && *env != '\0')
    return env;
  return cache_dir / "judge";
}

std::string judge_python() {
  if (const char* env = std::getenv("CANRUN_JUDGE_PYTHON"); env != nullptr && *env != '\0')
    return env;
  const auto venv = executable_dir().parent_path() / ".venv" / "bin" / "python";
  return fs::exists(venv) ? venv.string() : stack::default_python();
}

Result<Judge> Judge::open(Options options, process::ProcessLauncher& launcher) {
  if (options.python.empty()) options.python = judge_python();
  auto source = hub::find_local_model(options.model, "main");
  if (!source.ok()) return source.error().with_context("the judge model");
  if (options.library_version.empty()) {
    const stack::StackPython python(options.python, options.cache_dir / "stack", launcher);
    auto version = stack::probe_library_version(python);
    if (!version.ok()) return version.error().with_context("the judge's Python");
    options.library_version = *version;
  }
  Judge judge(std::move(options), launcher);
  judge.load_from_ = source->load_from;
  judge.name_ =
      source->commit ? fmt::format("{}@{}", source->model_id, *source->commit) : source->model_id;
  return judge;
}

Result<std::vector<std::vector<double>>> Judge::features(const std::vector<JudgeItem>& items,
                                                         std::vector<std::string>& names,
                                                         std::string_view progress) {
  static std::atomic<int> counter{0};
  const fs::path work =
      options_.cache_dir / "judge" / "work" / fmt::format("{}-{}", ::getpid(), counter++);
  std::error_code error;
  fs::create_directories(work, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", work.string(), error.message()));
  nlohmann::json request = {{"items", nlohmann::json::array()}};
  for (const auto& item : items)
    request["items"].push_back({{"prompt", item.prompt}, {"text", make_valid_utf8(item.text)}});
  if (!progress.empty()) request["progress"] = "progress.json";
  CANRUN_RETURN_IF_ERROR(write_file_atomically(work / "judge.py", embedded("judge")));
  CANRUN_RETURN_IF_ERROR(write_file_atomically(work / "request.json", request.dump()));

  process::ProcessSpec spec;
  spec.argv = {options_.python, "judge.py", load_from_, "request.json"};
  spec.env = process::environment_for(process::Audience::kRun);
  CANRUN_ASSIGN_OR_RETURN(const process::OwnFolders own, process::OwnFolders::make(work, spec.env));
  spec.box = process::box_if_isolated({fs::absolute(work), spec.env.at("TMPDIR")});
  spec.env["TOKENIZERS_PARALLELISM"] = "false";
  spec.cwd = work;
  // Measuring the labelled set takes minutes: a limit that grows with the texts.
  spec.timeout = std::max(options_.timeout, std::chrono::seconds(10 * items.size()));
  const auto started = std::chrono::steady_clock::now();
  auto outcome = [&] {
    std::optional<ProgressLines> lines;
    if (!progress.empty()) lines.emplace(work / "progress.json", std::string(progress));
    return launcher_->run(spec);
  }();
  fs::remove_all(work, error);
  if (!outcome.ok()) return outcome.error().with_context("the judge");
  if (outcome->timed_out || outcome->exit_code != 0) {
    return internal_error(fmt::format(
        "the judge {} failed ({}):\n{}", name_,
        outcome->timed_out
            ? fmt::format("past its time limit of {} s",
                          std::chrono::duration_cast<std::chrono::seconds>(spec.timeout).count())
            : fmt::format("exit status {}", outcome->exit_code.value_or(-1)),
        outcome->stderr_tail.substr(
            outcome->stderr_tail.size() > 4000 ? outcome->stderr_tail.size() - 4000 : 0)));
  }
  const auto answer = nlohmann::json::parse(outcome->stdout_tail, nullptr, false);
  const auto rows = answer.is_object() ? answer.value("features", nlohmann::json()) : nullptr;
  const auto bad_answer = [&] {
    return internal_error(fmt::format("the judge {} answered {} for {} texts", name_,
                                      quote_for_message(outcome->stdout_tail), items.size()));
  };
  if (!rows.is_array() || rows.size() != items.size()) return bad_answer();
  names.clear();
  if (!rows.empty() && rows.front().is_object()) {
    for (const auto& [name, value] : rows.front().items()) names.push_back(name);
  }
  std::vector<std::vector<double>> features;
  for (const auto& row : rows) {
    auto values = row.is_object() ? in_order(names, row) : std::nullopt;
    if (!values || row.size() != names.size()) return bad_answer();
    features.push_back(std::move(*values));
  }
  if (!progress.empty()) {
    log::info(
        "{}: {} texts measured in {}", progress, items.size(),
        duration_text(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
  }
  return features;
}

Result<std::string> Judge::calibration_file_name() const {
  CANRUN_ASSIGN_OR_RETURN(const nlohmann::json key,
                          calibration_key(name_, options_.library_version));
  return calibration_stem(key) + ".json";
}

std::optional<Calibration> Judge::shipped_calibration() const {
  auto key = calibration_key(name_, options_.library_version);
  if (!key.ok()) return std::nullopt;
  const auto found = judge_files().find(calibration_stem(*key));
  if (found == judge_files().end()) return std::nullopt;
  const auto json = nlohmann::json::parse(found->second, nullptr, false);
  if (!json.is_object() || json.value("key", nlohmann::json()) != *key) return std::nullopt;
  return from_json(json.value("calibration", nlohmann::json()));
}

Result<fs::path> Judge::save(const Calibration& calibration, const fs::path& folder) const {
  CANRUN_ASSIGN_OR_RETURN(const nlohmann::json key,
                          calibration_key(name_, options_.library_version));
  const fs::path path = folder / (calibration_stem(key) + ".json");
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", folder.string(), error.message()));
  const nlohmann::json stored = {{"key", key}, {"calibration", calibration_to_json(calibration)}};
  CANRUN_RETURN_IF_ERROR(write_file_atomically(path, stored.dump(1) + "\n"));
  return path;
}

Result<Judge::Found> Judge::find_calibration(bool recompute) {
  CANRUN_ASSIGN_OR_RETURN(const nlohmann::json key,
                          calibration_key(name_, options_.library_version));
  const fs::path path = calibration_dir(options_.cache_dir) / (calibration_stem(key) + ".json");
  if (!recompute) {
    if (auto text = read_file(path); text.ok()) {
      const auto json = nlohmann::json::parse(*text, nullptr, false);
      if (json.is_object() && json.value("key", nlohmann::json()) == key) {
        if (auto cached = from_json(json.value("calibration", nlohmann::json())))
          return Found{std::move(*cached), Source::kCache, path};
      }
    }
    if (auto shipped = shipped_calibration()) {
      log::debug("the judge's calibration for {} (transformers {}) is the one shipped with canrun",
                 name_, options_.library_version);
      return Found{std::move(*shipped), Source::kShipped,
                   fs::path("judge") / "calibrations" / path.filename()};
    }
  }
  CANRUN_ASSIGN_OR_RETURN(std::vector<LabelledText> set, labelled_set());
  std::vector<JudgeItem> items;
  std::size_t fitted_fluent = 0, fitted = 0;
  for (const auto& labelled : set) {
    items.push_back(labelled.item);
    fitted += !labelled.held_out;
    fitted_fluent += !labelled.held_out && labelled.fluent;
  }
  if (fitted_fluent == 0 || fitted_fluent == fitted)
    return corrupt("the labelled set needs fluent and non-fluent texts outside the held-out part");
  log::info(
      "calibrating the judge {} (transformers {}) on {} labelled texts, once per judge and stack "
      "(kept in {})",
      name_, options_.library_version, items.size(), path.parent_path().string());
  std::vector<std::string> names;
  CANRUN_ASSIGN_OR_RETURN(std::vector<std::vector<double>> features,
                          this->features(items, names, "judge calibration"));
  Calibration c = judge::calibrate(names, features, set);
  c.judge = name_;
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  const nlohmann::json stored = {
      {"key", key}, {"calibration", calibration_to_json(c)}, {"features", features}};
  if (auto saved = write_file_atomically(path, stored.dump(1)); !saved.ok())
    log::warning("{}", saved.error().message());
  return Found{std::move(c), Source::kComputed, path};
}

Result<Calibration> Judge::calibration() {
  CANRUN_ASSIGN_OR_RETURN(Found found, find_calibration());
  return std::move(found.calibration);
}

Result<std::vector<Judgement>> Judge::judge_all(const std::vector<JudgeItem>& items) {
  CANRUN_ASSIGN_OR_RETURN(Calibration calibration, this->calibration());
  std::vector<std::string> names;
  CANRUN_ASSIGN_OR_RETURN(std::vector<std::vector<double>> features, this->features(items, names));
  const Combination& combination = calibration.combination;
  if (with_pair_names(names) != combination.names && !items.empty()) {
    return internal_error(fmt::format("the judge {} measured [{}], its calibration fits [{}]",
                                      name_, fmt::join(names, ", "),
                                      fmt::join(combination.names, ", ")));
  }
  std::vector<Judgement> judgements;
  for (const auto& measured : features) {
    // Each feature's part: its own term, and half of each product it is in (all of its square).
    const std::vector<double> row = with_pairs(measured);
    std::vector<double> adds(names.size(), 0.0);
    std::size_t term = names.size();
    for (std::size_t i = 0; i < names.size(); ++i) {
      adds[i] += combination.contribution(i, row);
      for (std::size_t j = i; j < names.size(); ++j, ++term) {
        const double product = combination.contribution(term, row);
        adds[i] += product / 2;
        adds[j] += product / 2;
      }
    }
    nlohmann::json parts = {{"bias", combination.bias}};
    for (std::size_t at = 0; at < names.size(); ++at)
      parts[names[at]] = {{"value", measured[at]}, {"adds", adds[at]}};
    const double score = combination.score(row);
    judgements.push_back(
        {score, calibration.threshold, score >= calibration.threshold, name_, parts.dump()});
  }
  return judgements;
}

Result<Judgement> Judge::judge(const JudgeItem& item) {
  CANRUN_ASSIGN_OR_RETURN(std::vector<Judgement> judgements, judge_all({item}));
  return judgements.front();
}

}  // namespace canrun::judge
