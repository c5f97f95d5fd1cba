#include "campaign/job_sizing.h"

#include <gtest/gtest.h>

#include <string>

#include "backend/profile.h"
#include "campaign/expected_time.h"
#include "campaign/host_budget.h"

namespace canrun::campaign {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

backend::BackendProfile repository_profile(const std::string& name) {
  auto profile =
      backend::load_profile(std::string(CANRUN_SOURCE_DIR) + "/backends/" + name + ".toml");
  EXPECT_TRUE(profile.ok()) << name << ": " << profile.error().message();
  return std::move(profile).value();
}

WorkItem item_of(int cores, std::uint64_t weights_bytes) {
  WorkItem item(*ModelId::parse("org/model"), "text-generation");
  item.revision = "0123456789abcdef0123456789abcdef01234567";
  item.cores = cores;
  item.weights_bytes = weights_bytes;
  return item;
}

TEST(JobSizingTest, TheDeviceStageHoldsItsCoresAndTheHostItCompilesOn) {
  const RuntimeHistory none;
  const Job neuron = job_of(7, item_of(4, 2 * kGiB), repository_profile("neuron"), none);
  EXPECT_EQ(neuron.id, "7");
  EXPECT_EQ(neuron.cores, 4);
  EXPECT_EQ(neuron.host_cpus, 2);                               // neuronx-cc beside the run
  EXPECT_DOUBLE_EQ(neuron.host_memory_gib, 5.0);                // 1 + twice the weights
  EXPECT_DOUBLE_EQ(neuron.expected_s, 300 + 120 * 2 + 30 * 3);  // neuron's line

  // On `count` the cores are the host's CPUs: the scheduler counts them, not host_cpus.
  const Job cpu = job_of(7, item_of(4, 2 * kGiB), repository_profile("cpu"), none);
  EXPECT_EQ(cpu.cores, 4);
  EXPECT_EQ(cpu.host_cpus, 0);
  EXPECT_DOUBLE_EQ(cpu.expected_s, 30 + 90 * 2 + 10 * 3);  // cpu's line
}

TEST(JobSizingTest, TheReferenceAndVerifyStagesAreHostWorkSizedByTheDeviceStage) {
  const Job device = job_of(3, item_of(2, 4 * kGiB), repository_profile("cuda"), {});
  ASSERT_DOUBLE_EQ(device.expected_s, 60 + 10 * 4 + 15 * 1);

  const Job reference = reference_job_of(3, item_of(2, 4 * kGiB), device);
  EXPECT_EQ(reference.id, "reference:3");
  EXPECT_EQ(reference.cores, 0);
  EXPECT_EQ(reference.host_cpus, 1);
  EXPECT_DOUBLE_EQ(reference.host_memory_gib,
                   13.0);  // 1 + three times the weights: the reference loads them in float32
  EXPECT_DOUBLE_EQ(reference.expected_s, device.expected_s / 2);

  const Job verify = verify_job_of(3, device);
  EXPECT_EQ(verify.id, "verify:3");
  EXPECT_EQ(verify.cores, 0);
  EXPECT_EQ(verify.host_cpus, 1);
  EXPECT_DOUBLE_EQ(verify.host_memory_gib, 2.0);
  EXPECT_DOUBLE_EQ(verify.expected_s, device.expected_s / 10);
}

TEST(JobSizingTest, AModelRunBeforeIsExpectedToTakeWhatItTook) {
  RuntimeHistory history;
  history.record("org/model", "neuron", UtcTime{}, 42.0);
  const Job device = job_of(0, item_of(4, 2 * kGiB), repository_profile("neuron"), history);
  EXPECT_DOUBLE_EQ(device.expected_s, 42.0);
  EXPECT_DOUBLE_EQ(reference_job_of(0, item_of(4, 2 * kGiB), device).expected_s, 21.0);
  EXPECT_DOUBLE_EQ(verify_job_of(0, device).expected_s, 4.2);
  // Another backend's history is not this one's.
  EXPECT_DOUBLE_EQ(job_of(0, item_of(1, 0), repository_profile("cpu"), history).expected_s, 30);
}

TEST(JobSizingTest, MeasuringHowWellTakesItsShareMore) {
  RuntimeHistory history;
  history.set_how_well(true);
  history.record("org/before", "neuron", UtcTime{}, 100.0);  // run without it
  history.record("org/with", "neuron", UtcTime{}, 100.0, /*how_well=*/true);
  const auto expected = [&](const char* model) {
    WorkItem item = item_of(4, 2 * kGiB);
    item.model_id = *ModelId::parse(model);
    return job_of(0, item, repository_profile("neuron"), history).expected_s;
  };
  EXPECT_DOUBLE_EQ(expected("org/before"), 100.0 * (1 + kHowWellShare));
  EXPECT_DOUBLE_EQ(expected("org/with"), 100.0);  // its runtime has it already
  // The line: cpu's 30 s of a model never run, and its share.
  EXPECT_DOUBLE_EQ(job_of(0, item_of(1, 0), repository_profile("cpu"), history).expected_s,
                   30 * (1 + kHowWellShare));
}

TEST(JobSizingTest, EachJobSaysItsStageAndItem) {
  const Job device = job_of(12, item_of(1, kGiB), repository_profile("cpu"), {});
  const StageJob of_device = stage_of(device.id);
  EXPECT_EQ(of_device.stage, TrialStage::kDevice);
  EXPECT_EQ(of_device.index, 12u);
  const StageJob of_reference = stage_of(reference_job_of(12, item_of(1, kGiB), device).id);
  EXPECT_EQ(of_reference.stage, TrialStage::kReference);
  EXPECT_EQ(of_reference.index, 12u);
  const StageJob of_verify = stage_of(verify_job_of(12, device).id);
  EXPECT_EQ(of_verify.stage, TrialStage::kVerify);
  EXPECT_EQ(of_verify.index, 12u);
  // Only a verification finishes a trial under way (the scheduler takes it first).
  EXPECT_TRUE(verify_job_of(12, device).finishing);
  EXPECT_FALSE(device.finishing);
  EXPECT_FALSE(reference_job_of(12, item_of(1, kGiB), device).finishing);
}

int capacity(const std::string& profile, int max_cores, double host_cpus) {
  auto cores = machine_cores(repository_profile(profile), max_cores, {host_cpus, 64.0});
  EXPECT_TRUE(cores.ok()) << cores.error().message();
  return cores.ok() ? cores->capacity() : -1;
}

TEST(JobSizingTest, TheMachinesCoresWithinCores) {
  // cpu: the host's CPUs, or exactly --cores (more workers than CPUs share them).
  EXPECT_EQ(capacity("cpu", 0, 4), 4);
  EXPECT_EQ(capacity("cpu", 2, 4), 2);
  EXPECT_EQ(capacity("cpu", 8, 4), 8);
  // neuron: the profile's 16 chips of 4 cores, whatever the host; --cores takes whole chips.
  EXPECT_EQ(capacity("neuron", 0, 2), 64);
  EXPECT_EQ(capacity("neuron", 4, 192), 4);
  EXPECT_EQ(capacity("neuron", 6, 192), 8);
  EXPECT_EQ(capacity("neuron", 1000, 192), 64);
  // cuda: one core per GPU.
  EXPECT_EQ(capacity("cuda", 0, 16), 8);
  EXPECT_EQ(capacity("cuda", 3, 16), 3);

  auto cores = machine_cores(repository_profile("cuda"), 3, {16, 64});
  ASSERT_TRUE(cores.ok());
  EXPECT_EQ(cores->syntax(), "list");
}

TEST(JobSizingTest, AProfileThatCannotBePackedIsAnErrorNamingIt) {
  backend::BackendProfile custom = repository_profile("cpu");
  custom.name = "custom";
  custom.pinning_syntax = "ranges";
  auto cores = machine_cores(custom, 0, {4, 16});
  ASSERT_FALSE(cores.ok());
  EXPECT_EQ(cores.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(cores.error().message().find("backend profile custom"), std::string::npos)
      << cores.error().message();
}

}  // namespace
}  // namespace canrun::campaign
