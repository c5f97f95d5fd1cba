// Writes a synthetic dataset for bench/serve_vs_baselines.py: STACKS neuron stacks (compiler
// versions 2.<k>.0.0, newest last) of ROWS text-generation rows each, over the model ids of
// bench_model_id(i) in serve_vs_baselines.py (the same formula here and there).
//
// Stacks differ the way successive releases do, so /api/compare and /api/causes have work to
// show: each model's verdict, plan (cores, parallelism) and run time are a random walk over the
// stacks (each changes at a stack with a small probability), so two stacks disagree on some
// thousands of models (regressions, fixes, other result changes, changed plans, run-time and
// memory changes), more the further apart they are. Failures carry an error with a traceback and
// one of some forty normalised error signatures, a few common and many rare. Everything is drawn
// from a hash of (seed, stack, model, what), so the files are the same on every run and machine.
//
// usage: bench_serve_data DATASET_DIR STACKS ROWS
// Files are encoded with the dataset's own Parquet codec and written atomically, one per stack.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

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

//! What a draw is for, so that draws of one (stack, model) are independent.
enum class Draw : std::uint64_t {
  kResultChange = 1,
  kResult,
  kCause,
  kPlanChange,
  kCores,
  kRuntimeChange,
  kRuntime,
  kLine,
};

//! A pseudo-random 64-bit number of (stack, model, what): splitmix64's finaliser chained over
//! a fixed seed, so the data is the same on every run and stacks can be written in parallel.
std::uint64_t draw(std::size_t stack, std::size_t idx, Draw what) {
  constexpr std::uint64_t kSeed = 0x63616e72756e2d31;  // "canrun-1"
  auto mix = [](std::uint64_t value) {
    value += 0x9e3779b97f4a7c15;
    value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9;
    value = (value ^ (value >> 27)) * 0x94d049bb133111eb;
    return value ^ (value >> 31);
  };
  return mix(mix(mix(kSeed ^ stack) ^ idx) ^ static_cast<std::uint64_t>(what));
}

//! The stack at which the model's `change` last happened, at or before `stack`: stack 0 always
//! counts as one, any later stack with probability percent/100.
std::size_t last_change(std::size_t stack, std::size_t idx, Draw change, std::uint64_t percent) {
  for (std::size_t at = stack; at > 0; --at) {
    if (draw(at, idx, change) % 100 < percent) return at;
  }
  return 0;
}

//! A failure as the runner would record it: the exception's type and message (the message as
//! error_signature normalises it: numbers already N, no paths).
struct SyntheticCause {
  canrun::VerdictResult result;
  std::string_view error_type;
  std::string_view message;
};

constexpr std::string_view kOperators[] = {"aten::scaled_dot_product_attention",
                                           "aten::_fused_rms_norm",
                                           "aten::index_put_",
                                           "aten::cumsum",
                                           "aten::scatter_reduce",
                                           "aten::searchsorted",
                                           "aten::nonzero",
                                           "aten::masked_scatter",
                                           "aten::complex",
                                           "aten::bucketize",
                                           "aten::unique_consecutive",
                                           "aten::histc"};

constexpr SyntheticCause kOtherCauses[] = {
    {canrun::VerdictResult::kFailCompile, "neuronxcc.CompilerError",
     "Tensorizer pass TilingPass failed: partition dimension N exceeds N"},
    {canrun::VerdictResult::kFailCompile, "neuronxcc.CompilerError",
     "HLO verifier: dynamic shape in while loop body"},
    {canrun::VerdictResult::kFailCompile, "neuronxcc.CompilerError",
     "Estimated peak HBM usage exceeds the device limit"},
    {canrun::VerdictResult::kFailCompile, "TypeError",
     "unsupported dtype torch.float8_e4m3fn on this NeuronCore"},
    {canrun::VerdictResult::kFailOom, "RuntimeError",
     "NRT: failed to allocate N bytes of device memory (HBM)"},
    {canrun::VerdictResult::kFailOom, "RuntimeError",
     "NRT: failed to allocate N bytes for the KV cache on core N"},
    {canrun::VerdictResult::kFailOom, "MemoryError", "host out of memory while loading weights"},
    {canrun::VerdictResult::kFailRuntime, "RuntimeError",
     "NRT: execution failed with status N (NRT_EXEC_BAD_INPUT)"},
    {canrun::VerdictResult::kFailRuntime, "RuntimeError",
     "collective operation timed out on rank N"},
    {canrun::VerdictResult::kFailRuntime, "ValueError",
     "rope_scaling must be a dictionary with two fields, type and factor"},
    {canrun::VerdictResult::kFailRuntime, "KeyError", "'model.layers.N.mlp.gate.weight'"},
    {canrun::VerdictResult::kFailRuntime, "AttributeError",
     "'NeuronModelForCausalLM' object has no attribute 'generation_config'"},
};

//! One of `count` choices, small ones much more often (the lesser of two uniform draws).
std::size_t skewed(std::uint64_t random, std::size_t count) {
  return std::min((random & 0xffffffff) % count, (random >> 32) % count);
}

//! Sets the result, error and error_signature of a failing row from the cause drawn for it.
void set_failure(VerdictRow& row, std::size_t epoch, std::size_t idx) {
  using canrun::VerdictResult;
  const std::uint64_t random = draw(epoch, idx, Draw::kCause);
  const std::size_t line = 100 + draw(epoch, idx, Draw::kLine) % 900;
  if (row.result == VerdictResult::kTimeout) {
    row.error = fmt::format("timed out after {} s in generate (step {})", 1800 + idx % 600, line);
    row.error_signature = "TIMEOUT";
    return;
  }
  std::string error_type;
  std::string message;
  if (row.result == VerdictResult::kFailCompile && random % 3 != 0) {
    // Unsupported operators: the commonest compile failure, one signature per operator.
    const std::string_view op = kOperators[skewed(random >> 2, std::size(kOperators))];
    error_type = "neuronxcc.CompilerError";
    message = fmt::format("unsupported operator {} in graph", op);
  } else {
    std::vector<const SyntheticCause*> fitting;
    for (const SyntheticCause& cause : kOtherCauses) {
      if (cause.result == row.result) fitting.push_back(&cause);
    }
    const SyntheticCause& cause = *fitting[skewed(random >> 2, fitting.size())];
    error_type = cause.error_type;
    message = cause.message;
  }
  row.error_signature = fmt::format("{}: {}", error_type, message);
  // The recorded text: a traceback ending in the error, with the numbers a run really has.
  std::string concrete = message;
  for (std::size_t at = concrete.find('N'); at != std::string::npos; at = concrete.find('N', at)) {
    const bool alone =
        (at == 0 || !std::isalnum(static_cast<unsigned char>(concrete[at - 1]))) &&
        (at + 1 == concrete.size() || !std::isalnum(static_cast<unsigned char>(concrete[at + 1])));
    if (!alone) {
      ++at;
      continue;
    }
    const std::string number = std::to_string(1 + (idx + at) % 4096);
    concrete.replace(at, 1, number);
    at += number.size();
  }
  row.error = fmt::format(
      "Traceback (most recent call last):\n"
      "  File \"run.py\", line {}, in <module>\n"
      "    outputs = model.generate(**inputs, max_new_tokens=32)\n"
      "  File \"modeling_utils.py\", line {}, in generate\n"
      "    return self._sample(input_ids, **kwargs)\n"
      "{}: {}\n",
      20 + idx % 40, line, error_type, concrete);
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
    // The verdict, plan and run time hold from the stack where each last changed.
    const std::size_t result_epoch = last_change(stack, idx, Draw::kResultChange, 8);
    row.result = kResults[draw(result_epoch, idx, Draw::kResult) % std::size(kResults)];
    if (row.result != VerdictResult::kPass) {
      set_failure(row, result_epoch, idx);
      row.output_text.reset();
    }
    const std::size_t plan_epoch = last_change(stack, idx, Draw::kPlanChange, 3);
    row.cores = 1 << (draw(plan_epoch, idx, Draw::kCores) % 4);
    row.parallelism = row.cores == 1 ? "none" : "tp";
    row.peak_device_memory_bytes = 3'221'225'472 / *row.cores + 1'073'741'824;
    const std::size_t runtime_epoch = last_change(stack, idx, Draw::kRuntimeChange, 4);
    row.runtime_s = 30.0 + static_cast<double>(draw(runtime_epoch, idx, Draw::kRuntime) % 600);
    canrun::dataset::fill_neuron_columns(row);
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
