// A plain text table for terminal output: columns padded to their widest cell.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace canrun::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::size_t size() const { return rows_.size() - 1; }
  void print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace canrun::cli
