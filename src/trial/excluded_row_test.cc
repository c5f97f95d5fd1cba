#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/profile.h"
#include "trial/trial.h"

namespace canrun::trial {
namespace {

backend::BackendProfile neuron_like() {
  backend::BackendProfile profile;
  profile.name = "neuron";
  profile.device = "trn2";
  profile.compiler = "neuronx-cc";
  profile.env["NEURON_CC_FLAGS"] = "--model-type transformer";
  return profile;
}

//! Whether the dataset would take `row`, as its writer stores it (derived columns filled).
Status storable(dataset::VerdictRow row) {
  dataset::fill_neuron_columns(row);
  return dataset::check_row(row);
}

stack::Stack stack_of(std::string transformers) {
  stack::Stack stack;
  stack.python = "/opt/stack/bin/python";
  stack.versions = {
      {"torch", "2.9.0"}, {"transformers", transformers}, {"sentence-transformers", "5.1.0"}};
  stack.compiler_version = "2.21.0";
  stack.library_version = transformers;
  return stack;
}

TEST(ExcludedRowTest, SaysWhoWhereAndWhyAndThatNothingRan) {
  const ExcludedModel model{
      "org/big-model", "0123456789abcdef0123456789abcdef01234567",  "text-generation",
      "too_large",     "812.00 GiB of weights do not fit 64 cores", 871878361088};
  const dataset::VerdictRow row = excluded_row(model, neuron_like(), stack_of("4.57.6"));
  EXPECT_TRUE(storable(row).ok()) << storable(row).error().message();
  EXPECT_EQ(row.model_id, "org/big-model");
  EXPECT_EQ(row.revision, model.commit);
  EXPECT_EQ(row.task, "text-generation");
  EXPECT_EQ(row.result, VerdictResult::kExcluded);
  EXPECT_EQ(row.exclusion_reason, "too_large");
  EXPECT_EQ(row.error, "812.00 GiB of weights do not fit 64 cores");
  EXPECT_EQ(row.weights_bytes, 871878361088);
  // The stack's columns, as a run's row on this stack has them (so both land in one file).
  EXPECT_EQ(row.backend, "neuron");
  EXPECT_EQ(row.compiler, "neuronx-cc");
  EXPECT_EQ(row.compiler_version, "2.21.0");
  EXPECT_EQ(row.library, "transformers");
  EXPECT_EQ(row.library_version, "4.57.6");
  const auto stack = nlohmann::json::parse(row.stack);
  EXPECT_EQ(stack["transformers"], "4.57.6");
  EXPECT_EQ(stack["env:NEURON_CC_FLAGS"], "--model-type transformer");
  // Nothing ran: no placement, no script, no measurement.
  EXPECT_FALSE(row.cores || row.parallelism || row.run_py || row.runtime_s || row.compile_s);
}

TEST(ExcludedRowTest, TheTasksLibraryAndWhatIsNotKnownStayEmpty) {
  const ExcludedModel model{"org/embedder",
                            std::nullopt,
                            "sentence-similarity",
                            "gated",
                            "gated: the Hub asks to accept its terms",
                            std::nullopt};
  const dataset::VerdictRow row = excluded_row(model, neuron_like(), stack_of("5.18.0"));
  EXPECT_TRUE(storable(row).ok()) << storable(row).error().message();
  EXPECT_EQ(row.library, "sentence-transformers");
  EXPECT_EQ(row.library_version, "5.1.0");
  EXPECT_FALSE(row.revision.has_value());
  EXPECT_FALSE(row.weights_bytes.has_value());
}

TEST(ExcludedRowTest, TheNeuronStackRecordsItsLogicalCoreConfig) {
  // LNC=2 (the runtime's default) is what the shipped profile's 4 cores per chip are made of:
  // the stack column says so, as it does for a run's row.
  auto neuron =
      backend::load_profile(std::filesystem::path(CANRUN_SOURCE_DIR) / "backends" / "neuron.toml");
  ASSERT_TRUE(neuron.ok()) << neuron.error().message();
  const ExcludedModel model{"org/big-model", std::nullopt, "text-generation",
                            "too_large",     "too big",    std::nullopt};
  const auto stack = nlohmann::json::parse(excluded_row(model, *neuron, stack_of("4.57.6")).stack);
  EXPECT_EQ(stack["env:NEURON_LOGICAL_NC_CONFIG"], "2");
}

}  // namespace
}  // namespace canrun::trial
