#include "core/text.h"

#include <gtest/gtest.h>

namespace canrun {
namespace {

TEST(QuoteForMessageTest, EscapesWhatATerminalWouldInterpret) {
  EXPECT_EQ(quote_for_message("plain"), "\"plain\"");
  EXPECT_EQ(quote_for_message("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quote_for_message("a\nb\tc"), "\"a\\nb\\tc\"");
  EXPECT_EQ(quote_for_message(std::string_view("\0\x1b", 2)), "\"\\x00\\x1b\"");
  EXPECT_EQ(quote_for_message("\xc3\xa9"), "\"\\xc3\\xa9\"");
}

TEST(QuoteForMessageTest, CutsLongText) {
  EXPECT_EQ(quote_for_message("abcdef", 3), "\"abc\"... (6 bytes in all)");
}

TEST(Utf8Test, AcceptsWellFormedAndRefusesMalformed) {
  EXPECT_TRUE(is_valid_utf8("ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));              // truncated
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xff"));
}

}  // namespace
}  // namespace canrun

namespace canrun {
namespace {

TEST(QuoteForDisplayTest, KeepsUtf8EscapesTheRest) {
  EXPECT_EQ(quote_for_display("café 日本\n\"x\"\x1b"), "\"café 日本\\n\\\"x\\\"\\x1b\"");
  EXPECT_EQ(quote_for_display("bad \xff end"), "\"bad \\xff end\"");
  EXPECT_EQ(quote_for_display("abcdef", 3), "\"abc\"... (6 bytes in all)");
}

}  // namespace
}  // namespace canrun
