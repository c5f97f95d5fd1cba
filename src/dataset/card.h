// The dataset card DATASET/README.md: YAML front matter that Hub tooling reads (configs,
// data_files, license, tags), the stacks present, the columns, the result meanings, and how
// to query the data with pandas and DuckDB.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dataset/stack_key.h"

namespace canrun::dataset {

struct StackSummary {
  StackKey key;
  std::int64_t rows = 0;
  std::map<std::string, std::int64_t> results;  //!< result → rows
};

//! The card's Markdown text for these stacks (in the order given); `census`: a census dataset
//! (src/census), whose card first says what a census verdict means.
std::string render_card(const std::vector<StackSummary>& stacks, bool census = false);

}  // namespace canrun::dataset
