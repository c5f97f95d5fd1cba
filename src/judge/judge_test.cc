#include "judge/judge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace canrun::judge {
namespace {

TEST(CautiousThreshold, AFalsePassCostsMoreThanAFalseFail) {
  EXPECT_DOUBLE_EQ(cautious_threshold({-9, -7, -6, -2, -1.5}, {false, false, false, true, true}),
                   -4);  // separable: the middle of the gap
  // One non-fluent text scores above two fluent ones: passing it costs 10, failing them 2.
  EXPECT_DOUBLE_EQ(
      cautious_threshold({-9, -8, -5, -4.5, -4, -1}, {false, false, true, true, false, true}),
      -2.5);
  // At equal costs (1 each), the widest gap.
  EXPECT_DOUBLE_EQ(cautious_threshold({-9, -4, -3, -1}, {false, true, false, true}, 1), -6.5);
}

TEST(CautiousThreshold, AllOfOneLabel) {
  EXPECT_LT(cautious_threshold({-3, -2}, {true, true}), -3);
  EXPECT_GT(cautious_threshold({-3, -2}, {false, false}), -2);
}

TEST(WithPairs, AppendsEveryProductOnceInTheOrderOfItsNames) {
  EXPECT_EQ(with_pair_names({"a", "b"}), (std::vector<std::string>{"a", "b", "a*a", "a*b", "b*b"}));
  EXPECT_EQ(with_pairs({2, 3}), (std::vector<double>{2, 3, 4, 6, 9}));
}

TEST(FitCombination, LearnsWhichFeatureSeparatesAndIgnoresNoise) {
  std::mt19937 random(7);
  std::normal_distribution<double> noise(0, 1);
  std::vector<std::vector<double>> x;
  std::vector<bool> y;
  for (int at = 0; at < 200; ++at) {
    const bool fluent = at % 2 == 0;
    // "signal" is 3 apart between the labels; "noise" says nothing; "constant" never varies.
    x.push_back({(fluent ? 1.5 : -1.5) + noise(random), noise(random), 4.0});
    y.push_back(fluent);
  }
  const Combination c = fit_combination({"signal", "noise", "constant"}, x, y);
  EXPECT_GT(c.weights[0], 1.0);
  EXPECT_LT(std::abs(c.weights[1]), 0.5 * c.weights[0]);
  EXPECT_EQ(c.weights[2], 0.0);
  int correct = 0;
  for (std::size_t at = 0; at < x.size(); ++at) correct += (c.score(x[at]) >= 0) == y[at];
  EXPECT_GE(correct, 180);
  EXPECT_NEAR(c.score(x[0]),
              c.bias + c.contribution(0, x[0]) + c.contribution(1, x[0]) + c.contribution(2, x[0]),
              1e-12);
}

TEST(StratifiedFolds, EveryFoldHoldsItsShareOfEveryClass) {
  std::vector<std::string> classes;
  for (int at = 0; at < 10; ++at) classes.push_back("a");
  for (int at = 0; at < 3; ++at) classes.push_back("b");
  const std::vector<int> folds = stratified_folds(classes, 5);
  std::vector<int> of_a(5), of_b(5);
  for (std::size_t at = 0; at < classes.size(); ++at)
    (classes[at] == "a" ? of_a : of_b)[folds[at]]++;
  EXPECT_EQ(of_a, (std::vector<int>{2, 2, 2, 2, 2}));
  EXPECT_EQ(of_b, (std::vector<int>{0, 1, 1, 1, 0}));  // b starts where a's classes left off
}

TEST(Calibrate, ReportsHeldOutAndFoldsPerClass) {
  std::vector<LabelledText> set;
  std::vector<std::vector<double>> x;
  for (int at = 0; at < 40; ++at) {
    const bool fluent = at < 20;
    set.push_back({{"p", "t"}, fluent, fluent ? "good" : "bad", "", at % 4 == 3});
    x.push_back({fluent ? 2.0 + at * 0.01 : -2.0 - at * 0.01});
  }
  const Calibration c = calibrate({"signal"}, x, set, 4);
  EXPECT_EQ(c.held_out.texts, 10);
  EXPECT_EQ(c.calibrate.texts, 30);
  EXPECT_EQ(c.held_out.false_pass + c.held_out.false_fail, 0);
  EXPECT_EQ(c.folded.texts, 40);
  EXPECT_EQ(c.folded.correct(), 40);
  ASSERT_EQ(c.classes.size(), 2u);
  EXPECT_EQ(c.classes[0].name, "good");
  EXPECT_TRUE(c.classes[0].fluent);
  EXPECT_EQ(c.classes[0].folds.texts, 20);
  EXPECT_EQ(c.classes[1].held_out.texts, 5);
}

TEST(LabelledSet, HasBothLabelsClassesAndAHeldOutPart) {
  auto set = labelled_set();
  ASSERT_TRUE(set.ok()) << set.error().message();
  int fluent = 0, random_weights = 0, held_out = 0;
  for (const auto& labelled : *set) {
    fluent += labelled.fluent;
    held_out += labelled.held_out;
    random_weights += labelled.source.find("random weight") != std::string::npos ||
                      labelled.source.find("random-weight") != std::string::npos;
    EXPECT_FALSE(labelled.label_class.empty());
  }
  EXPECT_GE(fluent, 20);
  EXPECT_GE(static_cast<int>(set->size()) - fluent, 20);
  EXPECT_GE(random_weights, 4);
  EXPECT_GE(held_out, static_cast<int>(set->size()) / 5);
}

TEST(ShippedCalibrations, AreForThisJudgeScriptLabelledSetAndMethod) {
  // A fresh machine uses a shipped calibration only when its key matches exactly: one made for
  // another judge.py or labelled set would never be used, and the first judging would calibrate.
  const auto shipped = shipped_keys();
  ASSERT_FALSE(shipped.empty()) << "judge/calibrations/ ships no calibration";
  for (const auto& [stem, key] : shipped) {
    ASSERT_TRUE(key.is_object()) << stem << " holds no key";
    EXPECT_EQ(calibration_stem(key), stem) << "the file's name is not its key's hash";
    auto now = calibration_key(key.value("judge", ""), key.value("library_version", ""));
    ASSERT_TRUE(now.ok()) << now.error().message();
    EXPECT_EQ(*now, key) << "judge/calibrations/" << stem
                         << ".json is for another judge script, labelled set or method: "
                            "remove it and ship the new one, `HF_HOME=.cache/fixtures canrun judge "
                            "calibrate --recompute --save judge/calibrations`";
  }
}

class LabelledOverride : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::filesystem::temp_directory_path() /
            ("canrun-labelled-" + std::to_string(::getpid()) + ".jsonl");
  }
  void TearDown() override {
    ::unsetenv(kLabelledVariable.data());
    std::filesystem::remove(file_);
  }
  void use(const std::string& text) {
    std::ofstream(file_) << text;
    ::setenv(kLabelledVariable.data(), file_.c_str(), 1);
  }
  std::filesystem::path file_;
};

TEST_F(LabelledOverride, ReplacesTheEmbeddedSetAndItsKey) {
  auto embedded_key = calibration_key("m@c", "5.0");
  ASSERT_TRUE(embedded_key.ok());
  use(R"({"text": "Paris.", "fluent": true, "class": "a", "split": "held_out"})"
      "\n"
      R"({"text": ",,,,", "fluent": false})"
      "\n");
  auto set = labelled_set();
  ASSERT_TRUE(set.ok()) << set.error().message();
  ASSERT_EQ(set->size(), 2u);
  EXPECT_TRUE(set->at(0).held_out);
  EXPECT_EQ(set->at(1).label_class, "not_fluent");
  auto key = calibration_key("m@c", "5.0");
  ASSERT_TRUE(key.ok());
  EXPECT_NE(key->at("labelled"), embedded_key->at("labelled"));
  EXPECT_EQ(key->at("judge_py"), embedded_key->at("judge_py"));

  use("{\"text\": 1}\n");
  auto bad = labelled_set();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find(file_.string() + " line 1"), std::string::npos)
      << bad.error().message();
}

}  // namespace
}  // namespace canrun::judge
