// canrun test MODEL: one trial (src/trial) — plan the model on a backend, run the recipe, verify
// it (one core: the tokens against the CPU reference; sharded: the judge model), print the
// verdict, and with --out record it in the dataset. Exit 0 on PASS, 1 on any other verdict
// (EXCLUDED included), 2 when the test could not be set up or verified (bad model, backend or
// stack; a judge that failed).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/trial_options.h"
#include "core/json_output.h"
#include "core/text.h"
#include "dataset/dataset.h"
#include "dataset/row_json.h"
#include "run/script_run.h"
#include "trial/trial.h"
#include "verify/verification.h"

namespace canrun::cli {
namespace {

struct TestOptions {
  TrialOptions trial;
  std::string out;
  bool json = false;
};

std::string seconds(const std::optional<double>& value) {
  if (!value) return "-";
  return *value < 0.1 ? fmt::format("{:.1f} ms", *value * 1000) : fmt::format("{:.2f} s", *value);
}

//! The eager baseline and the long generation, when the run measured them.
void print_how_well(const dataset::VerdictRow& row) {
  if (row.eager_throughput || row.eager_note) {
    std::string line = "eager     ";
    if (row.eager_throughput) {
      line += fmt::format("{:.1f} {}", *row.eager_throughput, row.throughput_unit.value_or(""));
      if (row.eager_ttft_s) line += fmt::format(" (first token {})", seconds(row.eager_ttft_s));
      if (row.speedup) line += fmt::format(", speedup {:.2f}x compiled", *row.speedup);
    }
    if (row.eager_peak_memory_bytes) {
      line += fmt::format("{}{} peak", row.eager_throughput ? "; " : "",
                          format_bytes(*row.eager_peak_memory_bytes));
      if (row.memory_ratio) {
        line += fmt::format(", memory ratio {:.2f} (eager / compiled, {})", *row.memory_ratio,
                            row.memory_measure == "rss"
                                ? "max RSS: the compiled peak includes the eager run's"
                                : row.memory_measure.value_or("?"));
      }
    }
    if (row.eager_note)
      line += fmt::format("{}{}", row.eager_throughput ? "; " : "", *row.eager_note);
    std::cout << line << '\n';
  }
  if (row.long_tokens) {
    std::string line = fmt::format("long      {} tokens", *row.long_tokens);
    if (row.long_decode_tokens_per_s) {
      line += fmt::format(", {:.1f} tokens/s", *row.long_decode_tokens_per_s);
    }
    if (row.long_agreement) {
      line += fmt::format(", teacher-forced agreement {:.3f} with the CPU reference",
                          *row.long_agreement);
    }
    if (row.drifts_after) {
      line += fmt::format(": DRIFTS after token {} (below {:.2f})", *row.drifts_after,
                          verify::kAgreementThreshold);
    }
    std::cout << line << '\n';
  }
}

void print_verdict(const trial::TrialOutcome& outcome) {
  const dataset::VerdictRow& row = outcome.row;
  std::cout << fmt::format("{} on {} ({} {}, {} {})\n", row.model_id, row.backend, row.compiler,
                           row.compiler_version, row.library, row.library_version);
  std::string detail;
  if (row.match_tokens && row.new_tokens) {
    detail = fmt::format(" ({} of {} tokens equal to the CPU reference{})", *row.match_tokens,
                         *row.new_tokens, row.verification == "judge" ? ", for information" : "");
  }
  std::cout << fmt::format("result    {}{}\n", to_string(row.result), detail);
  if (row.exclusion_reason) std::cout << fmt::format("excluded  {}\n", *row.exclusion_reason);
  if (row.judge_score && row.judge_threshold) {
    std::cout << fmt::format("judge     score {:.3f}, threshold {:.3f} ({})\n", *row.judge_score,
                             *row.judge_threshold, row.judge_model.value_or("?"));
  }
  if (row.cores) {
    std::cout << fmt::format("cores     {} ({})\n", *row.cores, row.parallelism.value_or("none"));
  }
  if (row.runtime_s) {
    // Generation measures its tokens (throughput: decode tokens/s); the other tasks one pass over
    // their fixed inputs (sentences/s, steps/s).
    std::cout << fmt::format("time      {} in all: load {}, compile {}, {} {}",
                             seconds(row.runtime_s), seconds(row.load_s), seconds(row.compile_s),
                             row.throughput_unit == "tokens/s" ? "generate" : "run",
                             seconds(row.generate_s));
    if (row.ttft_s) std::cout << fmt::format(" (first token {})", seconds(row.ttft_s));
    if (row.throughput)
      std::cout << fmt::format(", {:.1f} {}", *row.throughput, row.throughput_unit.value_or(""));
    std::cout << '\n';
  }
  if (row.peak_device_memory_bytes) {
    std::cout << fmt::format("memory    {} peak\n", format_bytes(*row.peak_device_memory_bytes));
  }
  print_how_well(row);
  if (!row.packages.empty()) {
    std::cout << fmt::format("packages  {} (installed on top of the stack)\n",
                             fmt::join(row.packages, " "));
  }
  if (row.output_text)
    std::cout << fmt::format("output    {}\n", quote_for_display(*row.output_text));
  if (row.error) std::cout << "error\n" << *row.error << (row.error->ends_with('\n') ? "" : "\n");
  if (!outcome.run_dir.empty()) {
    std::cout << fmt::format("run.py    {}/run.py{}\n", outcome.run_dir.string(),
                             outcome.reference_reused ? "  (CPU reference reused)" : "");
  }
}

int run_test(TestOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::TrialRequest request, trial_request(options.trial));
  auto launcher = process::make_posix_launcher();
  auto outcome = trial::run_trial(request, *launcher);
  if (!outcome.ok()) return report(outcome.error());
  if (!options.out.empty()) {
    const dataset::DatasetDir data(options.out);
    if (auto status = data.upsert({outcome->row}); !status.ok()) return report(status.error());
    if (auto status = data.record_log(outcome->row, run::run_log(outcome->run_dir)); !status.ok()) {
      return report(status.error());
    }
    if (auto status = data.record_images(outcome->row, outcome->images); !status.ok()) {
      return report(status.error());
    }
  }
  if (options.json) {
    nlohmann::json out = dataset::row_to_json(outcome->row);
    out["reference_reused"] = outcome->reference_reused;
    out["run_dir"] = outcome->run_dir.string();
    out["stdout_bytes"] = outcome->stdout_bytes;
    print_json(std::cout, out);
  } else {
    print_verdict(*outcome);
  }
  return outcome->row.result == VerdictResult::kPass ? kExitOk : kExitFailed;
}

}  // namespace

void register_test_command(const CommandRegistry& registry) {
  auto options = std::make_shared<TestOptions>();
  CLI::App* test = add_trial_options(
      registry.root->add_subcommand("test",
                                    "Plan a model on a backend, run its recipe, verify it (CPU "
                                    "reference; judge model when sharded), print the verdict"),
      options->trial);
  test->add_option("--timeout", options->trial.timeout_s,
                   "Seconds each run (reference, test) may take")
      ->capture_default_str();
  test->add_option("--out", options->out, "Dataset folder to record the verdict in");
  test->add_option("--reference-backend", options->trial.request.reference_backend,
                   "Profile of the CPU reference")
      ->capture_default_str();
  test->add_option("--judge-model", options->trial.request.judge_model,
                   "Judge of sharded runs' output: Hub id in the HF cache, or a folder")
      ->capture_default_str();
  test->add_flag("--json", options->json, "The verdict row as JSON");
  test->callback(
      [registry, options] { *registry.action = [options] { return run_test(*options); }; });
}

}  // namespace canrun::cli
