// The long generation's verdict on drift: a model that matches the CPU reference for the first
// 32 tokens may part from it later (a cache position past a boundary computed wrongly, rounding
// that grows with the sequence). Fed the reference's tokens (teacher-forced), each position
// agreed or not; over all of them the agreement must reach kAgreementThreshold, and when it does
// not, the model "drifts after token K": K counts the tokens before the first disagreement of the
// first window of kDriftWindow positions whose own agreement is below the threshold (a window,
// so that one near-tie flipped by rounding early on is not called the drift).
//
// Thread safety: a pure function.
#pragma once

#include <optional>
#include <vector>

namespace canrun::verify {

inline constexpr int kDriftWindow = 16;

struct LongAgreement {
  double agreement = 0;  //!< the share of positions that agreed
  int positions = 0;
  //! Set when `agreement` is below the threshold: the tokens before the drift.
  std::optional<int> drifts_after;
};

//! Nothing when `agreed` is empty.
std::optional<LongAgreement> long_agreement(const std::vector<bool>& agreed, double threshold);

}  // namespace canrun::verify
