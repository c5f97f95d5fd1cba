// canrun dataset show|diff|causes: list the verdicts, compare two stacks, and group the
// failures of each stack by their cause. A stack is named as its file under DIR/data without
// .parquet (the STACK column of show); one the dataset lacks exits 2, listing those it has.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iostream>

#include "cli/dataset_commands.h"
#include "cli/exit_code.h"
#include "cli/table.h"
#include "core/json_output.h"
#include "core/log.h"
#include "core/model_id.h"
#include "core/text.h"
#include "core/verdict_result.h"
#include "dataset/causes.h"
#include "dataset/diff.h"
#include "dataset/perf_summary.h"
#include "dataset/row_json.h"

namespace canrun::cli {
namespace {

using dataset::DatasetDir;
using dataset::StackKey;

std::string seconds_cell(const std::optional<double>& seconds) {
  return seconds ? fmt::format("{:.1f}", *seconds) : "-";
}

//! "PASS", "EXCLUDED (gated)", or "not tested" for no row.
std::string outcome_text(const std::optional<VerdictResult>& result,
                         const std::optional<std::string>& exclusion_reason) {
  if (!result) return "not tested";
  if (*result == VerdictResult::kExcluded && exclusion_reason) {
    return fmt::format("EXCLUDED ({})", *exclusion_reason);
  }
  return std::string(to_string(*result));
}

void print_changes(std::string_view title, const std::vector<dataset::VerdictChange>& changes) {
  std::cout << fmt::format("{} ({})\n", title, changes.size());
  for (const auto& change : changes) {
    std::cout << fmt::format("  {}  {}  {} → {}\n", change.model_id, change.task,
                             outcome_text(change.from_result, change.from_exclusion_reason),
                             outcome_text(change.to_result, change.to_exclusion_reason));
  }
}

void print_measures(std::string_view title, const std::vector<dataset::MeasureChange>& changes,
                    const std::function<std::string(const dataset::MeasureChange&)>& describe) {
  std::cout << fmt::format("{} ({})\n", title, changes.size());
  for (const auto& change : changes) {
    std::cout << fmt::format("  {}  {}  {}\n", change.model_id, change.task, describe(change));
  }
}

//! Every stack file that can be read; each one that cannot is skipped with a warning.
dataset::DatasetSnapshot load_readable(const DatasetDir& data) {
  auto snapshot = data.load_all();
  for (const auto& problem : snapshot.problems) {
    log::warning("skipped {}: {}", relative_name(problem.path, data), problem.problem);
  }
  return snapshot;
}

}  // namespace

int run_dataset_show(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  if (!options.model.empty()) {
    if (auto id = ModelId::parse(options.model); !id.ok()) return report(id.error());
  }
  const std::optional<VerdictResult> only_result =
      options.result.empty() ? std::nullopt : parse_verdict_result(options.result);
  if (!options.result.empty() && !only_result) {
    return report(
        invalid_argument(fmt::format("--result {} is not a result; use one of {}",
                                     quote_for_message(options.result), verdict_result_names())));
  }
  const DatasetDir data(options.dir);
  std::optional<StackKey> stack;
  if (!options.stack.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(stack, stack_named("--stack", options.stack, data));
  }
  const auto snapshot = load_readable(data);
  nlohmann::json json_rows = nlohmann::json::array();
  TextTable table(
      {"MODEL", "TASK", "STACK", "RESULT", "CORES", "RUN S", "PEAK MEM", "SPEEDUP", "NOTE"});
  std::vector<std::pair<std::string, dataset::PerfSummary>> summaries;  // per stack shown
  for (const auto& stack_table : snapshot.stacks) {
    if (stack && stack_table.key != *stack) continue;
    dataset::PerfTally shown;
    bool any_shown = false;
    for (const auto& row : stack_table.rows) {
      if (!options.model.empty() && row.model_id != options.model) continue;
      if (only_result && row.result != *only_result) continue;
      shown.add(row);
      any_shown = true;
      if (options.json) {
        json_rows.push_back(dataset::row_to_json(row));
        continue;
      }
      std::string note = row.exclusion_reason.value_or(row.error_signature.value_or(""));
      if (row.drifts_after) note = fmt::format("drifts after token {}", *row.drifts_after);
      if (note.size() > 60) note = note.substr(0, 57) + "...";
      table.add({row.model_id, row.task, stack_table.key.stem(), std::string(to_string(row.result)),
                 row.cores ? std::to_string(*row.cores) : "-", seconds_cell(row.runtime_s),
                 row.peak_device_memory_bytes ? format_bytes(*row.peak_device_memory_bytes) : "-",
                 row.speedup ? fmt::format("{:.2f}x", *row.speedup) : "-", note});
    }
    if (any_shown) summaries.emplace_back(stack_table.key.stem(), shown.summary());
  }
  if (options.json) {
    print_json(std::cout, json_rows);
  } else if (table.size() == 0) {
    std::cout << "no rows match\n";
  } else {
    table.print(std::cout);
    // What the compiler dashboard reports per suite, per stack over the rows shown.
    std::cout << "\n";
    for (const auto& [stem, summary] : summaries) {
      std::cout << fmt::format("{}: {}\n", stem, dataset::perf_summary_line(summary));
      if (!summary.alarms.empty()) {
        std::cout << fmt::format("  alarms: {}\n", fmt::join(summary.alarms, "; "));
      }
    }
  }
  return kExitOk;
}

int run_dataset_diff(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  const DatasetDir data(options.dir);
  CANRUN_ASSIGN_OR_RETURN_EXIT(const StackKey from_key, stack_named("--from", options.from, data));
  CANRUN_ASSIGN_OR_RETURN_EXIT(const StackKey to_key, stack_named("--to", options.to, data));
  auto from = data.read_stack(from_key);
  if (!from.ok()) return report(from.error().with_context("--from"));
  auto to = data.read_stack(to_key);
  if (!to.ok()) return report(to.error().with_context("--to"));
  const auto diff = dataset::diff_stacks(*from, *to);
  if (options.json) {
    nlohmann::json out = dataset::diff_json(diff);
    out["from"] = from_key.stem();
    out["to"] = to_key.stem();
    print_json(std::cout, out);
  } else {
    std::cout << "from " << from_key.display() << "\nto   " << to_key.display() << "\n";
    print_changes("regressions", diff.regressions);
    print_changes("fixes", diff.fixes);
    print_changes("unverified, not counted as regressions", diff.unverified);
    print_changes("newly tested", diff.newly_tested);
    print_changes("no longer tested", diff.no_longer_tested);
    print_changes("other changes", diff.other_changes);
    std::cout << fmt::format("unchanged: {}\n", diff.unchanged);
    print_measures("changed plans", diff.changed_plans, [](const dataset::MeasureChange& c) {
      return fmt::format("{} core(s) {} → {} core(s) {}", c.from_cores.value_or(0),
                         c.from_parallelism.value_or("?"), c.to_cores.value_or(0),
                         c.to_parallelism.value_or("?"));
    });
    print_measures("run time changed by 20 % or more (PASS on both)", diff.run_time_changes,
                   [](const dataset::MeasureChange& c) {
                     return fmt::format("{:.1f} s → {:.1f} s", c.from_runtime_s.value_or(0),
                                        c.to_runtime_s.value_or(0));
                   });
    print_measures("peak memory changed by 20 % or more (PASS on both)", diff.memory_changes,
                   [](const dataset::MeasureChange& c) {
                     return fmt::format("{} → {}", format_bytes(c.from_memory_bytes.value_or(0)),
                                        format_bytes(c.to_memory_bytes.value_or(0)));
                   });
    print_measures("speedup over eager changed by 20 % or more (PASS on both)",
                   diff.speedup_changes, [](const dataset::MeasureChange& c) {
                     return fmt::format("{:.2f}x → {:.2f}x", c.from_speedup.value_or(0),
                                        c.to_speedup.value_or(0));
                   });
    print_measures("compile time changed by 20 % or more (PASS on both)", diff.compile_time_changes,
                   [](const dataset::MeasureChange& c) {
                     return fmt::format("{:.1f} s → {:.1f} s", c.from_compile_s.value_or(0),
                                        c.to_compile_s.value_or(0));
                   });
  }
  return diff.regressions.empty() ? kExitOk : kExitFailed;
}

int run_dataset_causes(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  const DatasetDir data(options.dir);
  // --stack: that file alone; else every stack file.
  std::vector<std::pair<StackKey, std::vector<dataset::VerdictRow>>> stacks;
  if (!options.stack.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(const StackKey only, stack_named("--stack", options.stack, data));
    auto rows = data.read_stack(only);
    if (!rows.ok()) return report(rows.error());
    stacks.emplace_back(only, std::move(*rows));
  } else {
    auto snapshot = load_readable(data);
    for (auto& stack : snapshot.stacks) stacks.emplace_back(stack.key, std::move(stack.rows));
  }
  nlohmann::json out = nlohmann::json::array();
  if (!options.json) {
    std::cout << "Each cause is one error_signature: the exception chain (\"A<B\": an A raised "
                 "while handling a B), \" | \", and the error's last line with what varies "
                 "between models replaced (N, <path>, <hash>, <model type>...); see 'canrun "
                 "dataset causes --help'.\n\n";
  }
  for (const auto& [key, rows] : stacks) {
    const auto causes = dataset::failure_causes(rows);
    std::size_t failures = 0;
    for (const auto& cause : causes) failures += cause.count;
    if (options.json) {
      nlohmann::json items = nlohmann::json::array();
      for (const auto& cause : causes) {
        items.push_back({{"signature", cause.signature},
                         {"count", cause.count},
                         {"results", cause.results},
                         {"excerpt", cause.excerpt},
                         {"models", cause.models},
                         {"model_types", cause.model_types}});
      }
      out.push_back({{"stack", key.stem()}, {"failures", failures}, {"causes", items}});
      continue;
    }
    std::cout << fmt::format("{}: {} failure{} in {} cause{}\n", key.display(), failures,
                             failures == 1 ? "" : "s", causes.size(),
                             causes.size() == 1 ? "" : "s");
    for (const auto& cause : causes) {
      std::vector<std::string> results;
      for (const auto& [result, count] : cause.results) {
        results.push_back(fmt::format("{} {}", result, count));
      }
      std::cout << fmt::format("\n  {} × {}  ({})\n", cause.count, cause.signature,
                               fmt::join(results, ", "));
      constexpr std::size_t kShown = 8;
      const std::size_t shown = std::min(kShown, cause.models.size());
      std::cout << fmt::format(
          "    models: {}{}\n",
          fmt::join(cause.models.begin(), cause.models.begin() + static_cast<long>(shown), ", "),
          cause.models.size() > shown ? fmt::format(" and {} more", cause.models.size() - shown)
                                      : "");
      if (!cause.model_types.empty()) {
        std::cout << fmt::format("    model types: {}\n", fmt::join(cause.model_types, ", "));
      }
      std::string_view rest = cause.excerpt;
      while (!rest.empty()) {
        const auto newline = rest.find('\n');
        std::cout << "    | " << rest.substr(0, newline) << '\n';
        if (newline == std::string_view::npos) break;
        rest.remove_prefix(newline + 1);
      }
    }
    std::cout << '\n';
  }
  if (options.json) print_json(std::cout, out);
  return kExitOk;
}

}  // namespace canrun::cli
