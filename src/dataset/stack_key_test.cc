#include "dataset/stack_key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun::dataset {
namespace {

using ::testing::HasSubstr;

TEST(StackKeyTest, NeuronVersionIsItsOwnFileName) {
  auto key =
      StackKey::make("neuron", "neuronx-cc", "2.16.372.0+4a9b2326", "transformers", "5.18.0");
  ASSERT_TRUE(key.ok()) << key.error().message();
  EXPECT_EQ(key->file_name(),
            "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0.parquet");
  EXPECT_EQ(key->display(), "neuron · neuronx-cc 2.16.372.0+4a9b2326 · transformers 5.18.0");
}

TEST(StackKeyTest, FileNameRoundTripsForAwkwardVersions) {
  for (const char* version : {"2.16.372.0+4a9b2326", "2.13.0+cpu", "1.0-rc1", "1_2", "a/b", "v 1%",
                              "5.0.0.dev0", "x__y", "--"}) {
    auto key = StackKey::make("cpu", "inductor", version, "transformers", version);
    ASSERT_TRUE(key.ok()) << version << ": " << key.error().message();
    const std::string name = key->file_name();
    EXPECT_EQ(name.find('/'), std::string::npos) << name;
    EXPECT_EQ(name.find(' '), std::string::npos) << name;
    auto parsed = StackKey::parse(name);
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.error().message();
    EXPECT_EQ(*parsed, *key) << name;
    EXPECT_EQ(*StackKey::parse(key->stem()), *key);
  }
  EXPECT_EQ(escape_version("1.0-rc1"), "1.0%2Drc1");
}

TEST(StackKeyTest, RefusesBadParts) {
  EXPECT_THAT(StackKey::make("Neuron", "c", "1", "l", "1").error().message(),
              HasSubstr("stack backend \"Neuron\": 'N' is not allowed"));
  EXPECT_THAT(StackKey::make("a__b", "c", "1", "l", "1").error().message(), HasSubstr("\"__\""));
  EXPECT_THAT(StackKey::make("cpu", "c", "", "l", "1").error().message(),
              HasSubstr("stack compiler version is empty"));
  EXPECT_THAT(StackKey::make("cpu", "c", "1\n2", "l", "1").error().message(),
              HasSubstr("newline (0x0a) is not allowed"));
  EXPECT_EQ(StackKey::make("cpu", "c", "1", "../x", "1").error().code(),
            ErrorCode::kInvalidArgument);
}

TEST(StackKeyTest, RefusesMalformedFileNames) {
  for (const char* name :
       {"notes.parquet", "a__b.parquet", "a__b-1__c-2__d-3.parquet",
        "cpu__inductor__transformers-1.parquet", "cpu__inductor-1__transformers-.parquet",
        "cpu__inductor-1%2__transformers-1.parquet",
        "cpu__inductor-1%2E0__transformers-1.parquet"}) {
    auto parsed = StackKey::parse(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_THAT(parsed.error().message(), HasSubstr("is not a stack name"));
  }
}

}  // namespace
}  // namespace canrun::dataset
