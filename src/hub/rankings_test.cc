#include "hub/rankings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun::hub {
namespace {

using ::testing::HasSubstr;

TEST(Rankings, SnapshotRoundTrips) {
  RankingsSnapshot snapshot{"text-generation",
                            RankingSort::kTrending,
                            "2026-12-02T15:00:00Z",
                            "https://huggingface.co",
                            {}};
  RankedModel model;
  model.id = "Qwen/Qwen3-0.6B";
  model.downloads = 12;
  model.gated = "auto";
  model.library_name = "transformers";
  snapshot.models.push_back(model);
  const auto text = snapshot_to_json(snapshot).dump();
  const auto back = snapshot_from_json_text(text, "s.json");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->sort, RankingSort::kTrending);
  ASSERT_EQ(back->models.size(), 1u);
  EXPECT_EQ(back->models[0].gated, "auto");
  EXPECT_EQ(back->models[0].library_name, "transformers");
  EXPECT_EQ(nlohmann::json::parse(text)["models"][0]["gated"], "auto");
}

TEST(Rankings, WeightsAndConfigFactsAreReadKeptAndOptional) {
  // As the Hub lists them with expand=safetensors and expand=config.
  const auto listed = ranked_model_from_json(nlohmann::json::parse(R"({
      "id": "Qwen/Qwen3-30B-A3B", "safetensors": {"parameters": {"BF16": 1000, "F32": 10},
      "total": 1010}, "config": {"architectures": ["Qwen3MoeForCausalLM"], "model_type":
      "qwen3_moe", "tokenizer_config": {"eos_token": "x"}}})"),
                                             "page 1");
  ASSERT_TRUE(listed.ok()) << listed.error().message();
  EXPECT_EQ(listed->weights_bytes(), 1000u * 2 + 10u * 4);
  EXPECT_EQ(listed->architectures, std::vector<std::string>{"Qwen3MoeForCausalLM"});
  EXPECT_EQ(listed->model_type, "qwen3_moe");
  EXPECT_EQ(listed->quant_method, std::nullopt);
  const auto kept = ranked_model_from_json(ranked_model_to_json(*listed), "snapshot");
  ASSERT_TRUE(kept.ok()) << kept.error().message();
  EXPECT_EQ(kept->parameters_by_dtype, listed->parameters_by_dtype);
  EXPECT_EQ(kept->model_type, "qwen3_moe");

  // A snapshot from before these fields: read, with no weights known.
  const auto older = ranked_model_from_json(nlohmann::json::parse(R"({"id": "a/b"})"), "old");
  ASSERT_TRUE(older.ok());
  EXPECT_EQ(older->weights_bytes(), std::nullopt);
  // A dtype safetensors lacks: no size rather than a wrong one.
  const auto odd = ranked_model_from_json(
      nlohmann::json::parse(R"({"id": "a/b", "safetensors": {"parameters": {"Q4": 5}}})"), "p");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->weights_bytes(), std::nullopt);
  const auto bad = ranked_model_from_json(
      nlohmann::json::parse(R"({"id": "a/b", "safetensors": {"parameters": {"BF16": "x"}}})"),
      "page 2");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(),
              HasSubstr("field \"safetensors.parameters.BF16\" holds string where a "
                        "non-negative integer belongs"));
}

TEST(Rankings, SnapshotsNeedAFetchTimeASystemClockHolds) {
  // Found by model_facts_fuzz: a far year overflowed system_clock's nanoseconds (UBSan).
  const auto far = snapshot_from_json_text(
      R"({"task":"text-generation","sort":"downloads","fetched_at":"6465-01-01T00:00:00Z",
          "endpoint":"https://huggingface.co","models":[]})",
      "s.json");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(far.error().message(), HasSubstr("s.json: field \"fetched_at\": timestamp"));
  EXPECT_THAT(far.error().message(), HasSubstr("outside the years 1970 to 2200"));
}

TEST(Rankings, BadModelEntriesNameTheField) {
  const auto missing = ranked_model_from_json(nlohmann::json::parse(R"({"likes":3})"), "page 1");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message(), HasSubstr("page 1: no field \"id\""));
  const auto wrong =
      ranked_model_from_json(nlohmann::json::parse(R"({"id":"a/b","downloads":"many"})"), "page 1");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().message(),
              HasSubstr("field \"downloads\" holds string where an integer belongs"));
}

TEST(Rankings, AgesReadWell) {
  EXPECT_EQ(describe_age(std::chrono::seconds(3 * 86'400 + 4 * 3600)), "3 d 4 h");
  EXPECT_EQ(describe_age(std::chrono::seconds(7500)), "2 h 5 min");
}

TEST(Rankings, TaskNamesAreChecked) {
  EXPECT_TRUE(check_task_name("text-generation").ok());
  const auto bad = check_task_name("text generation");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(), HasSubstr("a task is a Hub pipeline tag"));
}

}  // namespace
}  // namespace canrun::hub
