#include "verify/long_agreement.h"

#include <algorithm>

namespace canrun::verify {

std::optional<LongAgreement> long_agreement(const std::vector<bool>& agreed, double threshold) {
  if (agreed.empty()) return std::nullopt;
  const auto count = [&](std::size_t from, std::size_t to) {
    return static_cast<double>(std::count(agreed.begin() + static_cast<std::ptrdiff_t>(from),
                                          agreed.begin() + static_cast<std::ptrdiff_t>(to), true));
  };
  const std::size_t size = agreed.size();
  LongAgreement out;
  out.positions = static_cast<int>(size);
  out.agreement = count(0, size) / static_cast<double>(size);
  if (out.agreement >= threshold) return out;
  const std::size_t window = std::min<std::size_t>(kDriftWindow, size);
  std::size_t start = 0;
  while (start + window < size &&
         count(start, start + window) / static_cast<double>(window) >= threshold) {
    ++start;
  }
  // The first disagreement from the window's start (there is one: the window is below the
  // threshold, or it is the last and the whole is).
  std::size_t first = start;
  while (first < size && agreed[first]) ++first;
  if (first == size) {  // the last window agreed enough: the first disagreement of all
    first =
        static_cast<std::size_t>(std::find(agreed.begin(), agreed.end(), false) - agreed.begin());
  }
  out.drifts_after = static_cast<int>(first);
  return out;
}

}  // namespace canrun::verify
