// canrun hub rankings|info|select: the Hub catalog — rankings per task (with their snapshot
// on disk), one model's facts from its safetensors headers, and the candidate list.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "catalog/exclusions.h"
#include "catalog/selected_list.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/table.h"
#include "core/cache_dir.h"
#include "core/json_output.h"
#include "core/log.h"
#include "core/model_id.h"
#include "core/text.h"
#include "hub/candidates.h"
#include "hub/facts_reader.h"
#include "hub/hf_cache.h"
#include "hub/hub_client.h"
#include "hub/rankings.h"
#include "process/process.h"
#include "stack/architectures.h"
#include "trial/checkpoint.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;
using hub::RankingsSnapshot;

struct HubOptions {
  std::string task;
  std::string sort = "downloads";
  std::size_t limit = 50;
  std::string out;
  bool json = false;
  std::string model;
  std::string revision = "main";
  std::string folder;
  bool tensors = false;
  std::size_t top = 20;
  std::string selected_file;    //!< empty: the shipped catalog's
  std::string exclusions_file;  //!< empty: the shipped catalog's
  std::string python;
};

Result<hub::HubClient> make_client() {
  CANRUN_ASSIGN_OR_RETURN(hub::HubConfig config, hub::HubConfig::from_environment());
  return hub::HubClient(std::move(config),
                        hub::make_curl_transport(hub::default_transport_options()));
}

//! --out, else default_rankings_dir().
fs::path rankings_dir(const std::string& out) {
  return out.empty() ? default_rankings_dir() : fs::path(out);
}

void print_rankings(const RankingsSnapshot& snapshot, std::string_view source,
                    std::chrono::seconds age, bool json) {
  if (json) {
    auto out = hub::snapshot_to_json(snapshot);
    out["source"] = source;
    out["age_seconds"] = age.count();
    print_json(std::cout, out);
    return;
  }
  std::cout << fmt::format("{} by {}: {} models from {}, fetched {}{}\n", snapshot.task,
                           hub::ranking_sort_name(snapshot.sort), snapshot.models.size(),
                           snapshot.endpoint, snapshot.fetched_at,
                           source == "hub" ? ""
                                           : fmt::format(" (snapshot, {} old: the Hub could not "
                                                         "be reached)",
                                                         hub::describe_age(age)));
  TextTable table({"RANK", "MODEL", "DOWNLOADS", "LIKES", "TRENDING", "LIBRARY", "GATED"});
  for (std::size_t idx = 0; idx < snapshot.models.size(); ++idx) {
    const auto& model = snapshot.models[idx];
    table.add({std::to_string(idx + 1), model.id, std::to_string(model.downloads),
               std::to_string(model.likes), fmt::format("{:g}", model.trending_score),
               model.library_name.value_or("-"), model.gated.empty() ? "no" : model.gated});
  }
  table.print(std::cout);
}

int run_rankings(const HubOptions& options) {
  if (auto status = hub::check_task_name(options.task); !status.ok()) {
    return report(status.error().with_context("--task"));
  }
  auto sort = hub::parse_ranking_sort(options.sort);
  if (!sort.ok()) return report(sort.error().with_context("--sort"));
  if (options.limit == 0) return report(invalid_argument("--limit must be at least 1"));
  const fs::path dir = rankings_dir(options.out);
  auto client = make_client();
  if (!client.ok()) return report(client.error());
  auto rankings = hub::current_rankings(*client, dir, options.task, *sort, options.limit,
                                        std::chrono::system_clock::now());
  if (!rankings.ok()) return report(rankings.error());
  if (rankings->from_hub) {
    log::info("wrote {}", hub::snapshot_path(dir, options.task, *sort).string());
  } else {
    log::warning("{}; using the snapshot {} fetched at {} ({} old)", rankings->hub_error,
                 hub::snapshot_path(dir, options.task, *sort).string(),
                 rankings->snapshot.fetched_at, hub::describe_age(rankings->age));
  }
  print_rankings(rankings->snapshot, rankings->from_hub ? "hub" : "snapshot", rankings->age,
                 options.json);
  return kExitOk;
}

void print_facts(const hub::ModelFacts& facts) {
  const auto join = [](const auto& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + fmt::format("{}", item);
    return out.empty() ? std::string("-") : out;
  };
  const auto count = [](const std::optional<std::int64_t>& value) {
    return value ? std::to_string(*value) : std::string("-");
  };
  std::cout << fmt::format("model          {}\n", facts.model_id.empty() ? "-" : facts.model_id);
  std::cout << fmt::format("revision       {}{}\n", facts.revision.empty() ? "-" : facts.revision,
                           facts.sha.empty() ? "" : " (" + facts.sha + ")");
  std::cout << fmt::format("task           {}\n", facts.pipeline_tag.value_or("-"));
  std::cout << fmt::format("library        {}\n", facts.library_name.value_or("-"));
  std::cout << fmt::format("gated          {}\n", facts.gated.empty() ? "no" : facts.gated);
  std::cout << fmt::format("architectures  {}\n", join(facts.architectures));
  std::cout << fmt::format("model type     {}\n", facts.model_type.value_or("-"));
  std::cout << fmt::format("remote code    {}\n",
                           facts.auto_map.empty() ? "no" : "yes (auto_map in config)");
  std::cout << fmt::format("heads          {} attention, {} key/value\n",
                           count(facts.num_attention_heads), count(facts.num_key_value_heads));
  std::cout << fmt::format("experts        {}\n", count(facts.num_experts));
  std::cout << fmt::format("weights        {} ({} bytes, {} tensors, read from {})\n",
                           format_bytes(static_cast<std::int64_t>(facts.weights_bytes)),
                           facts.weights_bytes, facts.tensors.size(), facts.weights_source);
  for (const auto& [dtype, bytes] : facts.weights_bytes_by_dtype) {
    std::cout << fmt::format("  {:<12} {} bytes\n", dtype, bytes);
  }
  std::cout << fmt::format("  experts      {} bytes\n  non-experts  {} bytes\n",
                           facts.expert_weights_bytes, facts.non_expert_weights_bytes);
  std::cout << fmt::format("files          {}\n", facts.files.size());
}

int run_info(const HubOptions& options) {
  // MODEL as every command takes it (src/trial/checkpoint.h); --folder reads a folder under
  // the Hub id MODEL names.
  std::optional<ModelId> folder_id;
  if (!options.folder.empty()) {
    auto id = ModelId::parse(options.model);
    if (!id.ok()) return report(id.error().with_context("MODEL"));
    folder_id = *id;
  }
  const std::string model = options.folder.empty() ? options.model : options.folder;
  if (options.folder.empty() && !trial::is_folder(model)) {
    if (auto id = ModelId::parse(model); !id.ok()) return report(id.error().with_context("MODEL"));
  }
  if (auto revision = Revision::parse(options.revision); !revision.ok()) {
    return report(revision.error().with_context("--revision"));
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::Checkpoint checkpoint,
                               trial::resolve_checkpoint({model, options.revision, folder_id}));
  if (checkpoint.no_safetensors) {
    return report(checkpoint.no_safetensors->with_context(checkpoint.model_id));
  }
  if (options.json) {
    print_json(std::cout, hub::facts_to_json(checkpoint.facts, options.tensors));
  } else {
    print_facts(checkpoint.facts);
  }
  return kExitOk;
}

std::string candidate_source(const hub::Candidate& candidate) {
  if (candidate.selected && candidate.rank)
    return fmt::format("selected, ranked #{}", *candidate.rank);
  if (candidate.selected) return "selected";
  return fmt::format("ranked #{}", *candidate.rank);
}

int run_select(const HubOptions& options) {
  if (auto status = hub::check_task_name(options.task); !status.ok()) {
    return report(status.error().with_context("--task"));
  }
  auto sort = hub::parse_ranking_sort(options.sort);
  if (!sort.ok()) return report(sort.error().with_context("--sort"));
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      const fs::path selected_file,
      given_or_shipped("--selected", options.selected_file, "catalog", "selected.toml"));
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      const fs::path exclusions_file,
      given_or_shipped("--exclusions", options.exclusions_file, "catalog", "exclusions.toml"));
  auto selected = catalog::SelectedList::load(selected_file);
  if (!selected.ok()) return report(selected.error());
  auto exclusions = catalog::Exclusions::load(exclusions_file);
  if (!exclusions.ok()) return report(exclusions.error());
  auto client = make_client();
  if (!client.ok()) return report(client.error());

  hub::CandidateInputs inputs{options.task, &*selected, &*exclusions, {}};
  std::string rankings_line = "no ranking asked (--top 0)";
  if (options.top > 0) {
    const fs::path dir = rankings_dir(options.out);
    auto rankings = hub::current_rankings(*client, dir, options.task, *sort, options.top,
                                          std::chrono::system_clock::now());
    if (!rankings.ok()) return report(rankings.error());
    if (!rankings->from_hub) {
      log::warning("{}; using the snapshot fetched at {} ({} old)", rankings->hub_error,
                   rankings->snapshot.fetched_at, hub::describe_age(rankings->age));
    }
    rankings_line = fmt::format(
        "top {} by {} {}", rankings->snapshot.models.size(), hub::ranking_sort_name(*sort),
        rankings->from_hub
            ? "from the Hub"
            : fmt::format("from the snapshot ({} old)", hub::describe_age(rankings->age)));
    inputs.ranked = std::move(rankings->snapshot.models);
  }
  const auto launcher = process::make_posix_launcher();
  const stack::StackPython python(options.python, default_cache_dir() / "stack", *launcher);
  stack::TransformersArchitectures probe(python);
  const auto lookup = [&](const ModelId& id) -> Result<hub::ModelFacts> {
    CANRUN_ASSIGN_OR_RETURN(hub::ModelFacts facts,
                            hub::fetch_model_info(*client, id, Revision::main_branch()));
    // A pipeline's components are named in its model_index.json, one small file.
    hub::HubCheckpointFiles files(*client, id, facts.sha.empty() ? "main" : facts.sha);
    CANRUN_RETURN_IF_ERROR(hub::apply_pipeline_index(files, facts));
    return facts;
  };
  auto candidates = hub::select_candidates(inputs, lookup, probe);
  if (!candidates.ok()) return report(candidates.error());

  bool problems = false;
  for (const auto& candidate : *candidates) problems |= !candidate.problem.empty();
  if (options.json) {
    nlohmann::json out = {{"task", options.task},
                          {"sort", hub::ranking_sort_name(*sort)},
                          {"candidates", nlohmann::json::array()}};
    for (const auto& candidate : *candidates) {
      out["candidates"].push_back(hub::candidate_to_json(candidate));
    }
    print_json(std::cout, out);
    return problems ? kExitFailed : kExitOk;
  }
  std::size_t excluded = 0;
  TextTable table({"MODEL", "SOURCE", "STATUS", "WHY"});
  for (const auto& candidate : *candidates) {
    std::string status = "candidate";
    std::string why = candidate.note;
    if (!candidate.problem.empty()) {
      status = "unknown";
      why = candidate.problem;
    } else if (candidate.exclusion) {
      ++excluded;
      status = fmt::format("excluded: {} ({})", candidate.exclusion->reason,
                           candidate.exclusion->curated ? "curated" : "automatic");
      why = candidate.exclusion->why;
    }
    if (candidate.facts_from == "ranking") why += " [model info not reached; from the ranking]";
    if (candidate.facts_from == "none") why += " [not checked: the Hub was not reached]";
    table.add({candidate.id, candidate_source(candidate), status, why});
  }
  std::cout << fmt::format("{}: {} selected + {}: {} models, {} excluded, {} to test\n",
                           options.task, selected->for_task(options.task).size(), rankings_line,
                           candidates->size(), excluded, candidates->size() - excluded);
  table.print(std::cout);
  return problems ? kExitFailed : kExitOk;
}

}  // namespace

void register_hub_command(const CommandRegistry& registry) {
  auto options = std::make_shared<HubOptions>();
  CLI::App* hub = registry.root->add_subcommand(
      "hub", "The Hub catalog: rankings per task, model facts, the candidate list");
  hub->require_subcommand(1);

  CLI::App* rankings = hub->add_subcommand(
      "rankings",
      "The Hub's ranking of one task; writes DIR/<task>__<sort>.json, and falls back on it "
      "(saying its age) when the Hub cannot be reached");
  rankings->add_option("--task", options->task, "Hub pipeline tag, e.g. text-generation")
      ->required();
  rankings->add_option("--sort", options->sort, "downloads or trending")
      ->check(CLI::IsMember({"downloads", "trending"}));
  rankings->add_option("--limit", options->limit, "How many models (default 50)");
  rankings->add_option("--out", options->out,
                       "Snapshot folder (default $CANRUN_RANKINGS_DIR, else "
                       "rankings/ in $CANRUN_CACHE, $XDG_CACHE_HOME/canrun or ~/.cache/canrun)");
  rankings->add_flag("--json", options->json, "The snapshot as JSON, with source and age");
  rankings->callback(
      [registry, options] { *registry.action = [options] { return run_rankings(*options); }; });

  CLI::App* info = hub->add_subcommand(
      "info",
      "One model's facts: commit, config, and weights bytes from its safetensors headers "
      "(range requests; never the weights)");
  info->add_option("MODEL", options->model, "Hub id (namespace/name), or a local checkpoint folder")
      ->required();
  info->add_option("--revision", options->revision, "Branch, tag or commit (default main)");
  info->add_option("--folder", options->folder,
                   "Read this local checkpoint folder as the Hub id MODEL");
  info->add_flag("--json", options->json, "Machine-readable output");
  info->add_flag("--tensors", options->tensors, "With --json: every tensor's dtype and shape");
  info->callback(
      [registry, options] { *registry.action = [options] { return run_info(*options); }; });

  CLI::App* select = hub->add_subcommand(
      "select",
      "The candidates of one task: the curated list, then the top N of the ranking; each "
      "selected/ranked, and excluded with its reason (curated rules, then gated, remote code, "
      "no safetensors, unsupported task)");
  select->add_option("--task", options->task, "Hub pipeline tag, e.g. text-generation")->required();
  select->add_option("--top", options->top, "How many ranked models (default 20; 0: none)");
  select->add_option("--sort", options->sort, "Ranking: downloads or trending")
      ->check(CLI::IsMember({"downloads", "trending"}));
  select->add_option("--selected", options->selected_file,
                     "Curated list (default: the shipped catalog/selected.toml, wherever canrun "
                     "is started)");
  select->add_option("--exclusions", options->exclusions_file,
                     "Curated exclusions (default: the shipped catalog/exclusions.toml)");
  select->add_option("--python", options->python,
                     "The stack's Python, asked which architectures its transformers has "
                     "(default $CANRUN_PYTHON, else the project venv, else python3)");
  select->add_option("--out", options->out, "Rankings snapshot folder (as for rankings)");
  select->add_flag("--json", options->json, "Machine-readable output");
  select->callback(
      [registry, options] { *registry.action = [options] { return run_select(*options); }; });
}

}  // namespace canrun::cli
