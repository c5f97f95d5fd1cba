// canrun judge: the judge of sharded runs on its own. `calibrate` scores the labelled set with
// a judge model and prints the threshold chosen and the accuracy it gives (also each text
// judged by a threshold chosen without it); `score` judges texts given on the command line.
// Exit 0; for score, 1 when a text is not fluent; 2 when the judge cannot run.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "core/cache_dir.h"
#include "core/json_output.h"
#include "core/text.h"
#include "judge/judge.h"

namespace canrun::cli {
namespace {

struct JudgeOptions {
  judge::Judge::Options judge;
  std::string cache;
  std::string prompt;
  std::vector<std::string> texts;
  bool json = false;
};

Result<judge::Judge> open_judge(JudgeOptions& options) {
  options.judge.cache_dir =
      options.cache.empty() ? default_cache_dir() : std::filesystem::path(options.cache);
  static auto launcher = process::make_posix_launcher();
  return judge::Judge::open(options.judge, *launcher);
}

int run_calibrate(JudgeOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(judge::Judge judge, open_judge(options));
  CANRUN_ASSIGN_OR_RETURN_EXIT(judge::Calibration c, judge.calibration());
  if (options.json) {
    print_json(std::cout, {{"judge", c.judge},
                           {"threshold", c.threshold},
                           {"texts", c.texts},
                           {"fluent", c.fluent},
                           {"correct", c.correct},
                           {"accuracy", c.accuracy()},
                           {"leave_one_out_correct", c.leave_one_out_correct},
                           {"leave_one_out_accuracy", c.leave_one_out_accuracy()},
                           {"lowest_fluent", c.lowest_fluent},
                           {"highest_other", c.highest_other}});
    return kExitOk;
  }
  std::cout << fmt::format("judge          {}\n", c.judge);
  std::cout << fmt::format("labelled       {} texts, {} fluent, {} not\n", c.texts, c.fluent,
                           c.texts - c.fluent);
  std::cout << fmt::format("threshold      {:.3f} (fluent texts score at or above it)\n",
                           c.threshold);
  std::cout << fmt::format("accuracy       {}/{} ({:.1f}%)\n", c.correct, c.texts,
                           100 * c.accuracy());
  std::cout << fmt::format("leave one out  {}/{} ({:.1f}%)\n", c.leave_one_out_correct, c.texts,
                           100 * c.leave_one_out_accuracy());
  std::cout << fmt::format("margin         lowest fluent {:.3f}, highest other {:.3f}\n",
                           c.lowest_fluent, c.highest_other);
  return kExitOk;
}

int run_score(JudgeOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(judge::Judge judge, open_judge(options));
  CANRUN_ASSIGN_OR_RETURN_EXIT(judge::Calibration c, judge.calibration());
  std::vector<judge::JudgeItem> items;
  for (const auto& text : options.texts) items.push_back({options.prompt, text});
  CANRUN_ASSIGN_OR_RETURN_EXIT(std::vector<double> scores, judge.score(items));
  bool all_fluent = true;
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t at = 0; at < scores.size(); ++at) {
    const bool fluent = scores[at] >= c.threshold;
    all_fluent = all_fluent && fluent;
    out.push_back({{"text", options.texts[at]}, {"score", scores[at]}, {"fluent", fluent}});
    if (!options.json) {
      std::cout << fmt::format("{:8.3f}  {}  {}\n", scores[at],
                               fluent ? "fluent    " : "not fluent",
                               quote_for_display(options.texts[at]));
    }
  }
  if (options.json) {
    print_json(std::cout, {{"judge", c.judge}, {"threshold", c.threshold}, {"texts", out}});
  } else {
    std::cout << fmt::format("threshold {:.3f} ({})\n", c.threshold, c.judge);
  }
  return all_fluent ? kExitOk : kExitFailed;
}

void add_common(CLI::App* command, const std::shared_ptr<JudgeOptions>& options) {
  command->add_option("--judge-model", options->judge.model, "Hub id in the HF cache, or a folder")
      ->capture_default_str();
  command->add_option("--python", options->judge.python,
                      "The Python that runs the judge (default: $CANRUN_PYTHON or the venv)");
  command->add_option("--cache", options->cache,
                      "Folder for calibrations (default: $CANRUN_CACHE)");
  command->add_flag("--json", options->json, "Machine-readable output");
}

}  // namespace

void register_judge_command(const CommandRegistry& registry) {
  auto options = std::make_shared<JudgeOptions>();
  CLI::App* judge = registry.root->add_subcommand(
      "judge", "The judge model of sharded runs: its calibration, or its scores of texts");
  judge->require_subcommand(1);
  CLI::App* calibrate = judge->add_subcommand(
      "calibrate", "Score the labelled set; print the threshold and the accuracy it gives");
  add_common(calibrate, options);
  calibrate->callback(
      [registry, options] { *registry.action = [options] { return run_calibrate(*options); }; });
  CLI::App* score =
      judge->add_subcommand("score", "Judge texts: score, fluent or not (exit 1 if one is not)");
  score->add_option("TEXT", options->texts, "Texts to judge")->required();
  score->add_option("--prompt", options->prompt, "What the texts continue");
  add_common(score, options);
  score->callback(
      [registry, options] { *registry.action = [options] { return run_score(*options); }; });
}

}  // namespace canrun::cli
