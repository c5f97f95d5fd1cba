// Test helper: verdict rows with every column set, for the dataset's tests and benchmarks.
#pragma once

#include <string>

#include "dataset/verdict_row.h"

namespace canrun::dataset::testing {

inline Timestamp at_seconds(std::int64_t seconds) {
  return Timestamp(std::chrono::seconds(seconds));
}

//! A PASS row of a neuron stack with every column filled.
inline VerdictRow full_row(std::string model_id = "Qwen/Qwen3-0.6B",
                           std::string library_version = "5.18.0") {
  VerdictRow row;
  row.model_id = std::move(model_id);
  row.revision = "c1b7e3d4a5f60718293a4b5c6d7e8f9012345678";
  row.task = "text-generation";
  row.backend = "neuron";
  row.device = "trn2";
  row.compiler = "neuronx-cc";
  row.compiler_version = "2.16.372.0+4a9b2326";
  row.library = "transformers";
  row.library_version = std::move(library_version);
  row.result = VerdictResult::kPass;
  row.cores = 1;
  row.parallelism = "none";
  row.weights_bytes = 1'503'238'553;
  row.runtime_s = 212.5;
  row.load_s = 3.25;
  row.compile_s = 180.0;
  row.generate_s = 1.5;
  row.ttft_s = 0.04;
  row.decode_tokens_per_s = 48.75;
  row.peak_device_memory_bytes = 3'221'225'472;
  row.new_tokens = 32;
  row.output_text = "The capital of France is Paris.";
  row.verification = "reference";
  row.match_tokens = 32;
  row.stack =
      R"({"neuronx-cc":"2.16.372.0+4a9b2326","python":"3.11.7","torch":"2.13.0","transformers":"5.18.0"})";
  row.packages = {"torch-neuronx==2.13.3.0", "neuronx-cc==2.16.372.0"};
  row.run_py = "import torch\nprint('hello')\n";
  row.started_at = at_seconds(1'764'688'800) + std::chrono::microseconds(123456);
  row.host = "trn2-node-1";
  row.canrun_version = "0.1.0";
  fill_neuron_columns(row);
  return row;
}

//! A row of the same stack with only the columns that may not be null.
inline VerdictRow minimal_row(std::string model_id, VerdictResult result) {
  VerdictRow row = full_row(std::move(model_id));
  VerdictRow minimal;
  minimal.model_id = row.model_id;
  minimal.task = row.task;
  minimal.backend = row.backend;
  minimal.device = row.device;
  minimal.compiler = row.compiler;
  minimal.compiler_version = row.compiler_version;
  minimal.library = row.library;
  minimal.library_version = row.library_version;
  minimal.result = result;
  minimal.stack = "{}";
  minimal.started_at = row.started_at;
  minimal.canrun_version = row.canrun_version;
  if (minimal.result == VerdictResult::kExcluded) minimal.exclusion_reason = "gated";
  return minimal;
}

}  // namespace canrun::dataset::testing
