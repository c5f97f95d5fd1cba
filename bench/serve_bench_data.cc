// Writes a synthetic dataset for bench/serve_vs_baselines.py: STACKS neuron stacks (compiler
// versions 2.<k>.0.0, newest last) of ROWS text-generation rows each, over the model ids of
// bench_model_id(i) in serve_vs_baselines.py (the same formula here and there).
//
// usage: bench_serve_data DATASET_DIR STACKS ROWS
// Files are encoded with the dataset's own Parquet codec and written atomically, one per stack.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "core/atomic_file.h"
#include "core/parallel.h"
#include "dataset/parquet_codec.h"
#include "dataset/test_rows.h"

namespace {

using canrun::dataset::VerdictRow;

std::string bench_model_id(std::size_t idx) {
  if (idx % 40 == 0) return fmt::format("Qwen/Qwen-bench-{}", idx);
  return fmt::format("org-{}/model-{}", idx % 997, idx);
}

std::vector<VerdictRow> stack_rows(std::size_t stack, std::size_t count) {
  using canrun::VerdictResult;
  static constexpr VerdictResult kResults[] = {
      VerdictResult::kPass,        VerdictResult::kPass,    VerdictResult::kPass,
      VerdictResult::kFailCompile, VerdictResult::kFailOom, VerdictResult::kPass,
      VerdictResult::kTimeout,     VerdictResult::kPass,    VerdictResult::kFailRuntime,
      VerdictResult::kPass};
  std::vector<VerdictRow> rows;
  rows.reserve(count);
  const std::string compiler_version = fmt::format("2.{}.0.0", stack + 1);
  for (std::size_t idx = 0; idx < count; ++idx) {
    VerdictRow row = canrun::dataset::testing::full_row(bench_model_id(idx));
    row.compiler_version = compiler_version;
    row.stack = fmt::format(R"({{"neuronx-cc":"{}","python":"3.11.7","transformers":"5.18.0"}})",
                            compiler_version);
    row.result = kResults[(idx * 7 + stack) % 10];
    if (row.result != VerdictResult::kPass) {
      const std::string_view result = canrun::to_string(row.result);
      row.error = fmt::format("RuntimeError: synthetic {} at step {}", result, idx);
      row.error_signature = std::string(result);
      row.output_text.reset();
    }
    row.cores = 1 << (idx % 4);
    row.runtime_s = 30.0 + static_cast<double>(idx % 600);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: bench_serve_data DATASET_DIR STACKS ROWS\n";
    return 2;
  }
  const std::filesystem::path data_dir = std::filesystem::path(argv[1]) / "data";
  const std::size_t stacks = std::stoul(argv[2]);
  const std::size_t rows = std::stoul(argv[3]);
  std::filesystem::create_directories(data_dir);
  std::atomic<int> failures{0};
  canrun::parallel_for(stacks, [&](std::size_t stack) {
    const auto table = stack_rows(stack, rows);
    auto key = canrun::dataset::stack_key_of(table.front());
    auto bytes = canrun::dataset::encode_parquet(table);
    if (!key.ok() || !bytes.ok() ||
        !canrun::write_file_atomically(data_dir / key->file_name(), *bytes).ok()) {
      ++failures;
    }
  });
  if (failures) {
    std::cerr << failures << " stack files could not be written\n";
    return 1;
  }
  return 0;
}
