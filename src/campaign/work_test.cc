#include "campaign/work.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun::campaign {
namespace {

using ::testing::HasSubstr;

//! An item planned to run: its checkpoint and the planner's plan kept.
WorkItem planned_item() {
  WorkItem item(*ModelId::parse("org/model"), "text-generation");
  item.revision = std::string(40, 'a');
  item.source = "ranked #2";
  item.cores = 2;
  item.parallelism = Parallelism::kTensor;
  item.weights_bytes = 3000;
  item.expected_s = 12.5;
  item.checkpoint = trial::KeptCheckpoint{
      "org/model",   "org/model", item.revision,
      item.revision, false,       {"model-1.safetensors", "model-2.safetensors"}};
  plan::StackPlan plan;
  plan.input = {3000, 0, 8, 2, std::nullopt, "llama"};
  plan.support = {true, true, false, "5.18.0", std::nullopt};
  plan.shards = {true, 2, Parallelism::kTensor, "", 3000, 1500, 2000, "Needs 2 cores."};
  item.stack_plan = plan;
  return item;
}

TEST(WorkItemTest, AnItemToRunKeepsItsCheckpointAndPlanThroughTheFolder) {
  const WorkItem item = planned_item();
  const nlohmann::json json = work_item_to_json(item);
  EXPECT_EQ(json["parallelism"], "tp");
  EXPECT_EQ(json["checkpoint"]["weights_files"].size(), 2u);
  EXPECT_EQ(json["stack_plan"]["shards"]["budget_bytes"], 2000);
  // Through text, as work.json holds it.
  auto back = work_item_from_json(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, item);
}

TEST(WorkItemTest, AnItemWrittenBeforeItemsKeptTheirPlanReadsWithoutOne) {
  // A work.json item as canrun wrote it before it kept checkpoints and plans.
  const auto old = nlohmann::json::parse(R"({"model_id": "org/model", "task": "text-generation",
      "revision": "0123456789abcdef0123456789abcdef01234567", "source": "selected",
      "exclusion_reason": null, "why": "", "cores": 2, "parallelism": "tp",
      "weights_bytes": 3000, "expected_s": 4.0})");
  auto item = work_item_from_json(old);
  ASSERT_TRUE(item.ok()) << item.error().message();
  EXPECT_EQ(item->parallelism, Parallelism::kTensor);
  EXPECT_EQ(item->cores, 2);
  EXPECT_FALSE(item->checkpoint.has_value());
  EXPECT_FALSE(item->stack_plan.has_value());
}

TEST(WorkItemTest, WhatWasNotWrittenByCanrunIsRefusedByField) {
  nlohmann::json json = work_item_to_json(planned_item());
  json["parallelism"] = "pp";
  auto bad = work_item_from_json(json);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(bad.error().message(), HasSubstr("parallelism \"pp\" is not none, tp or ep"));

  json = work_item_to_json(planned_item());
  json["checkpoint"]["weights_files"] = "model.safetensors";
  EXPECT_THAT(work_item_from_json(json).error().message(),
              HasSubstr("work item text-generation/org/model: field \"weights_files\" holds "
                        "string where a list of strings belongs"));

  json = work_item_to_json(planned_item());
  json["stack_plan"]["shards"]["parallelism"] = "sp";
  EXPECT_THAT(work_item_from_json(json).error().message(),
              HasSubstr("(shards): parallelism \"sp\" is not none, tp or ep"));

  json = work_item_to_json(planned_item());
  json["stack_plan"]["input"].erase("weights_bytes");
  EXPECT_THAT(work_item_from_json(json).error().message(),
              HasSubstr("(input): no field \"weights_bytes\""));
}

}  // namespace
}  // namespace canrun::campaign
