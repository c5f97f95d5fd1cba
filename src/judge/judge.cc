#include "judge/judge.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/text.h"
#include "judge/judge_files.h"
#include "hub/local_model.h"
#include "stack/stack.h"

namespace canrun::judge {
namespace {

namespace fs = std::filesystem;

std::string_view embedded(std::string_view name) { return judge_files().at(name); }

//! Where a calibration of this key is kept, and the key itself.
nlohmann::json calibration_key(const std::string& judge, const std::string& library_version) {
  return {{"judge", judge},
          {"library_version", library_version},
          {"judge_py", fmt::format("{:016x}", fnv1a(embedded("judge")))},
          {"labelled", fmt::format("{:016x}", fnv1a(embedded("labelled")))}};
}

nlohmann::json to_json(const Calibration& c) {
  return {{"judge", c.judge},
          {"threshold", c.threshold},
          {"texts", c.texts},
          {"fluent", c.fluent},
          {"correct", c.correct},
          {"leave_one_out_correct", c.leave_one_out_correct},
          {"lowest_fluent", c.lowest_fluent},
          {"highest_other", c.highest_other}};
}

std::optional<Calibration> from_json(const nlohmann::json& json) {
  try {
    Calibration c;
    c.judge = json.at("judge").get<std::string>();
    c.threshold = json.at("threshold").get<double>();
    c.texts = json.at("texts").get<int>();
    c.fluent = json.at("fluent").get<int>();
    c.correct = json.at("correct").get<int>();
    c.leave_one_out_correct = json.at("leave_one_out_correct").get<int>();
    c.lowest_fluent = json.at("lowest_fluent").get<double>();
    c.highest_other = json.at("highest_other").get<double>();
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

Result<std::vector<LabelledText>> labelled_set() {
  std::vector<LabelledText> set;
  std::istringstream lines{std::string(embedded("labelled"))};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty()) continue;
    const auto json = nlohmann::json::parse(line, nullptr, false);
    if (!json.is_object() || !json.value("text", nlohmann::json()).is_string() ||
        !json.value("fluent", nlohmann::json()).is_boolean()) {
      return corrupt(
          fmt::format("judge/labelled.jsonl line {}: not an object with a string "
                      "\"text\" and a boolean \"fluent\"",
                      number));
    }
    set.push_back({{json.value("prompt", ""), json["text"].get<std::string>()},
                   json["fluent"].get<bool>(),
                   json.value("source", "")});
  }
  return set;
}

Threshold best_threshold(const std::vector<double>& scores, const std::vector<bool>& fluent) {
  std::vector<double> sorted = scores;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  // Candidates: below all, between each pair of neighbours, above all.
  std::vector<std::pair<double, double>> candidates;  // threshold, gap it sits in
  candidates.emplace_back(sorted.front() - 1, 1);
  for (std::size_t at = 1; at < sorted.size(); ++at) {
    candidates.emplace_back((sorted[at - 1] + sorted[at]) / 2, sorted[at] - sorted[at - 1]);
  }
  candidates.emplace_back(sorted.back() + 1, 1);
  Threshold best{0, -1};
  double best_gap = -1;
  for (const auto& [threshold, gap] : candidates) {
    int correct = 0;
    for (std::size_t at = 0; at < scores.size(); ++at)
      correct += (scores[at] >= threshold) == fluent[at];
    if (correct > best.correct || (correct == best.correct && gap > best_gap)) {
      best = {threshold, correct};
      best_gap = gap;
    }
  }
  return best;
}

Result<Judge> Judge::open(Options options, process::ProcessLauncher& launcher) {
  if (options.python.empty()) options.python = stack::default_python();
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
  judge.offline_ = source->from_hf_cache;
  return judge;
}

Result<std::vector<double>> Judge::score(const std::vector<JudgeItem>& items) {
  static std::atomic<int> counter{0};
  const fs::path work =
      options_.cache_dir / "judge" / "work" / fmt::format("{}-{}", ::getpid(), counter++);
  std::error_code error;
  fs::create_directories(work, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", work.string(), error.message()));
  nlohmann::json request = {{"items", nlohmann::json::array()}};
  for (const auto& item : items)
    request["items"].push_back({{"prompt", item.prompt}, {"text", make_valid_utf8(item.text)}});
  CANRUN_RETURN_IF_ERROR(write_file_atomically(work / "judge.py", embedded("judge")));
  CANRUN_RETURN_IF_ERROR(write_file_atomically(work / "request.json", request.dump()));

  process::ProcessSpec spec;
  spec.argv = {options_.python, "judge.py", load_from_, "request.json"};
  spec.env = process::current_environment();
  spec.env["TOKENIZERS_PARALLELISM"] = "false";
  if (offline_) spec.env["HF_HUB_OFFLINE"] = "1";
  spec.cwd = work;
  spec.timeout = options_.timeout;
  auto outcome = launcher_->run(spec);
  fs::remove_all(work, error);
  if (!outcome.ok()) return outcome.error().with_context("the judge");
  if (outcome->timed_out || outcome->exit_code != 0) {
    return internal_error(fmt::format(
        "the judge {} failed ({}):\n{}", name_,
        outcome->timed_out ? fmt::format("past its time limit of {} s", options_.timeout.count())
                           : fmt::format("exit status {}", outcome->exit_code.value_or(-1)),
        outcome->stderr_tail.substr(
            outcome->stderr_tail.size() > 4000 ? outcome->stderr_tail.size() - 4000 : 0)));
  }
  const auto answer = nlohmann::json::parse(outcome->stdout_tail, nullptr, false);
  const auto scores = answer.is_object() ? answer.value("scores", nlohmann::json()) : nullptr;
  if (!scores.is_array() || scores.size() != items.size() ||
      !std::all_of(scores.begin(), scores.end(), [](const auto& s) { return s.is_number(); })) {
    return internal_error(fmt::format("the judge {} answered {} for {} texts", name_,
                                      quote_for_message(outcome->stdout_tail), items.size()));
  }
  return scores.get<std::vector<double>>();
}

Result<Calibration> Judge::calibration() {
  const nlohmann::json key = calibration_key(name_, options_.library_version);
  const fs::path path =
      options_.cache_dir / "judge" / fmt::format("calibration-{:016x}.json", fnv1a(key.dump()));
  if (auto text = read_file(path); text.ok()) {
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_object() && json.value("key", nlohmann::json()) == key) {
      if (auto cached = from_json(json.value("calibration", nlohmann::json()))) return *cached;
    }
  }
  CANRUN_ASSIGN_OR_RETURN(std::vector<LabelledText> set, labelled_set());
  std::vector<JudgeItem> items;
  std::vector<bool> fluent;
  for (const auto& labelled : set) {
    items.push_back(labelled.item);
    fluent.push_back(labelled.fluent);
  }
  if (std::count(fluent.begin(), fluent.end(), true) == 0 ||
      std::count(fluent.begin(), fluent.end(), false) == 0) {
    return corrupt("judge/labelled.jsonl needs fluent and non-fluent texts");
  }
  log::info("calibrating the judge {} on {} labelled texts", name_, items.size());
  CANRUN_ASSIGN_OR_RETURN(std::vector<double> scores, score(items));

  Calibration c;
  c.judge = name_;
  c.texts = static_cast<int>(scores.size());
  c.fluent = static_cast<int>(std::count(fluent.begin(), fluent.end(), true));
  const Threshold best = best_threshold(scores, fluent);
  c.threshold = best.threshold;
  c.correct = best.correct;
  c.lowest_fluent = 1e300;
  c.highest_other = -1e300;
  for (std::size_t at = 0; at < scores.size(); ++at) {
    if (fluent[at]) {
      c.lowest_fluent = std::min(c.lowest_fluent, scores[at]);
    } else {
      c.highest_other = std::max(c.highest_other, scores[at]);
    }
    std::vector<double> others = scores;
    std::vector<bool> others_fluent = fluent;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(at));
    others_fluent.erase(others_fluent.begin() + static_cast<std::ptrdiff_t>(at));
    c.leave_one_out_correct +=
        (scores[at] >= best_threshold(others, others_fluent).threshold) == fluent[at];
  }
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  const nlohmann::json stored = {{"key", key}, {"calibration", to_json(c)}, {"scores", scores}};
  if (auto saved = write_file_atomically(path, stored.dump(1)); !saved.ok())
    log::warning("{}", saved.error().message());
  return c;
}

Result<Judgement> Judge::judge(const JudgeItem& item) {
  CANRUN_ASSIGN_OR_RETURN(Calibration calibration, this->calibration());
  CANRUN_ASSIGN_OR_RETURN(std::vector<double> scores, score({item}));
  return Judgement{scores.front(), calibration.threshold, scores.front() >= calibration.threshold,
                   name_};
}

}  // namespace canrun::judge
