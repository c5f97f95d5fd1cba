// The comparisons of the tasks beyond generation, at the sizes of real models: an SDXL image
// (1024 × 1024 × 3, read from outputs.safetensors and compared: PSNR, SSIM), XLM-R's fill-mask
// logits (4 masks × 250,002 tokens) and ten 1024-dimensional embeddings. A run of such a model
// takes minutes; bench/harness_overhead.py relates these times to the runs it measures.
#include <benchmark/benchmark.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "verify/embeddings.h"
#include "verify/image.h"
#include "verify/logits.h"
#include "verify/tensor_file.h"

namespace {

using canrun::verify::Tensor;

Tensor noisy(std::vector<std::int64_t> shape, double scale, unsigned seed, bool bytes) {
  Tensor t;
  t.shape = std::move(shape);
  std::size_t count = 1;
  for (auto d : t.shape) count *= static_cast<std::size_t>(d);
  std::mt19937 random(seed);
  std::normal_distribution<double> normal(0, scale);
  t.values.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double value =
        bytes ? std::clamp(std::round(128 + normal(random)), 0.0, 255.0) : normal(random);
    t.values[i] = value;
  }
  return t;
}

void BM_CompareSdxlImage(benchmark::State& state) {
  const Tensor a = noisy({1024, 1024, 3}, 40, 1, true);
  Tensor b = a;
  for (std::size_t i = 0; i < b.values.size(); i += 7)
    b.values[i] = std::min(255.0, b.values[i] + 1);
  for (auto _ : state) benchmark::DoNotOptimize(canrun::verify::compare_images(a, b));
}
BENCHMARK(BM_CompareSdxlImage)->Unit(benchmark::kMillisecond);

void BM_ReadSdxlImageFile(benchmark::State& state) {
  const auto path = std::filesystem::temp_directory_path() / "canrun-bench-image.safetensors";
  const std::string header =
      nlohmann::json{
          {"image", {{"dtype", "U8"}, {"shape", {1024, 1024, 3}}, {"data_offsets", {0, 3 << 20}}}}}
          .dump();
  {
    std::ofstream file(path, std::ios::binary);
    for (int i = 0; i < 8; ++i) file.put(static_cast<char>((header.size() >> (8 * i)) & 0xff));
    file << header << std::string(3 << 20, '\x80');
  }
  for (auto _ : state) benchmark::DoNotOptimize(canrun::verify::read_tensor(path, "image"));
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReadSdxlImageFile)->Unit(benchmark::kMillisecond);

void BM_CompareXlmrFillMaskLogits(benchmark::State& state) {
  const Tensor a = noisy({4, 250002}, 3, 2, false);
  Tensor b = a;
  for (double& v : b.values) v *= 1.0001;
  for (auto _ : state) benchmark::DoNotOptimize(canrun::verify::compare_logits(a, b, "float32"));
}
BENCHMARK(BM_CompareXlmrFillMaskLogits)->Unit(benchmark::kMillisecond);

void BM_CompareEmbeddings(benchmark::State& state) {
  const Tensor flat = noisy({10, 1024}, 1, 3, false);
  canrun::verify::Embeddings a(10), b(10);
  for (std::size_t i = 0; i < 10; ++i) {
    a[i].assign(flat.values.begin() + i * 1024, flat.values.begin() + (i + 1) * 1024);
    b[i] = a[i];
    b[i][0] += 1e-6;
  }
  for (auto _ : state) benchmark::DoNotOptimize(canrun::verify::compare_embeddings(a, b, 3));
}
BENCHMARK(BM_CompareEmbeddings)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
