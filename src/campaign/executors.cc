#include "campaign/executors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

//! `text` as one word of POSIX shell: single-quoted, each ' written '\''.
std::string shell_word(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::size_t parallel_of(const FleetPlan& plan, const ExecutorOptions& options) {
  const std::size_t slices = plan.slices.size();
  return options.parallel == 0 ? slices : std::min(options.parallel, slices);
}

}  // namespace

NodeKind node_kind(const backend::BackendProfile& profile) {
  const int devices = profile.topology.devices;
  if (profile.torch_device == "neuron") return {"aws.amazon.com/neuron", devices, "trn2.48xlarge"};
  if (profile.torch_device == "cuda") return {"nvidia.com/gpu", devices, ""};
  return {};
}

int slurm_time_limit_minutes(double seconds) {
  return static_cast<int>(std::ceil((2 * std::max(0.0, seconds) + 30 * 60) / 60));
}

std::map<std::string, std::string> slurm_files(const FleetPlan& plan,
                                               const ExecutorOptions& options) {
  const double longest =
      plan.slice_expected_s.empty()
          ? 0
          : *std::max_element(plan.slice_expected_s.begin(), plan.slice_expected_s.end());
  const std::string dir = shell_word(options.campaign_dir.string());
  const std::string logs = (options.campaign_dir / "slurm").string();
  std::map<std::string, std::string> files;
  files["worker.sbatch"] = fmt::format(
      "#!/bin/bash\n"
      "# One slice of canrun campaign {dir} per array task (canrun worker is idempotent: a\n"
      "# requeued task continues its slice, a duplicate is refused).\n"
      "#SBATCH --job-name={name}\n"
      "#SBATCH --nodes=1\n"
      "#SBATCH --exclusive\n"
      "#SBATCH --requeue\n"
      "#SBATCH --time={minutes}\n"
      "#SBATCH --output={logs}/worker-%A_%a.out\n"
      "exec {canrun} worker --campaign-dir {dir} --index \"$SLURM_ARRAY_TASK_ID\"\n",
      fmt::arg("dir", dir), fmt::arg("name", options.name),
      fmt::arg("minutes", slurm_time_limit_minutes(longest)), fmt::arg("logs", logs),
      fmt::arg("canrun", shell_word(options.canrun)));
  files["collect.sbatch"] = fmt::format(
      "#!/bin/bash\n"
      "# Merges every finished slice of canrun campaign {dir} into the dataset; a slice that\n"
      "# did not finish is reported and left out (run this again after requeueing it).\n"
      "#SBATCH --job-name={name}-collect\n"
      "#SBATCH --nodes=1\n"
      "#SBATCH --time=60\n"
      "#SBATCH --output={logs}/collect-%j.out\n"
      "exec {canrun} campaign --collect {dir} --out {out}\n",
      fmt::arg("dir", dir), fmt::arg("name", options.name), fmt::arg("logs", logs),
      fmt::arg("canrun", shell_word(options.canrun)),
      fmt::arg("out", shell_word(options.out.string())));
  files["submit.sh"] = fmt::format(
      "#!/bin/sh\n"
      "# Submits canrun campaign {dir}: {slices} slices, at most {parallel} at once, then the\n"
      "# collect job once every slice ended.\n"
      "set -e\n"
      "here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
      "array=$(sbatch --parsable --array=0-{last}%{parallel} \"$here/worker.sbatch\")\n"
      "array=${{array%%;*}}\n"
      "collect=$(sbatch --parsable --dependency=afterany:\"$array\" \"$here/collect.sbatch\")\n"
      "echo \"job array $array (worker.sbatch), collect job ${{collect%%;*}} (collect.sbatch)\"\n",
      fmt::arg("dir", dir), fmt::arg("slices", plan.slices.size()),
      fmt::arg("parallel", parallel_of(plan, options)), fmt::arg("last", plan.slices.size() - 1));
  return files;
}

std::map<std::string, std::string> kubernetes_files(const FleetPlan& plan,
                                                    const backend::BackendProfile& profile,
                                                    const ExecutorOptions& options) {
  NodeKind kind = node_kind(profile);
  if (!options.resource.empty()) kind.resource = options.resource;
  if (options.resource_count > 0) kind.count = options.resource_count;
  if (!options.instance_type.empty()) kind.instance_type = options.instance_type;
  const std::string dir = options.mount + "/" + options.campaign_dir.filename().string();
  const json volume = {{"name", "campaign"},
                       {"persistentVolumeClaim", {{"claimName", options.volume_claim}}}};
  const json mount = {{"name", "campaign"}, {"mountPath", options.mount}};
  json resources = json::object();
  if (!kind.resource.empty()) {
    resources = {{"limits", {{kind.resource, kind.count}}},
                 {"requests", {{kind.resource, kind.count}}}};
  }
  json pod = {{"restartPolicy", "Never"}, {"volumes", json::array({volume})}};
  // The container can gain nothing: no privilege escalation, no capability, the runtime's
  // seccomp profile. Inside it, canrun boxes each run as far as that leaves room (README,
  // "Isolation"; a runtime whose profile refuses user namespaces leaves none: rows say so).
  const json restricted = {{"allowPrivilegeEscalation", false},
                           {"capabilities", {{"drop", json::array({"ALL"})}}},
                           {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  if (!kind.instance_type.empty()) {
    pod["nodeSelector"] = {{"node.kubernetes.io/instance-type", kind.instance_type}};
  }
  const std::size_t slices = plan.slices.size();
  // A pod condition's status is required by the Job API up to Kubernetes 1.34.
  const json disruption = {{"type", "DisruptionTarget"}, {"status", "True"}};
  json worker = pod;
  worker["containers"] = json::array(
      {{{"name", "worker"},
        {"image", options.image},
        {"command",
         {options.canrun, "worker", "--campaign-dir", dir, "--index", "$(JOB_COMPLETION_INDEX)"}},
        {"resources", resources},
        {"securityContext", restricted},
        {"volumeMounts", json::array({mount})}}});
  const json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", options.name}, {"labels", {{"app.kubernetes.io/name", "canrun"}}}}},
      {"spec",
       {{"completionMode", "Indexed"},
        {"completions", slices},
        {"parallelism", parallel_of(plan, options)},
        {"backoffLimitPerIndex", 2},
        {"maxFailedIndexes", slices},
        {"podFailurePolicy",
         {{"rules",
           json::array({{{"action", "Ignore"}, {"onPodConditions", json::array({disruption})}},
                        {{"action", "FailIndex"},
                         {"onExitCodes",
                          {{"containerName", "worker"},
                           {"operator", "In"},
                           {"values", json::array({2})}}}}})}}},
        {"template", {{"spec", worker}}}}}};
  json collector = pod;
  collector.erase("nodeSelector");
  collector["containers"] = json::array({{{"name", "collect"},
                                          {"image", options.image},
                                          {"command",
                                           {options.canrun, "campaign", "--collect", dir, "--out",
                                            options.mount + "/" + options.out.filename().string()}},
                                          {"securityContext", restricted},
                                          {"volumeMounts", json::array({mount})}}});
  const json collect = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", options.name + "-collect"}, {"labels", {{"app.kubernetes.io/name", "canrun"}}}}},
      {"spec", {{"backoffLimit", 2}, {"template", {{"spec", collector}}}}}};
  return {{"job.json", job.dump(2) + "\n"}, {"collect-job.json", collect.dump(2) + "\n"}};
}

namespace {

class LocalExecutor final : public Executor {
 public:
  std::string_view name() const override { return "local"; }
  std::string_view summary() const override { return "run here"; }
  bool runs_here() const override { return true; }
  std::map<std::string, std::string> files(const FleetPlan&, const backend::BackendProfile&,
                                           const ExecutorOptions&) const override {
    return {};
  }
  std::vector<fs::path> folders(const ExecutorOptions&) const override { return {}; }
  std::vector<std::string> submit_command(const fs::path&) const override { return {}; }
  std::string_view index_variable() const override { return {}; }
  bool nodes_run_this_canrun() const override { return false; }
};

class SlurmExecutor final : public Executor {
 public:
  std::string_view name() const override { return "slurm"; }
  std::string_view summary() const override {
    return "plan into --campaign-dir, write the job array and collect job and submit them "
           "(sbatch)";
  }
  bool runs_here() const override { return false; }
  std::map<std::string, std::string> files(const FleetPlan& plan, const backend::BackendProfile&,
                                           const ExecutorOptions& options) const override {
    return slurm_files(plan, options);
  }
  std::vector<fs::path> folders(const ExecutorOptions& options) const override {
    return {options.campaign_dir / "slurm"};  // the jobs' output files (see slurm_files)
  }
  std::vector<std::string> submit_command(const fs::path& folder) const override {
    return {"sh", (folder / "submit.sh").string()};
  }
  std::string_view index_variable() const override { return "SLURM_ARRAY_TASK_ID"; }
  bool nodes_run_this_canrun() const override { return true; }
};

class KubernetesExecutor final : public Executor {
 public:
  std::string_view name() const override { return "k8s"; }
  std::string_view summary() const override { return "write an Indexed Job and the collect Job"; }
  bool runs_here() const override { return false; }
  std::map<std::string, std::string> files(const FleetPlan& plan,
                                           const backend::BackendProfile& profile,
                                           const ExecutorOptions& options) const override {
    return kubernetes_files(plan, profile, options);
  }
  std::vector<fs::path> folders(const ExecutorOptions&) const override { return {}; }
  std::vector<std::string> submit_command(const fs::path&) const override { return {}; }
  std::string_view index_variable() const override { return "JOB_COMPLETION_INDEX"; }
  bool nodes_run_this_canrun() const override { return false; }  // a pod runs its image's
};

}  // namespace

const std::vector<const Executor*>& executors() {
  static const LocalExecutor local;
  static const SlurmExecutor slurm;
  static const KubernetesExecutor kubernetes;
  static const std::vector<const Executor*> all = {&local, &slurm, &kubernetes};
  return all;
}

const Executor* find_executor(std::string_view name) {
  for (const Executor* executor : executors()) {
    if (executor->name() == name) return executor;
  }
  return nullptr;
}

}  // namespace canrun::campaign
