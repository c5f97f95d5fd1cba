#include "backend/pinning.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace canrun::backend {
namespace {

using ::testing::HasSubstr;

BackendProfile pinned_by(std::string env, std::string syntax) {
  BackendProfile profile;
  profile.pinning_env = std::move(env);
  profile.pinning_syntax = std::move(syntax);
  return profile;
}

int host_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  return CPU_COUNT(&set);
}

TEST(PinningTest, ValueGivesAProcessItsCores) {
  const auto neuron = pinned_by("NEURON_RT_VISIBLE_CORES", "range");
  EXPECT_EQ(pinning_value(neuron, {0, 1}), "0");
  EXPECT_EQ(pinning_value(neuron, {0, 4}), "0-3");
  EXPECT_EQ(pinning_value(neuron, {8, 2}), "8-9");
  const auto cuda = pinned_by("CUDA_VISIBLE_DEVICES", "list");
  EXPECT_EQ(pinning_value(cuda, {0, 3}), "0,1,2");
  EXPECT_EQ(pinning_value(cuda, {5, 1}), "5");
  // Threads are left to the host; a profile without pinning sets nothing.
  EXPECT_EQ(pinning_value(pinned_by("OMP_NUM_THREADS", "count"), {0, 4}), std::nullopt);
  EXPECT_EQ(pinning_value(pinned_by("", ""), {0, 4}), std::nullopt);
}

TEST(PinningTest, EverySyntaxIsNamedOnce) {
  EXPECT_THAT(pinning_syntaxes(), ::testing::ElementsAre("count", "range", "list"));
  EXPECT_TRUE(is_pinning_syntax("range"));
  EXPECT_FALSE(is_pinning_syntax("Range"));
}

TEST(PinningTest, ShareRefusesWhatNoRuleCovers) {
  EXPECT_EQ(rank_share("cores", "0-3", 2, 0).error().message(),
            "pinning syntax \"cores\" is not count, range, list");
  EXPECT_EQ(rank_share("range", "0-3", 2, 2).error().message(), "rank 2 of 2 ranks does not exist");
  EXPECT_EQ(rank_share("range", "0-3", 0, 0).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rank_share("range", "4-5", 4, 0).error().message(),
            "pinning value \"4-5\" gives fewer than the 4 cores this plan needs");
  EXPECT_EQ(rank_share("range", "0-99999", 2, 0).error().message(),
            "pinning value \"0-99999\" is not a core range (N or A-B)");
}

//! The case table run.py is checked against too (pinning_table_test: tests/recipe/test_pinning.py).
TEST(PinningTest, CaseTable) {
  std::ifstream file(std::string(CANRUN_SOURCE_DIR) + "/src/backend/pinning_cases.json");
  ASSERT_TRUE(file) << "src/backend/pinning_cases.json";
  const auto table = nlohmann::json::parse(file);
  ASSERT_GE(table.at("cases").size(), 20U);
  for (const auto& item : table.at("cases")) {
    const auto syntax = item.at("syntax").get<std::string>();
    const auto given = item.at("given").get<std::string>();
    const int cores = item.at("cores").get<int>();
    for (int rank = 0; rank < cores; ++rank) {
      SCOPED_TRACE(::testing::Message() << item.dump() << " rank " << rank);
      const auto share = rank_share(syntax, given, cores, rank);
      if (item.contains("error")) {
        ASSERT_FALSE(share.ok()) << *share;
        EXPECT_EQ(share.error().code(), ErrorCode::kInvalidArgument);
        EXPECT_THAT(share.error().message(), HasSubstr(item.at("error").get<std::string>()));
      } else if (item.value("host_threads", false)) {
        EXPECT_EQ(share.value(), std::to_string(std::max(1, host_threads() / cores)));
      } else {
        ASSERT_TRUE(share.ok()) << share.error().message();
        EXPECT_EQ(*share, item.at("shares").at(rank).get<std::string>());
      }
    }
  }
}

}  // namespace
}  // namespace canrun::backend
