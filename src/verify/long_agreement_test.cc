#include "verify/long_agreement.h"

#include <gtest/gtest.h>

#include "verify/verification.h"

namespace canrun::verify {
namespace {

std::vector<bool> agreed_until(int right, int total) {
  std::vector<bool> agreed(static_cast<std::size_t>(total), false);
  for (int i = 0; i < right; ++i) agreed[static_cast<std::size_t>(i)] = true;
  return agreed;
}

TEST(LongAgreementTest, NothingMeasuredIsNoAnswer) {
  EXPECT_FALSE(long_agreement({}, kAgreementThreshold).has_value());
}

TEST(LongAgreementTest, AModelRightThroughoutDoesNotDrift) {
  const auto all = long_agreement(agreed_until(128, 128), kAgreementThreshold);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->agreement, 1.0);
  EXPECT_EQ(all->positions, 128);
  EXPECT_FALSE(all->drifts_after.has_value());
}

TEST(LongAgreementTest, AModelWrongFromAPositionOnDriftsThere) {
  // Right for 40 tokens, wrong for the 88 after: what a cache position past 40 computed wrongly
  // looks like.
  const auto drift = long_agreement(agreed_until(40, 128), kAgreementThreshold);
  ASSERT_TRUE(drift.has_value());
  EXPECT_DOUBLE_EQ(drift->agreement, 40.0 / 128);
  EXPECT_EQ(drift->drifts_after, 40);
}

TEST(LongAgreementTest, AFewScatteredFlipsAboveTheThresholdAreNoDrift) {
  std::vector<bool> agreed = agreed_until(128, 128);
  for (const int flipped : {5, 50, 90, 120}) agreed[flipped] = false;  // 124 of 128
  const auto few = long_agreement(agreed, kAgreementThreshold);
  ASSERT_TRUE(few.has_value());
  EXPECT_FALSE(few->drifts_after.has_value());
}

TEST(LongAgreementTest, AnEarlyLoneFlipIsNotWhereItDrifts) {
  std::vector<bool> agreed = agreed_until(60, 128);
  agreed[3] = false;  // one near-tie flipped early on; the drift starts at 60
  const auto drift = long_agreement(agreed, kAgreementThreshold);
  ASSERT_TRUE(drift.has_value());
  EXPECT_EQ(drift->drifts_after, 60);
}

TEST(LongAgreementTest, AModelWrongFromTheStartDriftsAfterNone) {
  const auto none = long_agreement(agreed_until(0, 40), kAgreementThreshold);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->agreement, 0.0);
  EXPECT_EQ(none->drifts_after, 0);
}

}  // namespace
}  // namespace canrun::verify
