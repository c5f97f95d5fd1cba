// Planning throughput: 10,000 models planned from cached facts, against the time to read one
// safetensors header from a local file (what gathering those facts costs per file).
//
// usage: bench_plan FILE.safetensors [MODELS]
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <random>

#include "backend/profile.h"
#include "core/atomic_file.h"
#include "hub/safetensors_header.h"
#include "plan/planner.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_plan FILE.safetensors [MODELS]\n";
    return 2;
  }
  const std::size_t count = argc > 2 ? std::stoul(argv[2]) : 10'000;
  canrun::backend::Topology neuron{4, 16, 24.0, 2.0, {1, 2, 4, 8, 16}, 16};
  std::mt19937_64 random(7);
  std::vector<canrun::plan::PlanFacts> models;
  for (std::size_t idx = 0; idx < count; ++idx) {
    const std::uint64_t weights = (random() % 1'000'000) * 1'000'000ULL;  // up to 1 TB
    const bool moe = random() % 5 == 0;
    models.push_back({weights, moe ? weights * 9 / 10 : 0, 8 << (random() % 4), 1 << (random() % 4),
                      moe ? std::optional<std::int64_t>(8 << (random() % 5)) : std::nullopt,
                      "llama"});
  }
  const canrun::plan::ParallelSupport tp{true, true, false, "5.18.0", std::nullopt},
      ep{true, false, true, "5.18.0", std::nullopt};
  std::size_t placed = 0;
  const auto plan_start = Clock::now();
  for (int repeat = 0; repeat < 5; ++repeat) {
    for (std::size_t idx = 0; idx < models.size(); ++idx) {
      placed += canrun::plan::plan_model(models[idx], idx % 2 ? tp : ep, neuron).placed;
    }
  }
  const double per_plan = seconds_since(plan_start) / (5.0 * static_cast<double>(count));

  const int reads = 200;
  std::uint64_t tensors = 0;
  const auto read_start = Clock::now();
  for (int read = 0; read < reads; ++read) {
    std::ifstream file(argv[1], std::ios::binary);
    std::string prefix(8, '\0');
    file.read(prefix.data(), 8);
    auto length = canrun::hub::parse_safetensors_prefix(prefix, std::nullopt);
    if (!length.ok()) {
      std::cerr << length.error().message() << '\n';
      return 1;
    }
    std::string header(*length, '\0');
    file.read(header.data(), static_cast<std::streamsize>(*length));
    auto parsed = canrun::hub::parse_safetensors_header(header, std::nullopt);
    if (!parsed.ok()) {
      std::cerr << parsed.error().message() << '\n';
      return 1;
    }
    tensors += parsed->tensors.size();
  }
  const double per_read = seconds_since(read_start) / reads;
  std::cout << fmt::format(
      "plan: {:.3f} us per model ({} models x 5, {} placed); reading one safetensors header ({} "
      "tensors): {:.1f} us; "
      "ratio plan/header {:.4f}\n",
      per_plan * 1e6, count, placed / 5, tensors / reads, per_read * 1e6, per_plan / per_read);
  return 0;
}
