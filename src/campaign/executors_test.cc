#include "campaign/executors.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/profile.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;

//! A fleet plan of three slices, as plan_fleet leaves it (the files read only the slices).
FleetPlan three_slices() {
  FleetPlan plan;
  plan.slices = {{0, 1}, {2}, {3}};
  plan.slice_expected_s = {120, 60, 90};
  return plan;
}

backend::BackendProfile profile_of_repository(const std::string& name) {
  auto profile =
      backend::load_profile(std::string(CANRUN_SOURCE_DIR) + "/backends/" + name + ".toml");
  EXPECT_TRUE(profile.ok()) << name;
  return profile.ok() ? std::move(profile).value() : backend::BackendProfile{};
}

ExecutorOptions fleet_options() {
  ExecutorOptions options;
  options.campaign_dir = "/shared/campaign";
  options.out = "/shared/dataset";
  options.image = "registry.example/canrun:1";
  return options;
}

TEST(ExecutorTest, EachIsFoundByTheNameItGivesAndLocalComesFirst) {
  std::vector<std::string> names;
  for (const Executor* executor : executors()) {
    names.emplace_back(executor->name());
    EXPECT_EQ(find_executor(executor->name()), executor);
    EXPECT_FALSE(executor->summary().empty()) << executor->name();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"local", "slurm", "k8s"}));
  EXPECT_EQ(find_executor("ray"), nullptr);
  EXPECT_EQ(find_executor(""), nullptr);
  EXPECT_EQ(find_executor("Slurm"), nullptr);  // names are exact
}

TEST(ExecutorTest, LocalRunsHereAndWritesNothing) {
  const Executor& local = *find_executor("local");
  EXPECT_TRUE(local.runs_here());
  EXPECT_TRUE(local.files(three_slices(), profile_of_repository("cpu"), fleet_options()).empty());
  EXPECT_TRUE(local.submit_command("/anywhere").empty());
  EXPECT_TRUE(local.index_variable().empty());
}

// What a scheduler needs of canrun: files that start `canrun worker` once per slice with the
// slice in the executor's own variable, and a collect job.
TEST(ExecutorTest, EveryFleetExecutorTellsEachWorkerItsSliceInItsVariable) {
  const auto profile = profile_of_repository("neuron");
  for (const Executor* executor : executors()) {
    if (executor->runs_here()) continue;
    SCOPED_TRACE(std::string(executor->name()));
    const auto files = executor->files(three_slices(), profile, fleet_options());
    ASSERT_FALSE(files.empty());
    ASSERT_FALSE(executor->index_variable().empty());
    std::string all;
    for (const auto& [name, text] : files) all += text;
    EXPECT_NE(all.find(std::string(executor->index_variable())), std::string::npos);
    EXPECT_NE(all.find("worker"), std::string::npos);
    EXPECT_NE(all.find("--collect"), std::string::npos);
  }
}

TEST(ExecutorTest, SlurmSubmitsItsScriptAndMakesTheFolderOfItsJobsOutput) {
  const Executor& slurm = *find_executor("slurm");
  EXPECT_FALSE(slurm.runs_here());
  EXPECT_TRUE(slurm.nodes_run_this_canrun());
  EXPECT_EQ(slurm.submit_command("/shared/campaign/slurm"),
            (std::vector<std::string>{"sh", "/shared/campaign/slurm/submit.sh"}));
  const auto files = slurm.files(three_slices(), profile_of_repository("cpu"), fleet_options());
  ASSERT_TRUE(files.contains("submit.sh"));
  EXPECT_NE(files.at("submit.sh").find("--array=0-2%3"), std::string::npos);
  const auto folders = slurm.folders(fleet_options());
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_NE(files.at("worker.sbatch").find("#SBATCH --output=" + folders[0].string() + "/"),
            std::string::npos);
}

TEST(ExecutorTest, KubernetesIsAppliedByTheUserAndPodsRunTheirImagesCanrun) {
  const Executor& kubernetes = *find_executor("k8s");
  EXPECT_FALSE(kubernetes.runs_here());
  EXPECT_FALSE(kubernetes.nodes_run_this_canrun());
  EXPECT_TRUE(kubernetes.submit_command("/shared/campaign/k8s").empty());
  EXPECT_TRUE(kubernetes.folders(fleet_options()).empty());
  const auto files =
      kubernetes.files(three_slices(), profile_of_repository("neuron"), fleet_options());
  EXPECT_TRUE(files.contains("job.json") && files.contains("collect-job.json"));
}

}  // namespace
}  // namespace canrun::campaign
