// Dataset write/read throughput of the C++ path (rows → Arrow → Parquet file → rows).
// bench/dataset_vs_pyarrow.py runs this and measures pyarrow over the same rows in the same
// run, then reports the ratios.
//
// usage: bench_dataset OUT_DIR [ROWS] [REPEATS]
// Writes OUT_DIR/cpp.parquet and OUT_DIR/rows.jsonl (the same rows, for pyarrow) and prints
// one JSON object: rows, best write and read seconds, file size.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "core/atomic_file.h"
#include "dataset/parquet_codec.h"
#include "dataset/row_json.h"
#include "dataset/test_rows.h"

namespace {

using canrun::dataset::VerdictRow;

//! Realistic variety: distinct ids, mostly PASS, failures with tracebacks, a run.py each.
std::vector<VerdictRow> make_rows(std::size_t count) {
  using canrun::VerdictResult;
  static constexpr VerdictResult kResults[] = {
      VerdictResult::kPass,        VerdictResult::kPass,        VerdictResult::kPass,
      VerdictResult::kPass,        VerdictResult::kFailCompile, VerdictResult::kFailOom,
      VerdictResult::kFailLoad,    VerdictResult::kTimeout,     VerdictResult::kExcluded,
      VerdictResult::kFailMismatch};
  std::mt19937_64 random(42);
  std::vector<VerdictRow> rows;
  rows.reserve(count);
  const std::string run_py_base(2000, '#');
  for (std::size_t idx = 0; idx < count; ++idx) {
    const VerdictResult result = kResults[random() % std::size(kResults)];
    VerdictRow row =
        canrun::dataset::testing::full_row(fmt::format("org{}/model-{}", idx % 997, idx));
    row.result = result;
    row.runtime_s = static_cast<double>(random() % 100000) / 100.0;
    row.peak_device_memory_bytes = static_cast<std::int64_t>(random() % (1ULL << 36));
    row.cores = 1 << (random() % 5);
    row.run_py = fmt::format("# run.py for {}\n{}", row.model_id, run_py_base);
    row.started_at += std::chrono::seconds(idx);
    if (row.result == VerdictResult::kExcluded) {
      row.exclusion_reason = "too_large";
    } else if (row.result != VerdictResult::kPass) {
      row.error = fmt::format(
          "Traceback (most recent call last):\n  File \"run.py\", line {}, in main\n"
          "RuntimeError: {} at 0x{:x} after {} steps\n",
          random() % 300, canrun::to_string(row.result), random(), random() % 1000);
      row.error_signature = std::string(canrun::to_string(row.result));
      row.output_text.reset();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

template <typename Work>
double best_seconds(int repeats, Work work) {
  double best = 1e300;
  for (int run = 0; run < repeats; ++run) {
    const auto start = std::chrono::steady_clock::now();
    work();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_dataset OUT_DIR [ROWS] [REPEATS]\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  const std::size_t count = argc > 2 ? std::stoul(argv[2]) : 100'000;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  std::filesystem::create_directories(out);
  const auto rows = make_rows(count);
  const auto path = out / "cpp.parquet";

  bool failed = false;
  const double write_s = best_seconds(repeats, [&] {
    auto bytes = canrun::dataset::encode_parquet(rows);
    failed |= !bytes.ok() || !canrun::write_file_atomically(path, *bytes).ok();
  });
  std::size_t read_rows = 0;
  const double read_s = best_seconds(repeats, [&] {
    auto read = canrun::dataset::read_parquet_rows(path);
    failed |= !read.ok();
    read_rows = read.ok() ? read->size() : 0;
  });
  if (failed || read_rows != count) {
    std::cerr << "bench_dataset: write or read failed\n";
    return 1;
  }
  std::ofstream jsonl(out / "rows.jsonl");
  for (const auto& row : rows) jsonl << canrun::dataset::row_to_json(row).dump() << '\n';
  std::cout << nlohmann::json{{"rows", count},
                              {"write_s", write_s},
                              {"read_s", read_s},
                              {"file_bytes", std::filesystem::file_size(path)}}
                   .dump()
            << '\n';
  return 0;
}
