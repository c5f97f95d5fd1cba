#include "core/verdict_result.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace canrun {
namespace {

enum class Kind { kRegression, kFix, kUnverified, kNeither };

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::kRegression:
      return "regression";
    case Kind::kFix:
      return "fix";
    case Kind::kUnverified:
      return "unverified";
    case Kind::kNeither:
      return "neither";
  }
  return "?";
}

//! "PASS", or "EXCLUDED:too_large" for an exclusion and its reason.
VerdictOutcome outcome(std::string_view text) {
  const auto colon = text.find(':');
  const auto result = parse_verdict_result(text.substr(0, colon));
  EXPECT_TRUE(result.has_value()) << text;
  return {result.value_or(VerdictResult::kCrash),
          colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1)};
}

//! The kind the three functions give; fails the test when more than one holds.
Kind kind_of(const VerdictOutcome& from, const VerdictOutcome& to) {
  std::vector<Kind> kinds;
  if (is_regression(from, to)) kinds.push_back(Kind::kRegression);
  if (is_fix(from, to)) kinds.push_back(Kind::kFix);
  if (is_unverified(from, to)) kinds.push_back(Kind::kUnverified);
  EXPECT_LE(kinds.size(), 1u) << to_string(from.result) << " → " << to_string(to.result);
  return kinds.empty() ? Kind::kNeither : kinds.front();
}

struct RuleCase {
  std::string_view from;
  std::string_view to;
  Kind expected;
};

// The rule of SPEC.md §7 as a table: from → to → kind.
constexpr RuleCase kRuleCases[] = {
    // PASS → a result that blames the backend: a regression.
    {"PASS", "FAIL_LOAD", Kind::kRegression},
    {"PASS", "FAIL_COMPILE", Kind::kRegression},
    {"PASS", "FAIL_RUNTIME", Kind::kRegression},
    {"PASS", "FAIL_OOM", Kind::kRegression},
    {"PASS", "FAIL_MISMATCH", Kind::kRegression},
    {"PASS", "FAIL_JUDGE", Kind::kRegression},
    {"PASS", "TIMEOUT", Kind::kRegression},
    {"PASS", "CRASH", Kind::kRegression},
    // PASS → excluded by the planner: the model no longer fits, a regression.
    {"PASS", "EXCLUDED:too_large", Kind::kRegression},
    {"PASS", "EXCLUDED:no_parallel_plan", Kind::kRegression},
    // PASS → no verdict on the backend: unverified, never a regression.
    {"PASS", "REFERENCE_FAIL", Kind::kUnverified},
    {"PASS", "EXCLUDED:gated", Kind::kUnverified},
    {"PASS", "EXCLUDED:low_priority", Kind::kUnverified},
    {"PASS", "EXCLUDED:no_safetensors", Kind::kUnverified},
    {"PASS", "EXCLUDED:waits for the next transformers release", Kind::kUnverified},
    {"PASS", "EXCLUDED:", Kind::kUnverified},
    // The reverse of a regression: a fix.
    {"FAIL_LOAD", "PASS", Kind::kFix},
    {"FAIL_COMPILE", "PASS", Kind::kFix},
    {"FAIL_RUNTIME", "PASS", Kind::kFix},
    {"FAIL_OOM", "PASS", Kind::kFix},
    {"FAIL_MISMATCH", "PASS", Kind::kFix},
    {"FAIL_JUDGE", "PASS", Kind::kFix},
    {"TIMEOUT", "PASS", Kind::kFix},
    {"CRASH", "PASS", Kind::kFix},
    {"EXCLUDED:too_large", "PASS", Kind::kFix},
    {"EXCLUDED:no_parallel_plan", "PASS", Kind::kFix},
    // → PASS from something that never blamed the backend: not a fix.
    {"REFERENCE_FAIL", "PASS", Kind::kNeither},
    {"EXCLUDED:gated", "PASS", Kind::kNeither},
    {"EXCLUDED:a curator's note", "PASS", Kind::kNeither},
    // No PASS on either side, or PASS on both: neither.
    {"PASS", "PASS", Kind::kNeither},
    {"FAIL_COMPILE", "FAIL_OOM", Kind::kNeither},
    {"FAIL_OOM", "EXCLUDED:too_large", Kind::kNeither},
    {"EXCLUDED:too_large", "FAIL_OOM", Kind::kNeither},
    {"TIMEOUT", "REFERENCE_FAIL", Kind::kNeither},
    {"REFERENCE_FAIL", "CRASH", Kind::kNeither},
    {"EXCLUDED:gated", "EXCLUDED:too_large", Kind::kNeither},
};

TEST(VerdictRule, EachPairHasTheKindOfTheTable) {
  for (const RuleCase& rule : kRuleCases) {
    EXPECT_EQ(kind_name(kind_of(outcome(rule.from), outcome(rule.to))), kind_name(rule.expected))
        << rule.from << " → " << rule.to;
  }
}

TEST(VerdictRule, NoPairIsTwoKindsAtOnce) {
  std::vector<VerdictOutcome> outcomes;
  for (const auto& info : verdict_results()) {
    if (info.result != VerdictResult::kExcluded) outcomes.push_back({info.result, {}});
  }
  for (std::string_view reason : kExclusionReasons) {
    outcomes.push_back({VerdictResult::kExcluded, reason});
  }
  outcomes.push_back({VerdictResult::kExcluded, "a curator's note"});
  for (const VerdictOutcome& from : outcomes) {
    for (const VerdictOutcome& to : outcomes) {
      const Kind kind = kind_of(from, to);  // checks that at most one holds
      // Every pair that leaves a PASS is a regression or unverified; none is silently dropped.
      if (from.result == VerdictResult::kPass && to.result != VerdictResult::kPass) {
        EXPECT_TRUE(kind == Kind::kRegression || kind == Kind::kUnverified)
            << "PASS → " << to_string(to.result) << " " << to.exclusion_reason;
      }
    }
  }
}

TEST(VerdictRule, BlamesTheBackendForEveryFailureTimeoutAndCrash) {
  for (const auto& info : verdict_results()) {
    const bool expected =
        info.name.starts_with("FAIL_") || info.name == "TIMEOUT" || info.name == "CRASH";
    EXPECT_EQ(blames_backend(info.result), expected) << info.name;
  }
  EXPECT_TRUE(is_planner_exclusion("too_large"));
  EXPECT_TRUE(is_planner_exclusion("no_parallel_plan"));
  EXPECT_FALSE(is_planner_exclusion("gated"));
  EXPECT_FALSE(is_planner_exclusion(""));
}

TEST(VerdictResultDisplay, EachResultHasItsBadgeClass) {
  const std::pair<std::string_view, std::string_view> expected[] = {
      {"PASS", "pass"},           {"FAIL_LOAD", "fail"},   {"FAIL_COMPILE", "fail"},
      {"FAIL_RUNTIME", "fail"},   {"FAIL_OOM", "fail"},    {"FAIL_MISMATCH", "fail"},
      {"FAIL_JUDGE", "fail"},     {"TIMEOUT", "warn"},     {"CRASH", "fail"},
      {"REFERENCE_FAIL", "warn"}, {"EXCLUDED", "excluded"}};
  ASSERT_EQ(std::size(expected), verdict_results().size());
  for (const auto& [name, css_class] : expected) {
    EXPECT_EQ(display_class(*parse_verdict_result(name)), css_class) << name;
  }
}

TEST(VerdictResultNames, RoundTripAndListInSpecOrder) {
  for (const auto& info : verdict_results()) {
    EXPECT_EQ(parse_verdict_result(to_string(info.result)), info.result);
  }
  EXPECT_EQ(parse_verdict_result("pass"), std::nullopt);
  EXPECT_EQ(verdict_result_names(),
            "PASS, FAIL_LOAD, FAIL_COMPILE, FAIL_RUNTIME, FAIL_OOM, FAIL_MISMATCH, FAIL_JUDGE, "
            "TIMEOUT, CRASH, REFERENCE_FAIL, EXCLUDED");
}

}  // namespace
}  // namespace canrun
