// canrun worker: one slice of a fleet campaign on this node (campaign/fleet.h), as each Slurm
// array task or Kubernetes index runs it, sharing the compiled graphs with the other nodes
// through the campaign's compile cache.
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>

#include "cache/cache_tree.h"
#include "cache/sync.h"
#include "campaign/campaign_dir.h"
#include "campaign/executors.h"
#include "campaign/fleet.h"
#include "cli/campaign_progress.h"
#include "cli/campaign_report.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/stop_signals.h"
#include "core/log.h"
#include "core/text.h"
#include "process/process.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

struct WorkerOptions {
  std::string campaign_dir;
  int index = -1;
  std::string python;
  std::string cache;
  bool json = false;
};

//! A fleet campaign's shared compile cache for its compiler version, and this node's copy.
struct SharedCompileCache {
  cache::CacheLocation remote;
  cache::CacheLocation local;
};

Result<std::optional<SharedCompileCache>> shared_compile_cache(
    const campaign::CampaignOptions& campaign) {
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings,
                          campaign::CampaignDir(campaign.dir).read_settings());
  const auto executor = settings.value("executor", nlohmann::json::object());
  if (!executor.is_object() || !executor.contains("compile_cache")) {
    return std::optional<SharedCompileCache>();
  }
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial::trial_profile(campaign.trial));
  const std::string version = settings.value("compiler_version", "");
  const std::string name = cache::compiler_cache_name(profile.compiler, version);
  CANRUN_ASSIGN_OR_RETURN(
      cache::CacheLocation remote,
      cache::parse_location(executor["compile_cache"].get<std::string>() + "/" + name));
  CANRUN_ASSIGN_OR_RETURN(
      cache::CacheLocation local,
      cache::parse_location(cache::compiler_cache_dir(trial::absolute_cache_dir(campaign.trial),
                                                      profile.name, profile.compiler, version)
                                .string()));
  return std::optional(SharedCompileCache{std::move(remote), std::move(local)});
}

//! Brings the complete entries `from` lacks in `to` (never deleting); a source that does not
//! exist yet (no node compiled anything) is nothing to bring.
Status sync_compile_cache(const cache::CacheLocation& from, const cache::CacheLocation& to,
                          process::ProcessLauncher& launcher) {
  if (!from.is_bucket() && !fs::exists(from.local)) return ok_status();
  if (!to.is_bucket()) fs::create_directories(to.local);
  CANRUN_ASSIGN_OR_RETURN(cache::SyncPlan plan,
                          cache::sync_cache({from, to, false, false}, launcher));
  log::info("compile cache: {} file(s), {} copied from {} to {}",
            plan.count(cache::SyncAction::kCopy),
            format_bytes(plan.bytes(cache::SyncAction::kCopy)), from.text, to.text);
  return ok_status();
}

//! The executors' slice variables, "$A or $B", for messages and --help.
std::string index_variables() {
  std::string names;
  for (const campaign::Executor* executor : campaign::executors()) {
    if (executor->index_variable().empty()) continue;
    names += fmt::format("{}${}", names.empty() ? "" : " or ", executor->index_variable());
  }
  return names;
}

//! The slice a scheduler gave this worker: the first executor's slice variable that is set.
Result<int> slice_from_environment() {
  for (const campaign::Executor* executor : campaign::executors()) {
    const std::string variable(executor->index_variable());
    const char* value = variable.empty() ? nullptr : std::getenv(variable.c_str());
    if (value == nullptr || *value == '\0') continue;
    const std::string_view text(value);
    int index = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
    if (error != std::errc() || end != text.data() + text.size() || index < 0) {
      return invalid_argument(
          fmt::format("{}={} is not a slice index (0, 1, ...)", variable, quote_for_message(text)));
    }
    return index;
  }
  return invalid_argument("--index is required (or " + index_variables() + " in the environment)");
}

int run_worker_command(const WorkerOptions& options) {
  int index = options.index;
  if (index < 0) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(index, slice_from_environment());
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      campaign::CampaignOptions campaign,
      campaign::worker_options(options.campaign_dir, options.python, options.cache));
  auto launcher = process::make_posix_launcher();
  ProgressDisplay progress(options.json);
  StopSignals stop;  // Slurm and Kubernetes stop a task with SIGTERM
  CANRUN_ASSIGN_OR_RETURN_EXIT(const auto shared, shared_compile_cache(campaign));
  if (shared) {  // the graphs any node compiled before, for this compiler version
    if (auto pulled = sync_compile_cache(shared->remote, shared->local, *launcher); !pulled.ok()) {
      return report(pulled.error());
    }
  }
  auto outcome = campaign::run_worker(campaign, index, *launcher, progress, stop.requested());
  stop.restore();
  progress.clear();
  if (shared) {  // what this node compiled, for the others (also after a failure)
    if (auto pushed = sync_compile_cache(shared->local, shared->remote, *launcher); !pushed.ok()) {
      return report(pushed.error());
    }
  }
  if (!outcome.ok()) return report(outcome.error());
  return print_outcome(*outcome, campaign.dir, options.json);
}

}  // namespace

void register_worker_command(const CommandRegistry& registry) {
  auto options = std::make_shared<WorkerOptions>();
  CLI::App* command = registry.root->add_subcommand(
      "worker",
      "Run one slice of a fleet campaign on this node (what each Slurm array task or Kubernetes "
      "index runs); idempotent: a requeued worker continues its slice");
  command->add_option("--campaign-dir", options->campaign_dir, "The fleet campaign's folder")
      ->required();
  command->add_option("--index", options->index, "The slice (default: " + index_variables() + ")");
  command->add_option("--python", options->python,
                      "This node's stack Python (default: $CANRUN_PYTHON or the venv)");
  command->add_option("--cache", options->cache,
                      "This node's cache folder (default: $CANRUN_CACHE)");
  command->add_flag("--json", options->json, "Machine-readable output");
  command->callback([registry, options] {
    *registry.action = [options] { return run_worker_command(*options); };
  });
}

}  // namespace canrun::cli
