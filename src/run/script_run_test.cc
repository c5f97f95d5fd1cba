#include "run/script_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "core/test_temp_dir.h"

namespace canrun::run {
namespace {

namespace fs = std::filesystem;
const fs::path kBackends = fs::path(CANRUN_SOURCE_DIR) / "backends";

TEST(ScriptRunTest, ARunsEnvironmentHasTheProfilesVariablesAndNoSecret) {
  ::setenv("HF_TOKEN", "hf_script_run_test", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "aws_script_run_test", 1);
  testing::TempDir dir("script-env");
  const auto neuron = backend::load_profile(kBackends / "neuron.toml");
  ASSERT_TRUE(neuron.ok()) << neuron.error().message();
  const ScriptPlace place{dir.path(), "2.21.0", {0, 4}, std::nullopt, {}};
  const auto env = script_environment(*neuron, place);
  EXPECT_FALSE(env.contains("HF_TOKEN"));
  EXPECT_FALSE(env.contains("AWS_SECRET_ACCESS_KEY"));
  EXPECT_EQ(env.at("HF_HUB_OFFLINE"), "1");
  EXPECT_EQ(env.at("NEURON_RT_VISIBLE_CORES"), "0-3");
  EXPECT_EQ(env.at("NEURON_LOGICAL_NC_CONFIG"), "2");
  ::unsetenv("HF_TOKEN");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
}

TEST(ScriptRunTest, TheCachesARunWritesAreTheOnesItsEnvironmentNames) {
  testing::TempDir dir("script-caches");
  const auto neuron = backend::load_profile(kBackends / "neuron.toml");
  ASSERT_TRUE(neuron.ok()) << neuron.error().message();
  const ScriptPlace place{dir.path(), "2.21.0", {0, 1}, std::nullopt, {}};
  const auto env = script_environment(*neuron, place);
  const auto caches = script_caches(*neuron, place);
  ASSERT_EQ(caches.size(), 2U);  // the NEFF cache and its node-local tier
  EXPECT_EQ(fs::weakly_canonical(caches[0]),
            fs::weakly_canonical(env.at("TORCH_NEURONX_NEFF_CACHE_DIR")));
  EXPECT_EQ(fs::weakly_canonical(caches[1]),
            fs::weakly_canonical(env.at("TORCH_NEURONX_NEFF_LOCAL_CACHE_DIR")));
  for (const fs::path& folder : caches) {
    EXPECT_TRUE(folder.is_absolute()) << folder;
    EXPECT_TRUE(fs::is_directory(folder)) << folder;
  }
  const auto reference = backend::load_profile(kBackends / "reference.toml");
  ASSERT_TRUE(reference.ok());
  EXPECT_TRUE(script_caches(*reference, place).empty());
}

}  // namespace
}  // namespace canrun::run
