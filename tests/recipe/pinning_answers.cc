// Prints canrun's answers to the pinning case table (src/backend/pinning_cases.json), for
// tests/recipe/test_pinning.py to hold beside the rendered run.py's: a JSON list with, per case,
// a list with, per rank, {"share": "..."} or {"error": "..."}.
//
// Usage: pinning_answers CASES.json
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backend/pinning.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: pinning_answers CASES.json\n";
    return 2;
  }
  std::ifstream file(argv[1]);
  if (!file) {
    std::cerr << "pinning_answers: cannot read " << argv[1] << "\n";
    return 2;
  }
  const auto table = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (!table.is_object() || !table.contains("cases")) {
    std::cerr << "pinning_answers: " << argv[1] << " is not a case table\n";
    return 2;
  }
  auto answers = nlohmann::json::array();
  for (const auto& item : table["cases"]) {
    const int cores = item.at("cores").get<int>();
    auto ranks = nlohmann::json::array();
    for (int rank = 0; rank < cores; ++rank) {
      const auto share = canrun::backend::rank_share(
          item.at("syntax").get<std::string>(), item.at("given").get<std::string>(), cores, rank);
      ranks.push_back(share.ok() ? nlohmann::json{{"share", *share}}
                                 : nlohmann::json{{"error", share.error().message()}});
    }
    answers.push_back(ranks);
  }
  std::cout << answers.dump(1) << "\n";
  return 0;
}
