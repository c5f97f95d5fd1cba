#include "census/census.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "census/census_files.h"

namespace canrun::census {
namespace {

using ::testing::HasSubstr;

const char* kManifest = R"({"transformers": "5.18.0", "torch": "2.13.0", "planned": 3,
  "generator": 1, "entries": [
  {"model_type": "llama", "task": "text-generation", "status": "built", "kind": "decoder-only",
   "class": "LlamaForCausalLM", "model_id": "canrun-census/llama",
   "revision": "0123456789abcdef0123456789abcdef01234567",
   "claims": {"can_compile_fullgraph": true, "tp_plan": true, "ep_plan": false},
   "build_seconds": 1.5, "size_bytes": 100},
  {"model_type": "bart", "task": "text-generation", "status": "other_task",
   "kind": "encoder-decoder", "other_task": "text2text-generation", "class": "BartForCausalLM",
   "claims": {"can_compile_fullgraph": null, "tp_plan": false, "ep_plan": false},
   "build_seconds": 0.0, "size_bytes": 0},
  {"model_type": "qwen2", "task": "text-generation", "status": "failed", "kind": "decoder-only",
   "model_id": "canrun-census/qwen2", "step": "forward", "error": "RuntimeError: shapes",
   "claims": {"can_compile_fullgraph": true, "tp_plan": true, "ep_plan": false},
   "build_seconds": 0.7, "size_bytes": 0}]})";

backend::BackendProfile cpu_profile() {
  backend::BackendProfile profile;
  profile.name = "cpu";
  profile.device = "cpu";
  profile.compiler = "torch-inductor";
  return profile;
}

stack::Stack stack_of(std::string transformers) {
  stack::Stack stack;
  stack.python = "python3";
  stack.versions = {{"torch", "2.13.0"}, {"transformers", transformers}};
  stack.compiler_version = "2.13.0";
  stack.library_version = transformers;
  return stack;
}

TEST(CensusManifestTest, ReadsEachTypeWithWhatTransformersClaims) {
  auto manifest = parse_manifest(nlohmann::json::parse(kManifest));
  ASSERT_TRUE(manifest.ok()) << manifest.error().message();
  EXPECT_EQ(manifest->transformers, "5.18.0");
  EXPECT_EQ(manifest->planned, 3u);
  ASSERT_EQ(manifest->entries.size(), 3u);
  const TypeEntry& llama = manifest->entries[0];
  EXPECT_EQ(llama.status, "built");
  EXPECT_EQ(llama.model_id, "canrun-census/llama");
  EXPECT_EQ(llama.claims.fullgraph, true);
  EXPECT_TRUE(llama.claims.tp_plan);
  const TypeEntry& bart = manifest->entries[1];
  EXPECT_EQ(bart.model_id, "canrun-census/bart");  // named by the rule when the generator did not
  EXPECT_EQ(bart.claims.fullgraph, std::nullopt);
  EXPECT_EQ(manifest->entries[2].step, "forward");
}

TEST(CensusManifestTest, RefusesWhatTheGeneratorDoesNotWrite) {
  auto json = nlohmann::json::parse(kManifest);
  json["entries"][0]["status"] = "maybe";
  EXPECT_THAT(parse_manifest(json).error().message(),
              HasSubstr("entry 0: status \"maybe\" is none of built, other_task, failed"));
  json = nlohmann::json::parse(kManifest);
  json["entries"][0].erase("revision");
  EXPECT_THAT(parse_manifest(json).error().message(),
              HasSubstr("llama was built but has no revision"));
  EXPECT_THAT(parse_manifest(nlohmann::json::array()).error().message(),
              HasSubstr("not a JSON object"));
}

TEST(CensusManifestTest, IdsNameTheTypeAndTheTask) {
  EXPECT_EQ(census_model_id("llama", "text-generation"), "canrun-census/llama");
  EXPECT_EQ(census_model_id("bert", "fill-mask"), "canrun-census/bert-fill-mask");
}

TEST(CensusRowsTest, ATypeNotBuiltIsExcludedWithItsReasonAndWhy) {
  auto manifest = parse_manifest(nlohmann::json::parse(kManifest));
  ASSERT_TRUE(manifest.ok());
  dataset::VerdictRow other =
      not_built_row(manifest->entries[1], cpu_profile(), stack_of("5.18.0"));
  EXPECT_EQ(other.result, VerdictResult::kExcluded);
  EXPECT_EQ(other.exclusion_reason, "other_task");
  EXPECT_THAT(*other.error, HasSubstr("bart (encoder-decoder) is in transformers' text-generation "
                                      "mapping but belongs to text2text-generation"));
  EXPECT_EQ(other.model_type, "bart");
  EXPECT_EQ(other.claims_fullgraph, std::nullopt);
  EXPECT_EQ(other.claims_tp_plan, false);
  EXPECT_TRUE(dataset::check_row(other).ok()) << dataset::check_row(other).error().message();

  dataset::VerdictRow failed =
      not_built_row(manifest->entries[2], cpu_profile(), stack_of("5.18.0"));
  EXPECT_EQ(failed.exclusion_reason, "build_failed");
  EXPECT_EQ(failed.model_id, "canrun-census/qwen2");
  EXPECT_THAT(*failed.error, HasSubstr("failed at forward: RuntimeError: shapes"));
  EXPECT_EQ(failed.claims_fullgraph, true);
  EXPECT_EQ(failed.library_version, "5.18.0");
  EXPECT_TRUE(dataset::check_row(failed).ok());
}

TEST(CensusFilesTest, TheGeneratorAndItsOverridesAreEmbedded) {
  EXPECT_THAT(std::string(census_files().at("build_checkpoints")), HasSubstr("def build_all("));
  EXPECT_EQ(nlohmann::json::parse(census_files().at("overrides"), nullptr, false).is_object(),
            true);
}

}  // namespace
}  // namespace canrun::census
