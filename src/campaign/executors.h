// The files that run a fleet campaign (fleet.h) through the scheduler a team already has:
//   Slurm: worker.sbatch, one job-array task per slice (`sbatch --array=0-N%M`), each a whole
//          node (--exclusive: two tasks never share an instance's cores), its time limit from
//          the longest slice's expected time, requeued when its node fails (--requeue); and
//          collect.sbatch, submitted with --dependency=afterany on the array, so it runs once
//          every task ended however they ended; submit.sh holds the two sbatch commands.
//   Kubernetes: an Indexed Job (completionMode Indexed, one index per slice,
//          JOB_COMPLETION_INDEX, backoffLimitPerIndex so one slice's failures do not fail the
//          others, a podFailurePolicy that retries disruptions without counting them and fails
//          an index at once on a bad campaign folder (exit 2)), requesting the device plugin's
//          resource and the instance type, the campaign folder on a shared volume; and the
//          collect Job, applied once the Indexed Job is complete. Written as JSON, which
//          `kubectl apply -f` takes as it takes YAML.
//
// Executor: how a campaign's work runs — here ("local"), or as slices on a fleet's scheduler
// ("slurm", "k8s"). The CLI finds the executor by the name --executor gives (find_executor) and
// asks it, never the name, what to do: the files to write, the folders they need, the command
// that submits them, the variable that tells a worker its slice. Another scheduler (Ray, AWS
// Batch, Flux) is one more Executor in executors.cc with its files' test; --executor, its help,
// submission and `canrun worker`'s index follow from executors().
//
// Thread safety: pure functions; the executors are immutable singletons.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "backend/profile.h"
#include "campaign/fleet.h"

namespace canrun::campaign {

struct ExecutorOptions {
  std::filesystem::path campaign_dir;  //!< as every node sees it
  std::filesystem::path out;           //!< the dataset, as the collect job sees it
  std::string canrun = "canrun";       //!< the canrun executable on the nodes
  std::size_t parallel = 0;            //!< at most this many slices at once; 0: all
  std::string name = "canrun";         //!< job name
  // Kubernetes only.
  std::string image;                             //!< container image holding canrun and the stack
  std::string volume_claim = "canrun-campaign";  //!< PVC holding the campaign and dataset
  std::string mount = "/campaign";               //!< where the volume is mounted in the pods
  std::string instance_type;                     //!< node selector; empty: the backend's usual one
  std::string resource;                          //!< device plugin resource; empty: the backend's
  int resource_count = 0;                        //!< how many; 0: the profile's devices
};

//! The device plugin resource and instance type usual for a backend's devices:
//! neuron → aws.amazon.com/neuron on trn2.48xlarge, cuda → nvidia.com/gpu; cpu → none.
struct NodeKind {
  std::string resource;
  int count = 0;
  std::string instance_type;
};
NodeKind node_kind(const backend::BackendProfile& profile);

//! file name → content: worker.sbatch, collect.sbatch, submit.sh.
std::map<std::string, std::string> slurm_files(const FleetPlan& plan,
                                               const ExecutorOptions& options);

//! file name → content: job.json (the Indexed Job), collect-job.json.
std::map<std::string, std::string> kubernetes_files(const FleetPlan& plan,
                                                    const backend::BackendProfile& profile,
                                                    const ExecutorOptions& options);

//! The Slurm time limit for slices expected to take up to `seconds`: twice that plus 30
//! minutes, in whole minutes.
int slurm_time_limit_minutes(double seconds);

class Executor {
 public:
  virtual ~Executor() = default;

  //! The name --executor takes, and the folder its files go to in the campaign folder.
  virtual std::string_view name() const = 0;
  //! What it does, for --help.
  virtual std::string_view summary() const = 0;
  //! Whether the campaign runs in this process: no slices, no files.
  virtual bool runs_here() const = 0;
  //! The files that run `plan`'s slices on the scheduler, by file name.
  virtual std::map<std::string, std::string> files(const FleetPlan& plan,
                                                   const backend::BackendProfile& profile,
                                                   const ExecutorOptions& options) const = 0;
  //! Folders that must exist before the jobs start (where they write their output).
  virtual std::vector<std::filesystem::path> folders(const ExecutorOptions& options) const = 0;
  //! The command that submits the files written to `folder`; empty when the user applies them.
  virtual std::vector<std::string> submit_command(const std::filesystem::path& folder) const = 0;
  //! The environment variable in which the scheduler gives a worker its slice; empty for none.
  virtual std::string_view index_variable() const = 0;
  //! Whether the nodes run this canrun executable (on shared storage) rather than their own.
  virtual bool nodes_run_this_canrun() const = 0;
};

//! Every executor, "local" first.
const std::vector<const Executor*>& executors();

//! The executor named `name`, or nullptr.
const Executor* find_executor(std::string_view name);

}  // namespace canrun::campaign
