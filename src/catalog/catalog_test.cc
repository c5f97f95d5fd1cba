#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "catalog/exclusions.h"
#include "catalog/selected_list.h"

namespace canrun::catalog {
namespace {

using ::testing::HasSubstr;

TEST(SelectedListTest, KeepsTheCuratorsOrderPerTask) {
  auto list = SelectedList::parse(R"(
[text-generation]
models = [
  { id = "Qwen/Qwen3-0.6B" },
  { id = "meta-llama/Llama-3.1-8B-Instruct", note = "Gated: needs a token." },
  { id = "HuggingFaceTB/SmolLM2-135M-Instruct" },
]
[image-text-to-text]
models = [ { id = "google/gemma-3-4b-it" } ]
)",
                                  "selected.toml");
  ASSERT_TRUE(list.ok()) << list.error().message();
  const auto& text = list->for_task("text-generation");
  ASSERT_EQ(text.size(), 3u);
  EXPECT_EQ(text[0].id.str(), "Qwen/Qwen3-0.6B");
  EXPECT_EQ(text[1].note, "Gated: needs a token.");
  EXPECT_EQ(text[2].id.str(), "HuggingFaceTB/SmolLM2-135M-Instruct");
  EXPECT_EQ(list->for_task("image-text-to-text").size(), 1u);
  EXPECT_TRUE(list->for_task("feature-extraction").empty());
  EXPECT_EQ(list->tasks(), (std::vector<std::string>{"image-text-to-text", "text-generation"}));
}

TEST(SelectedListTest, ErrorsNameFileLineAndProblem) {
  auto bad_id =
      SelectedList::parse("[text-generation]\nmodels = [\n { id = \"org/a;rm\" },\n]\n", "s.toml");
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(bad_id.error().message(), HasSubstr("s.toml:3: invalid model id \"org/a;rm\""));
  EXPECT_THAT(SelectedList::parse("[text-generation\n", "s.toml").error().message(),
              HasSubstr("s.toml:1:"));
  EXPECT_THAT(SelectedList::parse("[t]\nmodels = [{ id = \"a/b\" }, { id = \"a/b\" }]\n", "s.toml")
                  .error()
                  .message(),
              HasSubstr("a/b is listed twice in [t]"));
  EXPECT_THAT(SelectedList::parse("[t]\nmodel = []\n", "s.toml").error().message(),
              HasSubstr("unknown key model"));
  EXPECT_THAT(
      SelectedList::parse("[t]\nmodels = [{ name = \"a/b\" }]\n", "s.toml").error().message(),
      HasSubstr("unknown key name"));
  EXPECT_THAT(SelectedList::parse("t = 3\n", "s.toml").error().message(),
              HasSubstr("must be a table"));
}

TEST(ExclusionsTest, FirstMatchingRuleWins) {
  auto exclusions = Exclusions::parse(R"(
[[exclude]]
match = "meta-llama/Llama-3.1-405B*"
reason = "too_large"
why = "Needs more than 16 cores."

[[exclude]]
match = "meta-llama/*"
reason = "gated"
why = "Gated: needs a Hub token."

[[exclude]]
match = "org/model-?"
reason = "note"
why = "Duplicate of org/model."
)",
                                      "exclusions.toml");
  ASSERT_TRUE(exclusions.ok()) << exclusions.error().message();
  auto match = [&](const char* id) { return exclusions->match(*ModelId::parse(id)); };
  EXPECT_EQ(match("meta-llama/Llama-3.1-405B-Instruct")->reason, "too_large");
  EXPECT_EQ(match("meta-llama/Llama-3.1-8B")->reason, "gated");
  EXPECT_EQ(match("meta-llama/Llama-3.1-8B")->why, "Gated: needs a Hub token.");
  EXPECT_EQ(match("org/model-2")->reason, "note");
  EXPECT_FALSE(match("org/model-22").has_value());
  EXPECT_FALSE(match("Qwen/Qwen3-0.6B").has_value());
}

TEST(ExclusionsTest, RefusesBadEntries) {
  auto unknown =
      Exclusions::parse("[[exclude]]\nmatch = \"a/*\"\nreason = \"ugly\"\nwhy = \"x\"\n", "e.toml");
  EXPECT_THAT(unknown.error().message(),
              HasSubstr("e.toml:1: reason \"ugly\" is not one of low_priority"));
  auto missing = Exclusions::parse("[[exclude]]\nmatch = \"a/*\"\nreason = \"gated\"\n", "e.toml");
  EXPECT_THAT(missing.error().message(), HasSubstr("needs match, reason and why"));
  auto hostile = Exclusions::parse(
      "[[exclude]]\nmatch = \"a/$(x)\"\nreason = \"gated\"\nwhy = \"x\"\n", "e.toml");
  EXPECT_THAT(hostile.error().message(), HasSubstr("'$' is in no model id"));
  EXPECT_EQ(Exclusions::parse("", "e.toml")->size(), 0u);
}

TEST(GlobTest, StarAndQuestionMark) {
  EXPECT_TRUE(glob_match("*", "a/b"));
  EXPECT_TRUE(glob_match("a/*", "a/b"));
  EXPECT_TRUE(glob_match("*/gemma-*-it", "google/gemma-3-4b-it"));
  EXPECT_FALSE(glob_match("*/gemma-*-it", "google/gemma-3-4b"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
  EXPECT_TRUE(glob_match("a**b", "ab"));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_TRUE(glob_match(std::string(30, '*') + "b", std::string(1000, 'a') + "b"));
}

}  // namespace
}  // namespace canrun::catalog

namespace canrun::catalog {
namespace {

// The files shipped in catalog/ must always load.
TEST(ShippedCatalogTest, SelectedAndExclusionsLoad) {
  const std::filesystem::path root = CANRUN_SOURCE_DIR;
  auto selected = SelectedList::load(root / "catalog" / "selected.toml");
  ASSERT_TRUE(selected.ok()) << selected.error().message();
  EXPECT_GE(selected->for_task("text-generation").size(), 8u);
  EXPECT_GE(selected->for_task("image-text-to-text").size(), 2u);
  auto exclusions = Exclusions::load(root / "catalog" / "exclusions.toml");
  ASSERT_TRUE(exclusions.ok()) << exclusions.error().message();
  // Gated models are not excluded wholesale: a campaign tests them when the token has access.
  EXPECT_FALSE(exclusions->match(*ModelId::parse("meta-llama/Llama-3.1-8B-Instruct")));
  EXPECT_EQ(exclusions->match(*ModelId::parse("bartowski/Qwen3-8B-GGUF"))->reason,
            "no_safetensors");
}

}  // namespace
}  // namespace canrun::catalog
