// Test tool: reads verdict rows as JSON lines on stdin and upserts them into the dataset
// folder given as argv[1], one write per stack, through the same DatasetDir::upsert that
// canrun uses. Exit 0 on success, 1 when a write fails, 2 on bad input.
#include <iostream>
#include <map>
#include <string>

#include "dataset/dataset.h"
#include "dataset/row_json.h"

int main(int argc, char** argv) {
  using namespace canrun::dataset;
  if (argc != 2) {
    std::cerr << "usage: dataset_write_rows DATASET_DIR < rows.jsonl\n";
    return 2;
  }
  std::map<std::string, std::vector<VerdictRow>> by_stack;
  std::string line;
  for (int line_number = 1; std::getline(std::cin, line); ++line_number) {
    if (line.empty()) continue;
    auto json = nlohmann::json::parse(line, nullptr, false);
    auto row = row_from_json(json);
    if (!row.ok()) {
      std::cerr << "line " << line_number << ": " << row.error().message() << '\n';
      return 2;
    }
    auto key = stack_key_of(*row);
    if (!key.ok()) {
      std::cerr << "line " << line_number << ": " << key.error().message() << '\n';
      return 2;
    }
    by_stack[key->stem()].push_back(std::move(*row));
  }
  const DatasetDir dataset(argv[1]);
  for (auto& [stem, rows] : by_stack) {
    if (auto status = dataset.upsert(std::move(rows)); !status.ok()) {
      std::cerr << stem << ": " << status.error().message() << '\n';
      return 1;
    }
  }
  return 0;
}
