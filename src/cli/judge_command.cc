// canrun judge: the judge of sharded runs on its own. `calibrate` prints the judge's calibration
// (from the cache, shipped with canrun, or computed: the labelled set measured with the judge
// model, the combination and its threshold fitted) and how it does on the calibration part, the
// held-out part, k folds and per class; `--recompute` computes it anew and compares it with the
// shipped one. `score` judges texts given on the command line.
// Exit 0; for score, 1 when a text is not fluent; 2 when the judge cannot run.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>

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
  bool recompute = false;
  std::string save;
};

Result<judge::Judge> open_judge(JudgeOptions& options) {
  options.judge.cache_dir =
      options.cache.empty() ? default_cache_dir() : std::filesystem::path(options.cache);
  static auto launcher = process::make_posix_launcher();
  return judge::Judge::open(options.judge, *launcher);
}

std::string tally_line(std::string_view what, const judge::Tally& t) {
  return fmt::format("{:<16}{:>6}{:>8}{:>12}{:>12}{:>10.1f}%\n", what, t.texts, t.fluent,
                     t.false_pass, t.false_fail, t.texts ? 100.0 * t.correct() / t.texts : 0.0);
}

std::string_view source_name(judge::Judge::Source source) {
  switch (source) {
    case judge::Judge::Source::kCache:
      return "cache";
    case judge::Judge::Source::kShipped:
      return "shipped";
    case judge::Judge::Source::kComputed:
      return "computed";
  }
  return "?";
}

//! How a calibration computed now compares with the one shipped for the same key: the same
//! figures (every tally) and how far apart its numbers are (threshold, bias, weights).
nlohmann::json compare_with_shipped(const judge::Judge& judge, const judge::Calibration& c) {
  const auto shipped = judge.shipped_calibration();
  if (!shipped) return nullptr;
  const nlohmann::json a = judge::to_json(c), b = judge::to_json(*shipped);
  double largest = std::abs(c.threshold - shipped->threshold);
  bool same_terms = c.combination.names == shipped->combination.names;
  if (same_terms) {
    largest = std::max(largest, std::abs(c.combination.bias - shipped->combination.bias));
    for (std::size_t at = 0; at < c.combination.weights.size(); ++at) {
      largest =
          std::max(largest, std::abs(c.combination.weights[at] - shipped->combination.weights[at]));
    }
  }
  const bool same_figures = a.at("calibrate") == b.at("calibrate") &&
                            a.at("held_out") == b.at("held_out") &&
                            a.at("folds") == b.at("folds") && a.at("classes") == b.at("classes");
  return {{"same_terms", same_terms},
          {"same_figures", same_figures},
          {"largest_difference", largest},
          {"agrees", same_terms && same_figures && largest <= 1e-6}};
}

int run_calibrate(JudgeOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(judge::Judge judge, open_judge(options));
  CANRUN_ASSIGN_OR_RETURN_EXIT(judge::Judge::Found found,
                               judge.find_calibration(options.recompute));
  const judge::Calibration& c = found.calibration;
  const nlohmann::json shipped = options.recompute ? compare_with_shipped(judge, c) : nullptr;
  std::string saved;
  if (!options.save.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(const std::filesystem::path path, judge.save(c, options.save));
    saved = path.string();
  }
  if (options.json) {
    nlohmann::json out = judge::to_json(c);
    out["source"] = source_name(found.source);
    out["file"] = found.file.string();
    if (options.recompute) out["shipped"] = shipped;
    if (!saved.empty()) out["saved"] = saved;
    print_json(std::cout, out);
    return kExitOk;
  }
  const judge::Combination& combination = c.combination;
  std::cout << fmt::format("judge      {}\n", c.judge);
  switch (found.source) {
    case judge::Judge::Source::kCache:
      std::cout << fmt::format("source     the cache: {}\n", found.file.string());
      break;
    case judge::Judge::Source::kShipped:
      std::cout << fmt::format(
          "source     shipped with canrun: {} (--recompute computes it here)\n",
          found.file.string());
      break;
    case judge::Judge::Source::kComputed:
      std::cout << fmt::format("source     computed now, kept in {}\n", found.file.string());
      break;
  }
  if (options.recompute) {
    if (shipped.is_null()) {
      std::cout << "shipped    none for this key (judge model and commit, transformers version, "
                   "judge script, labelled set)\n";
    } else if (shipped.at("agrees").get<bool>()) {
      std::cout << fmt::format(
          "shipped    agrees: the same figures, numbers at most {:.1e} apart\n",
          shipped.at("largest_difference").get<double>());
    } else {
      std::cout << fmt::format(
          "shipped    DIFFERS: {}, numbers up to {:.3g} apart\n",
          shipped.at("same_figures").get<bool>() ? "the same figures" : "other figures",
          shipped.at("largest_difference").get<double>());
    }
  }
  if (!saved.empty()) std::cout << fmt::format("saved      {}\n", saved);
  std::cout << fmt::format(
      "method     logistic regression of {} terms (the features and their products) fitted on\n"
      "           the calibration part; the threshold weighs a false PASS {:g} false FAILs\n",
      combination.names.size(), judge::kFalsePassCost);
  std::cout << fmt::format("threshold  {:.3f} on the combined score (log-odds of fluent)\n\n",
                           c.threshold);
  std::cout << fmt::format("{:<16}{:>6}{:>8}{:>12}{:>12}{:>11}\n", "texts", "all", "fluent",
                           "false PASS", "false FAIL", "accuracy");
  std::cout << tally_line("calibration", c.calibrate) << tally_line("held out", c.held_out)
            << tally_line(fmt::format("{}-fold", c.folds), c.folded) << "\n";
  std::cout << fmt::format("{:<28}{:<12}{:>6}{:>16}{:>16}\n", "class", "label", "texts",
                           "held out wrong", fmt::format("{}-fold wrong", c.folds));
  for (const auto& k : c.classes) {
    std::cout << fmt::format(
        "{:<28}{:<12}{:>6}{:>16}{:>16}\n", k.name, k.fluent ? "fluent" : "not fluent",
        k.folds.texts,
        fmt::format("{}/{}", k.held_out.false_pass + k.held_out.false_fail, k.held_out.texts),
        fmt::format("{}/{}", k.folds.false_pass + k.folds.false_fail, k.folds.texts));
  }
  // The terms that weigh most (of standardised values), largest first.
  std::vector<std::size_t> order(combination.names.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(combination.weights[a]) > std::abs(combination.weights[b]);
  });
  std::cout << fmt::format("\nlargest weights (of standardised terms; bias {:+.3f})\n",
                           combination.bias);
  for (std::size_t at = 0; at < std::min<std::size_t>(12, order.size()); ++at) {
    std::cout << fmt::format("  {:<40}{:+.3f}\n", combination.names[order[at]],
                             combination.weights[order[at]]);
  }
  return kExitOk;
}

int run_score(JudgeOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(judge::Judge judge, open_judge(options));
  std::vector<judge::JudgeItem> items;
  for (const auto& text : options.texts) items.push_back({options.prompt, text});
  CANRUN_ASSIGN_OR_RETURN_EXIT(std::vector<judge::Judgement> judgements, judge.judge_all(items));
  bool all_fluent = true;
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t at = 0; at < judgements.size(); ++at) {
    const judge::Judgement& j = judgements[at];
    all_fluent = all_fluent && j.fluent;
    out.push_back({{"text", options.texts[at]},
                   {"score", j.score},
                   {"fluent", j.fluent},
                   {"parts", nlohmann::json::parse(j.parts)}});
    if (!options.json) {
      std::cout << fmt::format("{:8.3f}  {}  {}\n", j.score, j.fluent ? "fluent    " : "not fluent",
                               quote_for_display(options.texts[at]));
    }
  }
  const double threshold = judgements.empty() ? 0 : judgements.front().threshold;
  if (options.json) {
    print_json(std::cout, {{"judge", judge.name()}, {"threshold", threshold}, {"texts", out}});
  } else {
    std::cout << fmt::format("threshold {:.3f} ({})\n", threshold, judge.name());
  }
  return all_fluent ? kExitOk : kExitFailed;
}

void add_common(CLI::App* command, const std::shared_ptr<JudgeOptions>& options) {
  command->add_option("--judge-model", options->judge.model, "Hub id in the HF cache, or a folder")
      ->capture_default_str();
  command->add_option(
      "--python", options->judge.python,
      "The Python that runs the judge (default: $CANRUN_JUDGE_PYTHON, else canrun's .venv)");
  command->add_option("--cache", options->cache,
                      "canrun's cache; calibrations are kept in $CANRUN_JUDGE_CACHE, else its "
                      "judge/ folder (default: $CANRUN_CACHE)");
  command->add_flag("--json", options->json, "Machine-readable output");
}

}  // namespace

void register_judge_command(const CommandRegistry& registry) {
  auto options = std::make_shared<JudgeOptions>();
  CLI::App* judge = registry.root->add_subcommand(
      "judge", "The judge model of sharded runs: its calibration, or its scores of texts");
  judge->require_subcommand(1);
  CLI::App* calibrate = judge->add_subcommand(
      "calibrate",
      "The judge's calibration (the cache's, else the one shipped for this judge and stack, else "
      "fitted now on the labelled set, with progress) and its held-out, k-fold and per-class "
      "figures");
  calibrate->add_flag("--recompute", options->recompute,
                      "Measure the labelled set and fit anew (minutes), even when the cache or "
                      "canrun holds this calibration; keep it in the cache and say whether it "
                      "agrees with the one shipped for the same key");
  calibrate
      ->add_option("--save", options->save,
                   "Also write the calibration to FOLDER/calibration-<key>.json, the form "
                   "judge/calibrations/ ships")
      ->type_name("FOLDER");
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
