#include "plan/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/toml_file.h"
#include "plan/predict.h"

namespace canrun::plan {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kSource = CANRUN_SOURCE_DIR;

struct GoldenCase {
  std::string name;
  backend::Topology topology;
  PlanFacts facts;
  ParallelSupport support;
  std::optional<int> expect_cores;
  std::string expect_parallelism;
  std::string expect_exclusion;
};

std::vector<GoldenCase> load_golden() {
  const auto text = read_file(kSource / "src/plan/golden_plans.toml");
  EXPECT_TRUE(text.ok());
  auto root = parse_toml(*text, "golden_plans.toml");
  EXPECT_TRUE(root.ok()) << root.error().message();
  const std::string default_backend =
      (*root)["defaults"]["backend"].value_or(std::string("neuron"));
  std::vector<GoldenCase> cases;
  for (const toml::node& node : *(*root)["case"].as_array()) {
    const toml::table& row = *node.as_table();
    GoldenCase golden;
    golden.name = row["name"].value_or(std::string());
    const std::string backend = row["backend"].value_or(default_backend);
    auto profile = backend::load_profile(kSource / "backends" / (backend + ".toml"));
    EXPECT_TRUE(profile.ok()) << golden.name;
    golden.topology = profile->topology;
    if (auto value = row["memory_per_core_gib"].value<double>())
      golden.topology.memory_per_core_gib = *value;
    if (auto value = row["reserve_gib"].value<double>()) golden.topology.reserve_gib = *value;
    golden.facts.weights_bytes = row["weights_bytes"].value_or(std::int64_t{0});
    golden.facts.expert_weights_bytes = row["expert_weights_bytes"].value_or(std::int64_t{0});
    golden.facts.num_attention_heads = row["heads"].value<std::int64_t>();
    golden.facts.num_key_value_heads = row["kv_heads"].value<std::int64_t>();
    golden.facts.num_experts = row["experts"].value<std::int64_t>();
    golden.facts.model_type = row["model_type"].value_or(std::string());
    golden.support.tp_plan = row["tp_plan"].value_or(false);
    golden.support.ep_plan = row["ep_plan"].value_or(false);
    golden.support.library_version = "5.18.0";
    if (auto cores = row["expect_cores"].value<std::int64_t>())
      golden.expect_cores = static_cast<int>(*cores);
    golden.expect_parallelism = row["expect_parallelism"].value_or(std::string());
    golden.expect_exclusion = row["expect_exclusion"].value_or(std::string());
    cases.push_back(std::move(golden));
  }
  return cases;
}

TEST(PlannerGoldenTest, EveryCaseGetsItsExpectedPlan) {
  const auto cases = load_golden();
  ASSERT_GE(cases.size(), 12u);
  for (const GoldenCase& golden : cases) {
    const PlannedShards plan = plan_model(golden.facts, golden.support, golden.topology);
    SCOPED_TRACE(golden.name + " → " + plan.why);
    if (golden.expect_cores) {
      EXPECT_TRUE(plan.placed);
      EXPECT_EQ(plan.cores, *golden.expect_cores);
      EXPECT_EQ(to_string(plan.parallelism), golden.expect_parallelism);
      EXPECT_LE(plan.per_core_bytes, plan.budget_bytes);
    } else {
      EXPECT_FALSE(plan.placed);
      EXPECT_EQ(plan.exclusion, golden.expect_exclusion);
    }
    EXPECT_FALSE(plan.why.empty());
  }
}

// What the Hub lists (weights, model type) predicts the planner's plan wherever the facts it
// lacks (head and expert counts, the expert share) do not decide it.
TEST(PredictTest, AgreesWithThePlannerOnEveryGoldenCaseItCanDecide) {
  int decided = 0;
  for (const GoldenCase& golden : load_golden()) {
    const PlannedShards plan = plan_model(golden.facts, golden.support, golden.topology);
    const PredictedPlan predicted = predict_plan(
        golden.facts.weights_bytes, golden.facts.model_type, golden.support, golden.topology);
    SCOPED_TRACE(golden.name + " → " + predicted.why);
    EXPECT_FALSE(predicted.why.empty());
    // Head or expert counts that do not divide passed a degree over.
    const bool counts_decide = plan.why.find("do not divide") != std::string::npos;
    if (golden.facts.num_experts.value_or(0) > 0 || counts_decide) continue;
    if (plan.placed && plan.parallelism == Parallelism::kExpert) continue;
    ++decided;
    EXPECT_EQ(predicted.placed, plan.placed);
    EXPECT_EQ(predicted.exclusion, plan.exclusion);
    if (plan.placed) {
      EXPECT_EQ(predicted.cores, plan.cores);
      EXPECT_EQ(predicted.parallelism, plan.parallelism);
    }
  }
  EXPECT_GE(decided, 6);
}

TEST(PredictTest, LeavesOpenWhatTheListingCannotDecide) {
  backend::Topology neuron{4, 16, 24.0, 2.0, {1, 2, 4, 8, 16}, 16};
  const std::uint64_t llama70 = 141107412992;
  const PredictedPlan unprobed = predict_plan(llama70, "llama", std::nullopt, neuron);
  EXPECT_TRUE(unprobed.placed);
  EXPECT_EQ(unprobed.cores, 8);
  EXPECT_EQ(unprobed.parallelism, std::nullopt);
  EXPECT_THAT(unprobed.why, HasSubstr("whether this stack can shard llama was never probed"));
  const PredictedPlan ep_only = predict_plan(
      llama70, "mixtral", ParallelSupport{true, false, true, "5.18.0", std::nullopt}, neuron);
  EXPECT_EQ(ep_only.parallelism, std::nullopt);
  EXPECT_THAT(ep_only.why, HasSubstr("at least 8 cores, expert parallel if its experts divide"));
  const PredictedPlan none = predict_plan(
      llama70, "gptj", ParallelSupport{true, false, false, "5.18.0", std::nullopt}, neuron);
  EXPECT_FALSE(none.placed);
  EXPECT_EQ(none.exclusion, "no_parallel_plan");
  const PredictedPlan huge = predict_plan(811706777600, "llama", std::nullopt, neuron);
  EXPECT_EQ(huge.exclusion, "too_large");
  EXPECT_THAT(huge.why, HasSubstr("do not fit even 16 cores"));
}

TEST(PlannerTest, ExplanationsSayWhy) {
  backend::Topology neuron{4, 16, 24.0, 2.0, {1, 2, 4, 8, 16}, 16};
  ParallelSupport tp{true, true, false, "5.18.0", std::nullopt};
  PlanFacts llama70{141107412992, 0, 64, 8, std::nullopt, "llama"};
  EXPECT_THAT(plan_model(llama70, tp, neuron).why,
              HasSubstr("tensor parallel over 8 cores puts 16.43 GiB on each (64 attention and 8 "
                        "KV heads divide by 8)"));
  PlanFacts gptj{24213525376, 0, 16, std::nullopt, std::nullopt, "gptj"};
  EXPECT_THAT(
      plan_model(gptj, ParallelSupport{true, false, false, "5.18.0", std::nullopt}, neuron).why,
      HasSubstr("transformers 5.18.0 has no tensor-parallel plan for gptj and it is not a "
                "mixture of experts"));
  PlanFacts huge{811706777600, 0, 128, 8, std::nullopt, "llama"};
  EXPECT_THAT(plan_model(huge, tp, neuron).why,
              HasSubstr("do not fit even 16 cores: 47.25 GiB each"));
  PlanFacts command_r{207621349376, 0, 96, 8, std::nullopt, "cohere"};
  EXPECT_THAT(
      plan_model(command_r, tp, neuron).why,
      HasSubstr("16 cores would hold it but 96 attention / 8 KV heads do not divide by 16"));
}

TEST(PlannerTest, ExpertCountMustDivide) {
  backend::Topology neuron{4, 16, 24.0, 2.0, {1, 2, 4, 8, 16}, 16};
  PlanFacts moe{65200000000, 60900000000, 64, 8, 6, "gpt_oss"};  // 6 experts: 2 divides, 4 does not
  const PlannedShards plan =
      plan_model(moe, ParallelSupport{true, false, true, "5.18.0", std::nullopt}, neuron);
  // At 2 cores 4.0 + 28.4 GiB do not fit; 4 and 8 fit but do not divide 6; 16 neither.
  EXPECT_FALSE(plan.placed);
  EXPECT_EQ(plan.exclusion, "no_parallel_plan");
  EXPECT_THAT(plan.why, HasSubstr("4 cores would hold it but 6 experts do not divide by 4"));
}

TEST(PlannerTest, AtADegreeShardsWhatOneCoreWouldHold) {
  // The census's sharded runs: a tiny checkpoint that one core holds, over exactly 2 cores.
  backend::Topology cpu{1, 2, 64.0, 0.0, {1, 2}, 2};
  const ParallelSupport tp{true, true, false, "5.18.0", std::nullopt};
  const ParallelSupport ep{true, false, true, "5.18.0", std::nullopt};
  const ParallelSupport neither{true, false, false, "4.57.6", std::nullopt};
  const PlanFacts llama{4 << 20, 0, 4, 2, std::nullopt, "llama"};
  const PlanFacts phimoe{6 << 20, 4 << 20, 4, 2, 4, "phimoe"};
  EXPECT_EQ(plan_model(llama, tp, cpu).cores, 1);

  PlannedShards plan = plan_at_degree(llama, tp, cpu, 2);
  EXPECT_TRUE(plan.placed);
  EXPECT_EQ(plan.cores, 2);
  EXPECT_EQ(plan.parallelism, Parallelism::kTensor);
  EXPECT_EQ(plan.per_core_bytes, 2u << 20);

  plan = plan_at_degree(phimoe, ep, cpu, 2);
  EXPECT_EQ(plan.parallelism, Parallelism::kExpert);
  EXPECT_EQ(plan.per_core_bytes, (2u << 20) + (2u << 20));

  plan = plan_at_degree(phimoe, neither, cpu, 2);
  EXPECT_FALSE(plan.placed);
  EXPECT_EQ(plan.exclusion, "no_parallel_plan");
  EXPECT_THAT(plan.why, HasSubstr("transformers 4.57.6 has no tensor-parallel plan for phimoe and "
                                  "no expert-parallel plan"));
  // Heads that do not divide, a degree the backend does not allow, one core asked for.
  EXPECT_THAT(plan_at_degree(PlanFacts{4 << 20, 0, 3, 3, std::nullopt, "llama"}, tp, cpu, 2).why,
              HasSubstr("3 attention / 3 KV heads do not divide by 2"));
  EXPECT_EQ(plan_at_degree(llama, tp, cpu, 4).exclusion, "no_parallel_plan");
  plan = plan_at_degree(llama, tp, cpu, 1);
  EXPECT_TRUE(plan.placed);
  EXPECT_EQ(plan.cores, 1);
  EXPECT_EQ(plan.parallelism, Parallelism::kNone);
  // Shards above the per-core budget.
  backend::Topology small{1, 2, 0.001, 0.0, {1, 2}, 2};
  EXPECT_EQ(
      plan_at_degree(PlanFacts{8 << 20, 0, 4, 2, std::nullopt, "llama"}, tp, small, 2).exclusion,
      "too_large");
}

}  // namespace
}  // namespace canrun::plan
