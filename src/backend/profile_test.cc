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
  // LNC=2, the runtime's default, which the topology above assumes; the stack records it.
  EXPECT_EQ(neuron->env.at("NEURON_LOGICAL_NC_CONFIG"), "2");
}

// TorchNeuron's compile cache and artifacts (AWS Neuron docs "TorchNeuron environment
// variables", torch/reference/env-vars), not the torch-xla based torch-neuronx's
// NEURON_COMPILE_CACHE_URL.
TEST(ProfileTest, ShippedNeuronProfileNamesTorchNeuronsCacheAndArtifacts) {
  auto neuron = load_profile(kBackends / "neuron.toml");
  ASSERT_TRUE(neuron.ok()) << neuron.error().message();
  EXPECT_EQ(neuron->cache_env, "TORCH_NEURONX_NEFF_CACHE_DIR");
  EXPECT_EQ(neuron->cache_default_dir, "/tmp/neff_cache");
  EXPECT_EQ(neuron->cache_local_env, "TORCH_NEURONX_NEFF_LOCAL_CACHE_DIR");
  // The prefetch fills the folder TorchNeuron will read: the variable's, else its default.
  EXPECT_EQ(neuron->prefetch_command("2.16.372.0+4a9b2326"),
            "hf buckets sync "
            "hf://buckets/aws-neuron/torch-neuronx-neff-cache/neuronxcc-2.16.372.0+4a9b2326 "
            "\"${TORCH_NEURONX_NEFF_CACHE_DIR:-/tmp/neff_cache}\"");
  EXPECT_EQ(neuron->run_folder_env("/runs/org_model-neuron-1"),
            (std::map<std::string, std::string>{
                {"TORCH_NEURONX_DEBUG_DIR", "/runs/org_model-neuron-1/compile-artifacts"}}));
  // A compile failure raises instead of falling back to eager PyTorch.
  EXPECT_EQ(neuron->env.at("TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION"), "1");
}

TEST(ProfileTest, PrefetchTemplateKeepsTheVersionToFill) {
  BackendProfile profile;
  profile.cache_prefetch = "sync bucket/v{compiler_version} {cache_dir}";
  profile.cache_default_dir = "/tmp/graphs";
  EXPECT_EQ(profile.prefetch_template(), "sync bucket/v{compiler_version} /tmp/graphs");
  profile.cache_env = "GRAPHS";
  EXPECT_EQ(profile.prefetch_command("1.2"), "sync bucket/v1.2 \"${GRAPHS:-/tmp/graphs}\"");
  // The Space keeps the template and fills the version alone, in a profile of its own.
  BackendProfile kept;
  kept.cache_prefetch = profile.prefetch_template();
  EXPECT_EQ(kept.prefetch_command("1.2"), profile.prefetch_command("1.2"));
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

TEST(ProfileTest, BadCacheSettingsAreNamed) {
  auto with_cache = [](std::string_view cache) {
    return parse_profile(std::string(kMinimal) + "[cache]\n" + std::string(cache), "dev.toml");
  };
  EXPECT_TRUE(with_cache("env = \"GRAPHS\"\ndefault_dir = \"/tmp/g\"\nlocal_env = \"LOCAL\"\n"
                         "prefetch = \"sync v{compiler_version} {cache_dir}\"\n")
                  .ok());
  EXPECT_THAT(with_cache("env = \"MY GRAPHS\"\n").error().message(),
              HasSubstr("dev.toml: cache.env \"MY GRAPHS\" is not an environment variable's name"));
  EXPECT_THAT(with_cache("local_env = \"1ST\"\n").error().message(),
              HasSubstr("cache.local_env \"1ST\" is not an environment variable's name"));
  EXPECT_THAT(with_cache("default_dir = \"graphs\"\n").error().message(),
              HasSubstr("cache.default_dir \"graphs\" must be an absolute path"));
  EXPECT_THAT(with_cache("default_dir = \"/tmp/$(id)\"\n").error().message(),
              HasSubstr("cache.default_dir \"/tmp/$(id)\" must be an absolute path without"));
  EXPECT_THAT(with_cache("prefetch = \"sync {cache_dir}\"\n").error().message(),
              HasSubstr("cache.prefetch names {cache_dir} but cache.default_dir is not set"));
}

}  // namespace
}  // namespace canrun::backend
