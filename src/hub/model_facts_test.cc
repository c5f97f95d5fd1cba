#include "hub/model_facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "hub/checkpoint_files.h"

namespace canrun::hub {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ModelFacts, ExpertTensorsAreFoundByName) {
  EXPECT_TRUE(is_expert_tensor("model.layers.0.mlp.experts.3.down_proj.weight"));
  EXPECT_TRUE(is_expert_tensor("model.layers.0.block_sparse_moe.experts.7.w1.weight"));
  EXPECT_TRUE(is_expert_tensor("model.layers.1.mlp.experts.gate_up_proj"));
  EXPECT_FALSE(is_expert_tensor("model.layers.0.mlp.shared_experts.down_proj.weight"));
  EXPECT_FALSE(is_expert_tensor("model.layers.0.mlp.shared_expert.gate_proj.weight"));
  EXPECT_FALSE(is_expert_tensor("model.layers.0.mlp.gate.weight"));
  EXPECT_FALSE(is_expert_tensor("model.embed_tokens.weight"));
}

TEST(ModelFacts, ModelInfoFieldsAreMapped) {
  const auto facts = facts_from_model_info_text(
      R"({"id":"org/moe","sha":"0123456789abcdef0123456789abcdef01234567","gated":"manual",
          "pipeline_tag":"text-generation","library_name":"transformers","tags":["moe"],
          "siblings":[{"rfilename":"config.json"},{"rfilename":"model.safetensors"}],
          "config":{"architectures":["MixtralForCausalLM"],"model_type":"mixtral",
                    "auto_map":{"AutoModelForCausalLM":"modeling.X"}}})",
      "test");
  ASSERT_TRUE(facts.ok()) << facts.error().message();
  EXPECT_EQ(facts->model_id, "org/moe");
  EXPECT_EQ(facts->gated, "manual");
  EXPECT_THAT(facts->files, ElementsAre("config.json", "model.safetensors"));
  EXPECT_TRUE(facts->has_safetensors());
  EXPECT_THAT(facts->architectures, ElementsAre("MixtralForCausalLM"));
  EXPECT_EQ(facts->auto_map.at("AutoModelForCausalLM"), "modeling.X");
}

TEST(ModelFacts, ConfigCountsComeFromTextConfigForMultimodal) {
  ModelFacts facts;
  const auto config = nlohmann::json::parse(
      R"({"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3",
          "text_config":{"num_attention_heads":8,"num_key_value_heads":4,"num_experts":16}})");
  ASSERT_TRUE(apply_config(config, facts).ok());
  EXPECT_EQ(facts.num_attention_heads, 8);
  EXPECT_EQ(facts.num_key_value_heads, 4);
  EXPECT_EQ(facts.num_experts, 16);
}

struct BadInfo {
  std::string json;
  std::string expected;
};
class ModelFactsBadInfo : public ::testing::TestWithParam<BadInfo> {};

TEST_P(ModelFactsBadInfo, GetsItsOwnError) {
  const auto facts = facts_from_model_info_text(GetParam().json, "info.json");
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(facts.error().message(), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ModelFactsBadInfo,
    ::testing::Values(
        BadInfo{R"({"id":"org/x","tags":["a")", "info.json: not valid JSON"},
        BadInfo{R"("org/x")", "Hub model info is string, not an object"},
        BadInfo{R"({"sha":"abc"})", "has no field \"id\""},
        BadInfo{R"({"id":7})", "field \"id\" holds number where a string belongs"},
        BadInfo{R"({"id":"org/../x"})", "field \"id\""},
        BadInfo{R"({"id":"org/x","sha":"main"})", "field \"sha\" is \"main\", not a 40-hex"},
        BadInfo{R"({"id":"org/x","tags":"moe"})", "field \"tags\" holds string"},
        BadInfo{R"({"id":"org/x","gated":"yes"})", "field \"gated\" holds string"},
        BadInfo{R"({"id":"org/x","siblings":[{"name":"a"}]})", "no string \"rfilename\""},
        BadInfo{R"({"id":"org/x","config":{"architectures":"Llama"}})",
                "config: field \"architectures\" holds string"},
        BadInfo{R"({"id":"org/x","config":{"num_attention_heads":-2}})",
                "field \"num_attention_heads\" holds number where a non-negative integer"}));

TEST(ModelFacts, CheckpointTotalsSplitExpertsAndDtypes) {
  SafetensorsHeader shard;
  shard.tensors = {{"model.embed_tokens.weight", "BF16", {4, 2}, 0, 16},
                   {"model.layers.0.mlp.experts.0.w1.weight", "BF16", {2, 2}, 16, 24},
                   {"model.layers.0.mlp.gate.weight", "F32", {2}, 24, 32}};
  ModelFacts facts;
  apply_checkpoint({{"model-00001-of-00001.safetensors", shard}}, facts);
  EXPECT_EQ(facts.weights_bytes, 32u);
  EXPECT_EQ(facts.expert_weights_bytes, 8u);
  EXPECT_EQ(facts.non_expert_weights_bytes, 24u);
  EXPECT_EQ(facts.weights_bytes_by_dtype.at("BF16"), 24u);
  EXPECT_EQ(facts.weights_bytes_by_dtype.at("F32"), 8u);
  const auto json = facts_to_json(facts);
  EXPECT_EQ(json["weights"]["bytes"], 32);
  EXPECT_EQ(json["tensors"][1]["expert"], true);
}

TEST(ModelFacts, MissingSafetensorsIsTellableFromABrokenCheckpoint) {
  LocalCheckpointFiles files(std::filesystem::temp_directory_path(), "local");
  auto none = read_checkpoint_headers(files, {"config.json", "pytorch_model.bin"});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.error().has_reason(reason::kNoSafetensors)) << none.error().message();
  EXPECT_THAT(none.error().message(), HasSubstr("neither model.safetensors nor"));
  // model.safetensors listed but not there to read: a broken checkpoint, not the exclusion.
  auto broken = read_checkpoint_headers(files, {"model.safetensors"});
  ASSERT_FALSE(broken.ok());
  EXPECT_FALSE(broken.error().has_reason(reason::kNoSafetensors)) << broken.error().message();
}

TEST(ModelFacts, AModelCardsFrontMatterGivesThePipelineTagAndLibrary) {
  ModelFacts facts;
  apply_model_card(
      "---\nlanguage: en\nlibrary_name: sentence-transformers\npipeline_tag: "
      "\"sentence-similarity\"\ntags:\n  - pipeline_tag: nested-is-not-read\n---\n# all-MiniLM\n"
      "pipeline_tag: text-generation\n",
      facts);
  EXPECT_EQ(facts.pipeline_tag, "sentence-similarity");
  EXPECT_EQ(facts.library_name, "sentence-transformers");
}

TEST(ModelFacts, TheHubsPipelineTagWinsAndACardWithoutFrontMatterSaysNothing) {
  ModelFacts facts;
  facts.pipeline_tag = "text-generation";
  apply_model_card("---\r\npipeline_tag: fill-mask\r\n---\r\n", facts);
  EXPECT_EQ(facts.pipeline_tag, "text-generation");
  ModelFacts none;
  apply_model_card("# A model\npipeline_tag: fill-mask\n", none);
  EXPECT_FALSE(none.pipeline_tag);
  apply_model_card("---\npipeline_tag:\n---\n", none);
  EXPECT_FALSE(none.pipeline_tag);
}

TEST(ModelFacts, AVisionConfigIsNoted) {
  ModelFacts facts;
  ASSERT_TRUE(
      apply_config(nlohmann::json::parse(R"({"architectures": ["LlavaForConditionalGeneration"],
      "vision_config": {"hidden_size": 8}, "text_config": {"num_attention_heads": 4}})"),
                   facts)
          .ok());
  EXPECT_TRUE(facts.vision_config);
  EXPECT_EQ(facts.num_attention_heads, 4);
}

}  // namespace
}  // namespace canrun::hub
