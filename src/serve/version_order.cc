#include "serve/version_order.h"

#include <vector>

namespace canrun::serve {
namespace {

std::vector<std::string_view> split_parts(std::string_view version) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t pos = 0; pos <= version.size(); ++pos) {
    if (pos == version.size() || version[pos] == '.' || version[pos] == '-' ||
        version[pos] == '_' || version[pos] == '+') {
      parts.push_back(version.substr(start, pos - start));
      start = pos + 1;
    }
  }
  return parts;
}

//! Compares digit strings as numbers of any length.
int compare_numbers(std::string_view a, std::string_view b) {
  while (a.size() > 1 && a.front() == '0') a.remove_prefix(1);
  while (b.size() > 1 && b.front() == '0') b.remove_prefix(1);
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  const int order = a.compare(b);
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

int compare_parts(std::string_view a, std::string_view b) {
  std::size_t a_digits = 0;
  while (a_digits < a.size() && a[a_digits] >= '0' && a[a_digits] <= '9') ++a_digits;
  std::size_t b_digits = 0;
  while (b_digits < b.size() && b[b_digits] >= '0' && b[b_digits] <= '9') ++b_digits;
  if (a_digits > 0 && b_digits > 0) {
    if (const int order = compare_numbers(a.substr(0, a_digits), b.substr(0, b_digits))) {
      return order;
    }
    a.remove_prefix(a_digits);
    b.remove_prefix(b_digits);
    // "0" (a release) is newer than "0rc1" (one of its pre-releases).
    if (a.empty() != b.empty()) return a.empty() ? 1 : -1;
  } else if ((a_digits > 0) != (b_digits > 0)) {
    return a_digits > 0 ? 1 : -1;
  }
  const int order = a.compare(b);
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
  const std::size_t a_plus = a.find('+');
  const std::size_t b_plus = b.find('+');
  const auto a_parts = split_parts(a.substr(0, a_plus));
  const auto b_parts = split_parts(b.substr(0, b_plus));
  for (std::size_t idx = 0; idx < a_parts.size() || idx < b_parts.size(); ++idx) {
    if (idx >= a_parts.size()) return -1;
    if (idx >= b_parts.size()) return 1;
    if (const int order = compare_parts(a_parts[idx], b_parts[idx])) return order;
  }
  const std::string_view a_local = a_plus == std::string_view::npos ? "" : a.substr(a_plus + 1);
  const std::string_view b_local = b_plus == std::string_view::npos ? "" : b.substr(b_plus + 1);
  const int order = a_local.compare(b_local);
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

}  // namespace canrun::serve
