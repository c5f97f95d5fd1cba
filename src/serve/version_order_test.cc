#include "serve/version_order.h"

#include <gtest/gtest.h>

namespace canrun::serve {
namespace {

TEST(CompareVersions, ComparesPartsAsNumbersNotText) {
  EXPECT_GT(compare_versions("2.16.372.0", "2.9.1"), 0);
  EXPECT_LT(compare_versions("2.9.1", "2.16.372.0"), 0);
  EXPECT_GT(compare_versions("5.10.0", "5.9.3"), 0);
  EXPECT_EQ(compare_versions("5.18.0", "5.18.0"), 0);
}

TEST(CompareVersions, LongerIsNewerWhenThePrefixIsEqual) {
  EXPECT_GT(compare_versions("2.9.1", "2.9"), 0);
}

TEST(CompareVersions, ReleaseIsNewerThanItsPreRelease) {
  EXPECT_GT(compare_versions("5.0.0", "5.0.0rc1"), 0);
  EXPECT_GT(compare_versions("5.0.0rc2", "5.0.0rc1"), 0);
}

TEST(CompareVersions, LocalLabelOnlyBreaksTies) {
  EXPECT_GT(compare_versions("2.17.1.0+00000000", "2.16.372.0+ffffffff"), 0);
  EXPECT_NE(compare_versions("2.16.372.0+4a9b2326", "2.16.372.0+5b0c3437"), 0);
}

}  // namespace
}  // namespace canrun::serve
