#include "cli/table.h"

#include <algorithm>

namespace canrun::cli {
namespace {

//! Display width, counting each UTF-8 character once.
std::size_t width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

}  // namespace

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t col = 0; col < row.size(); ++col)
      widths[col] = std::max(widths[col], width(row[col]));
  }
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t col = 0; col < row.size(); ++col) {
      line += row[col];
      if (col + 1 < row.size()) line += std::string(widths[col] - width(row[col]) + 2, ' ');
    }
    out << line << '\n';
  }
}

}  // namespace canrun::cli
