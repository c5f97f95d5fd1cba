// ModelId::parse against the same rules written as one std::regex (the way a script would
// check them), over a mix of real ids and hostile input. Report the ratio of the two.
#include <benchmark/benchmark.h>

#include <regex>
#include <string>
#include <vector>

#include "core/model_id.h"

namespace {

const std::vector<std::string>& inputs() {
  static const std::vector<std::string> kInputs = {"Qwen/Qwen3-0.6B",
                                                   "meta-llama/Llama-3.1-8B-Instruct",
                                                   "org/a;rm -rf /",
                                                   "../etc/passwd",
                                                   "HuggingFaceTB/SmolLM2-135M-Instruct",
                                                   "org/model\n",
                                                   "mistralai/Mixtral-8x7B-v0.1",
                                                   "org/a--b"};
  return kInputs;
}

void BM_ModelIdParse(benchmark::State& state) {
  std::size_t accepted = 0;
  for (auto _ : state) {
    for (const auto& input : inputs()) accepted += canrun::ModelId::parse(input).ok();
  }
  benchmark::DoNotOptimize(accepted);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * inputs().size()));
}
BENCHMARK(BM_ModelIdParse);

void BM_RegexBaseline(benchmark::State& state) {
  static const std::regex kRule(
      R"(^(?!.*(--|\.\.))[A-Za-z0-9_]([A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?/[A-Za-z0-9_]([A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?$)",
      std::regex::ECMAScript | std::regex::optimize);
  std::size_t accepted = 0;
  for (auto _ : state) {
    for (const auto& input : inputs()) accepted += std::regex_match(input, kRule);
  }
  benchmark::DoNotOptimize(accepted);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * inputs().size()));
}
BENCHMARK(BM_RegexBaseline);

}  // namespace

BENCHMARK_MAIN();
