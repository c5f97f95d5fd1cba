// canrun cache sync|stats: bring compile caches from one place to another (folders, file://
// URLs, Storage Buckets through the hf CLI), and count what a cache folder holds per compiler
// version. What an entry is, and which are copied: src/cache/cache_tree.h, sync_plan.h.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "backend/profile.h"
#include "cache/cache_tree.h"
#include "cache/sync.h"
#include "campaign/fleet.h"
#include "cli/campaign_report.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/table.h"
#include "core/cache_dir.h"
#include "core/json_output.h"
#include "core/text.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;
using cache::SyncAction;

struct CacheOptions {
  std::string source;
  std::string destination;
  bool delete_extra = false;
  bool dry_run = false;
  std::string dir;
  std::string backend = "cpu";
  std::string cache;
  std::string campaign;
  bool json = false;
};

//! The compile cache hit rate of a campaign's runs (campaign/fleet.h).
Result<CampaignHitRate> campaign_hits(const std::string& dir) {
  CANRUN_ASSIGN_OR_RETURN(auto slices, campaign::slice_states(dir));
  return hit_rate_of(slices);
}

std::string files_text(std::size_t count) {
  return fmt::format("{} file{}", count, count == 1 ? "" : "s");
}

nlohmann::json steps_json(const cache::SyncPlan& plan, SyncAction action) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& step : plan.steps) {
    if (step.action != action) continue;
    out.push_back({{"path", step.path}, {"size", step.size}, {"reason", step.reason}});
  }
  return out;
}

void print_sync(const cache::SyncPlan& plan, const CacheOptions& options) {
  if (options.json) {
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& entry : plan.skipped_entries) {
      skipped.push_back({{"entry", entry.entry},
                         {"state", cache::entry_state_name(entry.state)},
                         {"why", cache::not_complete_reason(entry.entry)}});
    }
    print_json(std::cout, {{"source", options.source},
                           {"destination", options.destination},
                           {"dry_run", options.dry_run},
                           {"copy", steps_json(plan, SyncAction::kCopy)},
                           {"copy_bytes", plan.bytes(SyncAction::kCopy)},
                           {"delete", steps_json(plan, SyncAction::kDelete)},
                           {"unchanged", plan.count(SyncAction::kSkip)},
                           {"skipped_entries", skipped}});
    return;
  }
  if (options.dry_run) {
    for (const auto& step : plan.steps) {
      if (step.action == SyncAction::kSkip) continue;
      std::cout << fmt::format("{:<6}  {}  {} ({})\n", cache::sync_action_name(step.action),
                               step.path, format_bytes(step.size), step.reason);
    }
  }
  for (const auto& entry : plan.skipped_entries) {
    std::cout << fmt::format("skip entry  {}  ({}: {})\n", entry.entry,
                             cache::entry_state_name(entry.state),
                             cache::not_complete_reason(entry.entry));
  }
  const std::size_t copies = plan.count(SyncAction::kCopy);
  const std::size_t deletes = plan.count(SyncAction::kDelete);
  std::cout << fmt::format("{}{} {} ({}), {} {}; {} unchanged; {} entr{} skipped as not complete\n",
                           options.dry_run ? "dry run, nothing changed: would " : "",
                           options.dry_run ? "copy" : "copied", files_text(copies),
                           format_bytes(plan.bytes(SyncAction::kCopy)),
                           options.dry_run ? "delete" : "deleted", files_text(deletes),
                           plan.count(SyncAction::kSkip), plan.skipped_entries.size(),
                           plan.skipped_entries.size() == 1 ? "y" : "ies");
}

int run_sync(const CacheOptions& options) {
  cache::SyncRequest request;
  CANRUN_ASSIGN_OR_RETURN_EXIT(request.source, cache::parse_location(options.source));
  CANRUN_ASSIGN_OR_RETURN_EXIT(request.destination, cache::parse_location(options.destination));
  request.delete_extra = options.delete_extra;
  request.dry_run = options.dry_run;
  const auto launcher = process::make_posix_launcher();
  CANRUN_ASSIGN_OR_RETURN_EXIT(const cache::SyncPlan plan, cache::sync_cache(request, *launcher));
  print_sync(plan, options);
  return kExitOk;
}

//! DIR, or the backend's compile caches under --cache (default: CANRUN_CACHE), or under
//! $CANRUN_COMPILE_CACHE when set.
Result<fs::path> stats_dir(const CacheOptions& options) {
  if (!options.dir.empty()) return fs::path(options.dir);
  CANRUN_ASSIGN_OR_RETURN(const backend::BackendProfile profile,
                          backend::find_profile(options.backend));
  const fs::path root = options.cache.empty() ? default_cache_dir() : fs::path(options.cache);
  return cache::backend_cache_dir(root, profile.name);
}

Result<std::vector<cache::CacheFile>> stats_files(const CacheOptions& options,
                                                  const fs::path& dir) {
  auto files = cache::list_cache_files(dir);
  if (files.ok() || !options.dir.empty()) return files;
  return files.error().with_context(fmt::format("backend {}", options.backend));
}

int run_stats(const CacheOptions& options) {
  std::optional<CampaignHitRate> hits;
  if (!options.campaign.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(hits, campaign_hits(options.campaign));
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(const fs::path dir, stats_dir(options));
  CANRUN_ASSIGN_OR_RETURN_EXIT(const auto files, stats_files(options, dir));
  const std::string root_name = fs::absolute(dir).lexically_normal().filename().string();
  const auto versions = cache::cache_stats(files, root_name);
  cache::VersionStats total;
  for (const auto& version : versions) {
    total.entries += version.entries;
    total.complete += version.complete;
    total.failed += version.failed;
    total.incomplete += version.incomplete;
    total.bytes += version.bytes;
  }
  const auto stats_json = [](const cache::VersionStats& stats) {
    return nlohmann::json{{"entries", stats.entries},
                          {"complete", stats.complete},
                          {"failed", stats.failed},
                          {"incomplete", stats.incomplete},
                          {"bytes", stats.bytes}};
  };
  if (options.json) {
    nlohmann::json out = {{"dir", dir.string()}, {"versions", nlohmann::json::array()}};
    for (const auto& version : versions) {
      nlohmann::json item = stats_json(version);
      item["version"] = version.version;
      out["versions"].push_back(std::move(item));
    }
    out["total"] = stats_json(total);
    if (hits) {
      out["campaign"] = hit_rate_json(*hits);
      out["campaign"]["dir"] = options.campaign;
    }
    print_json(std::cout, out);
    return kExitOk;
  }
  std::cout << fmt::format("compile cache {}\n", dir.string());
  if (versions.empty()) {
    std::cout << "no entries\n";
  } else {
    TextTable table({"VERSION", "ENTRIES", "COMPLETE", "FAILED", "INCOMPLETE", "SIZE"});
    const auto add = [&](const std::string& name, const cache::VersionStats& stats) {
      table.add({name, std::to_string(stats.entries), std::to_string(stats.complete),
                 std::to_string(stats.failed), std::to_string(stats.incomplete),
                 format_bytes(stats.bytes)});
    };
    for (const auto& version : versions) add(version.version, version);
    if (versions.size() > 1) add("total", total);
    table.print(std::cout);
  }
  if (hits) {
    std::cout << fmt::format("campaign {}: {}\n", options.campaign, describe_hit_rate(*hits));
  }
  return kExitOk;
}

}  // namespace

void register_cache_command(const CommandRegistry& registry) {
  auto options = std::make_shared<CacheOptions>();
  CLI::App* cache = registry.root->add_subcommand(
      "cache", "Sync compile caches between folders and Storage Buckets; count their entries");
  cache->require_subcommand(1);

  CLI::App* sync = cache->add_subcommand(
      "sync", "Copy a compile cache's complete entries from SRC to DST, only what differs");
  sync->footer(
      "A file is copied when DST lacks it, has it of another size, or older by more than 1 s\n"
      "(as `hf buckets sync` compares). Any file is an entry of its own (TorchNeuron's\n"
      "ab/cd/<hash>.neff, an inductor cache), except below a MODULE_* folder (the torch-xla\n"
      "based torch-neuronx's neuronxcc-<version>/MODULE_*), whose files make one entry, copied\n"
      "only when it holds model.done. A file named .* or *.tmp outside those is the temp file of\n"
      "a write in progress: never copied, never deleted at DST. Entries not complete are listed\n"
      "and skipped. Local copies are atomic per file and keep modification times. With a\n"
      "bucket side, `hf buckets sync SRC DST [--delete] --exclude '*.canrun-partial-*'\n"
      "--plan FILE` (huggingface_hub) makes the plan and `hf buckets sync --apply FILE`\n"
      "applies what is left of it.");
  sync->add_option("SRC", options->source,
                   "Folder, file:///PATH, or hf://buckets/<namespace>/<bucket>/<path>")
      ->required();
  sync->add_option("DST", options->destination, "Folder, file:///PATH, or hf://buckets/...")
      ->required();
  sync->add_flag("--delete", options->delete_extra,
                 "Delete files of DST that SRC lacks (never an entry SRC holds incomplete)");
  sync->add_flag("--dry-run", options->dry_run,
                 "Print what would be copied and deleted, with sizes; change nothing");
  sync->add_flag("--json", options->json, "Machine-readable output");
  sync->callback(
      [registry, options] { *registry.action = [options] { return run_sync(*options); }; });

  CLI::App* stats = cache->add_subcommand(
      "stats",
      "Entries (complete, failed, incomplete) and bytes per compiler version (each top-level "
      "folder; hash folders such as TorchNeuron's ab/cd/ count under DIR's own name) of a compile "
      "cache");
  stats->add_option("DIR", options->dir,
                    "Cache folder (default: the backend's, CACHE/compile/<backend>, or "
                    "$CANRUN_COMPILE_CACHE/<backend> when set)");
  stats->add_option("--backend,-b", options->backend, "Backend profile name or .toml path")
      ->capture_default_str();
  stats->add_option("--cache", options->cache, "canrun's cache folder (default: $CANRUN_CACHE)");
  stats->add_option("--campaign", options->campaign,
                    "Also the hit rate of this campaign's runs (its folder), by the compiler's "
                    "own count");
  stats->add_flag("--json", options->json, "Machine-readable output");
  stats->callback(
      [registry, options] { *registry.action = [options] { return run_stats(*options); }; });
}

}  // namespace canrun::cli
