#include "dataset/causes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dataset/test_rows.h"

namespace canrun::dataset {
namespace {

using ::testing::ElementsAre;
using testing::minimal_row;
using ::testing::Pair;

VerdictRow failed(std::string model, VerdictResult result, std::string signature,
                  std::string error = "") {
  VerdictRow row = minimal_row(std::move(model), result);
  row.error_signature = std::move(signature);
  row.error = error.empty() ? "Traceback ...\nRuntimeError: " + *row.error_signature : error;
  return row;
}

TEST(FailureCausesTest, GroupsFailuresBySignatureMostFirst) {
  const std::string compile = "CompilerError | neuronx-cc failed on op N";
  std::vector<VerdictRow> rows = {
      minimal_row("a/passes", VerdictResult::kPass),
      minimal_row("a/excluded", VerdictResult::kExcluded),
      failed("b/two", VerdictResult::kFailCompile, compile),
      failed("a/one", VerdictResult::kFailCompile, compile),
      failed("c/three", VerdictResult::kTimeout, compile),
      failed("d/oom", VerdictResult::kFailOom, "OutOfMemoryError | N bytes"),
  };
  rows.push_back(failed("e/vision", VerdictResult::kFailLoad, "ImportError | x"));
  rows.back().task = "image-text-to-text";
  rows.push_back(failed("f/bare", VerdictResult::kCrash, ""));

  const auto causes = failure_causes(rows);
  ASSERT_EQ(causes.size(), 4U);
  EXPECT_EQ(causes[0].signature, compile);
  EXPECT_EQ(causes[0].count, 3U);
  EXPECT_THAT(causes[0].results, ElementsAre(Pair("FAIL_COMPILE", 2U), Pair("TIMEOUT", 1U)));
  EXPECT_THAT(causes[0].models, ElementsAre("a/one", "b/two", "c/three"));
  EXPECT_EQ(causes[0].excerpt, "Traceback ...\nRuntimeError: " + compile);  // a/one's
  // Ties: by signature; a row without one is "(none)"; another task's model says its task.
  EXPECT_EQ(causes[1].signature, kNoSignature);
  EXPECT_EQ(causes[2].signature, "ImportError | x");
  EXPECT_THAT(causes[2].models, ElementsAre("e/vision (image-text-to-text)"));
  EXPECT_EQ(causes[3].signature, "OutOfMemoryError | N bytes");
}

TEST(FailureCausesTest, ExcerptIsTheEndOfTheErrorOnALineBoundary) {
  std::string error;
  for (int line = 0; line < 100; ++line)
    error += "  File \"x.py\", line " + std::to_string(line) + "\n";
  error += "ValueError: the end\n";
  const auto causes = failure_causes({failed("a/b", VerdictResult::kFailRuntime, "s", error)});
  ASSERT_EQ(causes.size(), 1U);
  const std::string& excerpt = causes[0].excerpt;
  EXPECT_LE(excerpt.size(), kCauseExcerptBytes + 3);
  EXPECT_TRUE(excerpt.starts_with("…  File")) << excerpt;
  EXPECT_TRUE(excerpt.ends_with("ValueError: the end")) << excerpt;
  EXPECT_TRUE(failure_causes({minimal_row("a/b", VerdictResult::kPass)}).empty());
}

TEST(FailureCausesTest, ExcerptEndsWithTheErrorNotTheAdviceAfterIt) {
  const std::string error =
      "Traceback (most recent call last):\nKeyError: 'jais2'\n\nDuring handling of the above "
      "exception, another exception occurred:\n\n    raise ValueError(\nValueError: has model "
      "type `jais2` but Transformers does not recognize this architecture.\n\nYou can update "
      "Transformers with `pip install --upgrade transformers`.\n";
  const auto causes = failure_causes({failed("a/b", VerdictResult::kFailLoad, "s", error)});
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_TRUE(causes[0].excerpt.ends_with("does not recognize this architecture."))
      << causes[0].excerpt;
  EXPECT_THAT(causes[0].model_types, ElementsAre("jais2"));
}

TEST(FailureCausesTest, ARowsOwnModelTypeComesBeforeWhatItsErrorNames) {
  VerdictRow row = failed("a/b", VerdictResult::kTimeout, "TIMEOUT", "Loading weights: 100%");
  VerdictRow named = failed("a/c", VerdictResult::kTimeout, "TIMEOUT",
                            "File \"x/transformers/models/jamba/modeling_jamba.py\"");
  row.model_type = "zamba2";
  named.model_type = "jamba";
  const auto causes = failure_causes({row, named});
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_THAT(causes[0].model_types, ElementsAre("jamba", "zamba2"));
}

TEST(FailureCausesTest, ModelTypesComeFromTheErrorOrTheModelsCode) {
  EXPECT_THAT(model_types_in("model type `nanochat` but ... model type `nanochat`"),
              ElementsAre("nanochat"));
  // Else the model's own code the traceback passed through (not transformers' auto classes).
  EXPECT_THAT(model_types_in("File \"x/transformers/models/auto/auto_factory.py\"\n"
                             "File \"x/transformers/models/gpt_neox/modeling_gpt_neox.py\"\n"
                             "File \"x/transformers/models/auto/y.py\"\nRuntimeError: x"),
              ElementsAre("gpt_neox"));
  EXPECT_TRUE(model_types_in("neuronx-cc: error: unsupported op").empty());
}

}  // namespace
}  // namespace canrun::dataset
