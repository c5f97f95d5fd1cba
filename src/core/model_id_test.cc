#include "core/model_id.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace canrun {
namespace {

using ::testing::HasSubstr;

// Expect `text` to be refused as an invalid argument whose message contains `why`.
void ExpectRefused(std::string_view text, std::string_view why) {
  const auto parsed = ModelId::parse(text);
  ASSERT_FALSE(parsed.ok()) << "accepted: " << text;
  EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(parsed.error().message(), HasSubstr("invalid model id"));
  EXPECT_THAT(parsed.error().message(), HasSubstr(std::string(why)));
}

TEST(ModelIdTest, AcceptsRealHubIds) {
  for (const char* text :
       {"Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B-Instruct",
        "HuggingFaceTB/SmolLM2-135M-Instruct", "mistralai/Mixtral-8x7B-v0.1",
        "google/gemma-3-4b-it", "deepseek-ai/DeepSeek-V3", "sentence-transformers/all-MiniLM-L6-v2",
        "a/b", "user_1/model_name.v2"}) {
    const auto parsed = ModelId::parse(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message();
    EXPECT_EQ(parsed->str(), text);
  }
}

TEST(ModelIdTest, SplitsOwnerAndName) {
  const auto parsed = ModelId::parse("Qwen/Qwen3-0.6B");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->owner(), "Qwen");
  EXPECT_EQ(parsed->name(), "Qwen3-0.6B");
  EXPECT_EQ(parsed->cache_folder_name(), "models--Qwen--Qwen3-0.6B");
}

TEST(ModelIdTest, RefusesEmptyAndMissingParts) {
  ExpectRefused("", "it is empty");
  ExpectRefused("gpt2", "it has 0 '/'");
  ExpectRefused("/name", "its namespace is empty");
  ExpectRefused("owner/", "its name is empty");
  ExpectRefused("a/b/c", "it has 2 '/'");
}

TEST(ModelIdTest, RefusesQuotesAndShellMetacharacters) {
  ExpectRefused("org/model\"", "'\"' at position 10");
  ExpectRefused("org/model'", "''' at position 10");
  ExpectRefused("org/a;rm -rf", "';' at position 6");
  ExpectRefused("org/$(id)", "'$' at position 5");
  ExpectRefused("org/`id`", "'`' at position 5");
  ExpectRefused("org/a|b", "'|' at position 6");
  ExpectRefused("org/a&b", "'&' at position 6");
  ExpectRefused("org/a>b", "'>' at position 6");
  ExpectRefused("org/a b", "space (0x20) at position 6");
  ExpectRefused("org/a\\b", "'\\' at position 6");
}

TEST(ModelIdTest, RefusesControlBytesAndNonAscii) {
  ExpectRefused("org/a\nimport os", "newline (0x0a) at position 6");
  ExpectRefused(std::string("org/a\0b", 7), "NUL (0x00) at position 6");
  ExpectRefused("org/a\rb", "carriage return (0x0d)");
  ExpectRefused("org/a\tb", "tab (0x09)");
  ExpectRefused("org/a\x1b[31m", "control byte 0x1b");
  ExpectRefused("org/mod\xc3\xa9le", "non-ASCII byte 0xc3 at position 8");
}

TEST(ModelIdTest, RefusesPathTraversal) {
  ExpectRefused("../etc", "its namespace contains \"..\"");
  ExpectRefused("org/..", "its name contains \"..\"");
  ExpectRefused("org/a..b", "its name contains \"..\"");
  ExpectRefused("../../etc/passwd", "'/'");
  ExpectRefused("./model", "its namespace starts with '.'");
}

TEST(ModelIdTest, RefusesDoubleDashAndBadEdges) {
  ExpectRefused("org/a--b", "contains \"--\"");
  ExpectRefused("org/-model", "its name starts with '-'");
  ExpectRefused("org/model-", "its name ends with '-'");
  ExpectRefused("org/model.", "its name ends with '.'");
  ExpectRefused("-org/model", "its namespace starts with '-'");
  ExpectRefused("org/model.git", "ends with \".git\"");
}

TEST(ModelIdTest, LengthLimitIs96PerPart) {
  const std::string longest(96, 'a');
  EXPECT_TRUE(ModelId::parse("org/" + longest).ok());
  EXPECT_TRUE(ModelId::parse(longest + "/m").ok());
  ExpectRefused("org/" + longest + "a", "its name is 97 characters long; at most 96");
  ExpectRefused(longest + "a/m", "its namespace is 97 characters long");
}

TEST(ModelIdTest, VeryLongHostileInputIsCutInTheMessage) {
  const std::string huge = "org/" + std::string(100000, 'x');
  const auto parsed = ModelId::parse(huge);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.error().message(), HasSubstr("100000 characters long"));
  EXPECT_THAT(parsed.error().message(), HasSubstr("(100004 bytes in all)"));
  EXPECT_LT(parsed.error().message().size(), 300u);
}

TEST(ModelIdTest, MessageEscapesTheInput) {
  const auto parsed = ModelId::parse("org/a\n\"b");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.error().message(), HasSubstr("\"org/a\\n\\\"b\""));
  EXPECT_EQ(parsed.error().message().find('\n'), std::string::npos);
}

// --- Revision ------------------------------------------------------------------------------

void ExpectRevisionRefused(std::string_view text, std::string_view why) {
  const auto parsed = Revision::parse(text);
  ASSERT_FALSE(parsed.ok()) << "accepted: " << text;
  EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(parsed.error().message(), HasSubstr("invalid revision"));
  EXPECT_THAT(parsed.error().message(), HasSubstr(std::string(why)));
}

TEST(RevisionTest, AcceptsBranchesAndTags) {
  for (const char* text : {"main", "v1.0", "refs/pr/12", "release-2024_01", "v2.0+cu118"}) {
    const auto parsed = Revision::parse(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message();
    EXPECT_EQ(parsed->kind(), Revision::Kind::kRef);
    EXPECT_EQ(parsed->str(), text);
  }
  EXPECT_EQ(Revision::main_branch().str(), "main");
}

TEST(RevisionTest, FortyHexIsACommitKeptLowerCase) {
  const auto parsed = Revision::parse("C1B7E3D4A5F60718293A4B5C6D7E8F9012345678");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->is_commit());
  EXPECT_EQ(parsed->str(), "c1b7e3d4a5f60718293a4b5c6d7e8f9012345678");
  // 39 or 41 hex digits are not a commit but may still be a branch name.
  EXPECT_EQ(Revision::parse(std::string(39, 'a'))->kind(), Revision::Kind::kRef);
  EXPECT_EQ(Revision::parse(std::string(41, 'a'))->kind(), Revision::Kind::kRef);
}

TEST(RevisionTest, RefusesHostileInput) {
  ExpectRevisionRefused("", "it is empty");
  ExpectRevisionRefused("main\"", "'\"' at position 5");
  ExpectRevisionRefused("main'; import os", "''' at position 5");
  ExpectRevisionRefused("main\nx", "newline (0x0a)");
  ExpectRevisionRefused(std::string("ma\0in", 5), "NUL (0x00)");
  ExpectRevisionRefused("$(reboot)", "'$' at position 1");
  ExpectRevisionRefused("a b", "space (0x20)");
  ExpectRevisionRefused("../../etc", "contains \"..\"");
  ExpectRevisionRefused("-rf", "starts with '-'");
  ExpectRevisionRefused("/main", "starts or ends with '/'");
  ExpectRevisionRefused("refs//pr", "contains \"//\"");
  ExpectRevisionRefused("refs/.hidden", "starts with '.'");
  ExpectRevisionRefused("main.lock", "ends with \".lock\"");
  ExpectRevisionRefused("main.", "ends with '.'");
  ExpectRevisionRefused("main@{1}", "'@' at position 5");
  ExpectRevisionRefused(std::string(256, 'a'), "256 characters long; at most 255");
}

}  // namespace
}  // namespace canrun
