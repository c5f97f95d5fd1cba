#include "hub/safetensors_header.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace canrun::hub {
namespace {

using ::testing::HasSubstr;

std::string prefix(std::uint64_t length) {
  std::string bytes(8, '\0');
  for (int idx = 0; idx < 8; ++idx) bytes[idx] = static_cast<char>((length >> (8 * idx)) & 0xff);
  return bytes;
}

constexpr std::string_view kTwoTensors =
    R"({"__metadata__":{"format":"pt"},)"
    R"("b":{"dtype":"F32","shape":[2,3],"data_offsets":[4,28]},)"
    R"("a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})";

TEST(SafetensorsHeader, ParsesTensorsInDataOrderWithTheirBytes) {
  const auto header = parse_safetensors_header(kTwoTensors, 8 + kTwoTensors.size() + 28);
  ASSERT_TRUE(header.ok()) << header.error().message();
  ASSERT_EQ(header->tensors.size(), 2u);
  EXPECT_EQ(header->tensors[0].name, "a");
  EXPECT_EQ(header->tensors[0].bytes(), 4u);
  EXPECT_EQ(header->tensors[1].name, "b");
  EXPECT_EQ(header->tensors[1].shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(header->data_bytes(), 28u);
  EXPECT_EQ(header->metadata.at("format"), "pt");
}

TEST(SafetensorsHeader, PrefixOverTheLimitIsRefused) {
  const auto length = parse_safetensors_prefix(prefix(kMaxSafetensorsHeaderBytes + 1), {});
  ASSERT_FALSE(length.ok());
  EXPECT_THAT(length.error().message(), HasSubstr("over the 100000000-byte limit"));
}

TEST(SafetensorsHeader, PrefixLongerThanTheFileIsRefused) {
  const auto length = parse_safetensors_prefix(prefix(5000), 1000);
  ASSERT_FALSE(length.ok());
  EXPECT_THAT(length.error().message(), HasSubstr("the file has only 992 after the length"));
}

TEST(SafetensorsHeader, ShortPrefixIsRefused) {
  const auto length = parse_safetensors_prefix("abc", 3);
  ASSERT_FALSE(length.ok());
  EXPECT_THAT(length.error().message(), HasSubstr("shorter than the 8-byte header length"));
}

struct BadHeader {
  std::string json;
  std::string expected;
};

class SafetensorsBadHeader : public ::testing::TestWithParam<BadHeader> {};

TEST_P(SafetensorsBadHeader, GetsItsOwnError) {
  const auto header = parse_safetensors_header(GetParam().json, 8 + GetParam().json.size() + 4);
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(header.error().message(), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SafetensorsBadHeader,
    ::testing::Values(
        BadHeader{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})", "not valid JSON"},
        BadHeader{"[1,2]", "a JSON array, not an object"},
        BadHeader{R"({"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}})",
                  "unknown dtype \"Q4\""},
        BadHeader{R"({"a":{"shape":[1],"data_offsets":[0,4]}})", "no \"dtype\""},
        BadHeader{R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", "no \"shape\""},
        BadHeader{R"({"a":{"dtype":"F32","shape":[1]}})", "no \"data_offsets\""},
        BadHeader{R"({"a":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})",
                  "\"shape\" is not an array"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                  "a shape dimension holds number where a non-negative integer belongs"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})",
                  "more elements than 64 bits can count"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4]}})",
                  "more elements than 64 bits can count"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})",
                  "hold 4 bytes but [2] F32 needs 8"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})",
                  "end before they begin"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                  "outside the file's 4 data bytes"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                  "tensors overlap or leave a gap"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,2]}})",
                  "hold 2 bytes but [] F32 needs 4"},
        BadHeader{R"({"__metadata__":{"format":1}})", "__metadata__ \"format\" is not a string"}));

TEST(SafetensorsHeader, TrailingDataBeyondTheTensorsIsRefused) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  const auto header = parse_safetensors_header(json, 8 + json.size() + 10);
  ASSERT_FALSE(header.ok());
  EXPECT_THAT(header.error().message(), HasSubstr("tensors cover 2 bytes but the file holds 10"));
}

TEST(SafetensorsHeader, SubByteDtypesCountBits) {
  EXPECT_EQ(safetensors_dtype_bits("F4"), 4u);
  const std::string json = R"({"a":{"dtype":"F4","shape":[6],"data_offsets":[0,3]}})";
  const auto header = parse_safetensors_header(json, std::nullopt);
  ASSERT_TRUE(header.ok()) << header.error().message();
  EXPECT_EQ(header->data_bytes(), 3u);
}

}  // namespace
}  // namespace canrun::hub
