#include "backend/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun::backend {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kBackends = std::filesystem::path(CANRUN_SOURCE_DIR) / "backends";

TEST(ProfileTest, ShippedNeuronProfileHasTheTrainium2Facts) {
  auto neuron = load_profile(kBackends / "neuron.toml");
  ASSERT_TRUE(neuron.ok()) << neuron.error().message();
  EXPECT_EQ(neuron->torch_device, "neuron");
  EXPECT_EQ(neuron->compile_backend, "neuron");
  EXPECT_EQ(neuron->distributed_backend, "neuron");
  EXPECT_EQ(neuron->dtype, "bfloat16");
  EXPECT_EQ(neuron->topology.cores_per_device, 4);
  EXPECT_EQ(neuron->topology.memory_per_core_gib, 24.0);
  EXPECT_EQ(neuron->topology.degrees, (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(neuron->topology.max_cores, 16);
  EXPECT_EQ(neuron->pinning_env, "NEURON_RT_VISIBLE_CORES");
  EXPECT_TRUE(neuron->compile_options.at("fullgraph"));
  EXPECT_EQ(neuron->prefetch_command("2.16.372.0+4a9b2326"),
            "hf buckets sync "
            "hf://buckets/aws-neuron/torch-neuronx-neff-cache/neuronxcc-2.16.372.0+4a9b2326 "
            "/tmp/neff_cache");
}

TEST(ProfileTest, EveryShippedProfileLoads) {
  for (const char* name : {"cpu", "cuda", "neuron", "reference"}) {
    auto profile = load_profile(kBackends / (std::string(name) + ".toml"));
    ASSERT_TRUE(profile.ok()) << name << ": " << profile.error().message();
    EXPECT_EQ(profile->name, name);
  }
  EXPECT_EQ(load_profile(kBackends / "cpu.toml")->prefetch_command("2.13.0"), "");
}

TEST(ProfileTest, FindsByNameOrPathAndSaysWhereItLooked) {
  auto by_path = find_profile((kBackends / "cpu.toml").string());
  ASSERT_TRUE(by_path.ok());
  auto missing = find_profile("tpu");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(),
              HasSubstr("no backend profile \"tpu\" (looked for tpu.toml in"));
  EXPECT_EQ(find_profile("../etc").error().code(), ErrorCode::kNotFound);  // a path: read as a file
  EXPECT_THAT(find_profile("a b").error().message(),
              HasSubstr("neither a profile name nor a .toml path"));
}

constexpr const char* kMinimal = R"(
name = "dev"
device = "cpu"
torch_device = "cpu"
compile_backend = "my_backend.entry:compile"
distributed_backend = "gloo"
dtype = "float32"
compiler = "mine"
compiler_package = "torch"
packages = ["torch"]
[env]
PYTHONPATH = "plugins"
[topology]
cores_per_device = 1
devices = 1
memory_per_core_gib = 2
reserve_gib = 0.5
degrees = [1, 2]
max_cores = 2
[pinning]
env = "OMP_NUM_THREADS"
syntax = "count"
[memory]
peak = "rss"
)";

TEST(ProfileTest, ModuleFunctionBackendAndEnv) {
  auto profile = parse_profile(kMinimal, "dev.toml");
  ASSERT_TRUE(profile.ok()) << profile.error().message();
  EXPECT_EQ(profile->compile_backend, "my_backend.entry:compile");
  EXPECT_EQ(profile->env.at("PYTHONPATH"), "plugins");
  EXPECT_EQ(profile->topology.memory_per_core_gib, 2.0);
}

TEST(ProfileTest, BadValuesAreNamed) {
  auto with = [](std::string_view from, std::string_view to) {
    std::string text = kMinimal;
    text.replace(text.find(from), from.size(), to);
    return parse_profile(text, "dev.toml");
  };
  EXPECT_THAT(with("dtype = \"float32\"", "dtype = \"float99\"").error().message(),
              HasSubstr("dev.toml: dtype \"float99\" is not float32, bfloat16 or float16"));
  EXPECT_THAT(
      with("\"my_backend.entry:compile\"", "\"x; import os\"").error().message(),
      HasSubstr("compile_backend \"x; import os\" is neither a backend name nor module:function"));
  EXPECT_THAT(with("degrees = [1, 2]", "degrees = [2, 1]").error().message(),
              HasSubstr("topology.degrees must be distinct positive integers"));
  EXPECT_THAT(with("max_cores = 2", "max_cores = \"2\"").error().message(),
              HasSubstr("dev.toml: topology.max_cores must be an integer"));
  EXPECT_THAT(with("device = \"cpu\"\n", "").error().message(),
              HasSubstr("dev.toml: device is missing"));
  EXPECT_THAT(with("peak = \"rss\"", "peak = \"guess\"").error().message(),
              HasSubstr("memory.peak must be rss, cuda or neuron"));
  EXPECT_THAT(parse_profile("name = [", "bad.toml").error().message(), HasSubstr("bad.toml:1:"));
}

}  // namespace
}  // namespace canrun::backend
