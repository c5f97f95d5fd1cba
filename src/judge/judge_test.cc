#include "judge/judge.h"

#include <gtest/gtest.h>

namespace canrun::judge {
namespace {

TEST(BestThreshold, SeparatesInTheMiddleOfTheGap) {
  const auto best = best_threshold({-9, -7, -6, -2, -1.5}, {false, false, false, true, true});
  EXPECT_EQ(best.correct, 5);
  EXPECT_DOUBLE_EQ(best.threshold, -4);  // between -6 and -2
}

TEST(BestThreshold, OverlapCostsTheFewestTexts) {
  // A fluent text scores below a non-fluent one: at best 5 of 6 are right, at -6.5 or -3.5;
  // -6.5 sits in the wider gap (-8 to -5).
  const auto best =
      best_threshold({-9, -8, -5, -4, -3, -1}, {false, false, true, false, true, true});
  EXPECT_EQ(best.correct, 5);
  EXPECT_DOUBLE_EQ(best.threshold, -6.5);
}

TEST(BestThreshold, AllOfOneLabel) {
  EXPECT_EQ(best_threshold({-3, -2}, {true, true}).correct, 2);
  EXPECT_LT(best_threshold({-3, -2}, {true, true}).threshold, -3);
  EXPECT_GT(best_threshold({-3, -2}, {false, false}).threshold, -2);
}

TEST(LabelledSet, HasBothLabelsAndRandomWeightOutputs) {
  auto set = labelled_set();
  ASSERT_TRUE(set.ok()) << set.error().message();
  int fluent = 0, random_weights = 0;
  for (const auto& labelled : *set) {
    fluent += labelled.fluent;
    random_weights += labelled.source.find("random weight") != std::string::npos ||
                      labelled.source.find("random-weight") != std::string::npos;
    EXPECT_FALSE(labelled.item.text.empty());
  }
  EXPECT_GE(fluent, 20);
  EXPECT_GE(static_cast<int>(set->size()) - fluent, 20);
  EXPECT_GE(random_weights, 4);
}

}  // namespace
}  // namespace canrun::judge
