// VerdictRow: one row of the results dataset, one (model, task) on one stack (SPEC.md §8).
// Field names are the dataset's column names; std::optional marks a nullable column. `result`
// is stored as its dataset spelling ("PASS", "FAIL_OOM", ...): text only at the file and JSON
// edges.
//
// Thread safety: plain value.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/verdict_result.h"
#include "dataset/stack_key.h"

namespace canrun::dataset {

using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

struct VerdictRow {
  std::string model_id;
  std::optional<std::string> revision;
  std::string task;
  std::string backend;
  std::string device;
  std::string compiler;
  std::string compiler_version;
  std::string library;
  std::string library_version;
  //! A row nobody filled in says what a run without a result line is: CRASH.
  VerdictResult result = VerdictResult::kCrash;
  std::optional<std::string> error;
  std::optional<std::string> error_signature;
  std::optional<std::string> exclusion_reason;
  std::optional<std::int32_t> cores;
  std::optional<std::string> parallelism;
  std::optional<std::int64_t> weights_bytes;
  std::optional<double> runtime_s;
  std::optional<double> load_s;
  std::optional<double> compile_s;
  std::optional<double> generate_s;
  std::optional<double> ttft_s;
  std::optional<double> decode_tokens_per_s;
  //! The task's throughput after compiling, in throughput_unit: tokens/s (decoding),
  //! sentences/s, steps/s (denoising).
  std::optional<double> throughput;
  std::optional<std::string> throughput_unit;
  std::optional<std::int64_t> peak_device_memory_bytes;
  std::optional<std::int32_t> new_tokens;
  std::optional<std::string> output_text;
  std::optional<std::string> verification;
  std::optional<std::int32_t> match_tokens;
  std::optional<double> judge_score;
  std::optional<double> judge_threshold;
  std::optional<std::string> judge_model;
  //! Share of the reference's positions where the backend, fed the reference's tokens, predicts
  //! the reference's next token (teacher-forced); null when no reference was given to the run.
  std::optional<double> agreement;
  //! JSON object text: the judge's parts behind judge_score (its features and their weights).
  std::optional<std::string> judge_parts;
  std::optional<bool> flaky;  //!< re-run by a campaign: whether the verdict changed
  //! JSON object text: role ("image", "reference_image") → the file's path relative to the
  //! dataset folder (images/...); set when the task's output is a file.
  std::optional<std::string> output_files;
  //! Derived (neuron_columns): compiler_version and cores under the names the original
  //! torch-neuronx Space's query reads, set on neuron rows only.
  std::optional<std::string> neuronx_cc;
  std::optional<std::int32_t> neuron_cores;
  //! How the run was boxed (process/box.h): "user,net,mount,pid,pids" or a part of it, or
  //! "none"; null on EXCLUDED rows and rows recorded before canrun boxed runs.
  std::optional<std::string> isolation;
  //! The checkpoint's config.json model_type; null when it names none.
  std::optional<std::string> model_type;
  //! What the stack's transformers claims for model_type (stack/parallel_support.h): the model
  //! classes' _can_compile_fullgraph, a tensor-parallel plan, an expert-parallel plan. Null when
  //! not asked.
  std::optional<bool> claims_fullgraph;
  std::optional<bool> claims_tp_plan;
  std::optional<bool> claims_ep_plan;
  //! One core, text generation: the first token that differs from the CPU reference's is one
  //! where the reference's two best logits were nearly tied (verify::logits_tie_tolerance).
  std::optional<bool> near_tie;
  //! How well (schema 9): the eager baseline — the same model in the same run.py process, on
  //! the same device and inputs, without torch.compile, measured as the compiled run is — in
  //! throughput_unit, its first-token time and peak memory, and a note when it was cut at the
  //! profile's eager_max_s or failed; speedup = throughput ÷ eager_throughput; memory_ratio =
  //! eager peak ÷ compiled peak, read as memory_measure says (the profile's peak_memory).
  std::optional<double> eager_throughput;
  std::optional<double> eager_ttft_s;
  std::optional<std::int64_t> eager_peak_memory_bytes;
  std::optional<std::string> eager_note;
  std::optional<double> speedup;
  std::optional<double> memory_ratio;
  std::optional<std::string> memory_measure;
  //! The long generation (--long-tokens): its tokens, decode speed, teacher-forced agreement
  //! with the CPU reference over all of them, and where it drifted (verify::long_agreement)
  //! when that agreement is below verify::kAgreementThreshold.
  std::optional<std::int32_t> long_tokens;
  std::optional<double> long_decode_tokens_per_s;
  std::optional<double> long_agreement;
  std::optional<std::int32_t> drifts_after;
  std::string stack;  //!< JSON object text: package name → version
  std::vector<std::string> packages;
  std::optional<std::string> run_py;
  Timestamp started_at{};
  std::optional<std::string> host;
  std::string canrun_version;

  friend bool operator==(const VerdictRow&, const VerdictRow&) = default;
};

//! The row's result and exclusion reason, for the regression rule (core/verdict_result.h).
//! Views into `row`, which must outlive it.
inline VerdictOutcome outcome_of(const VerdictRow& row) {
  return {row.result, row.exclusion_reason ? std::string_view(*row.exclusion_reason) : ""};
}

//! The library every stack has, which the others run on (sentence-transformers, diffusers).
inline constexpr std::string_view kBaseLibrary = "transformers";

//! The stack file a row belongs to, from its own columns: its backend, compiler and library;
//! for a library on top of transformers, transformers' version from `stack` instead (two
//! stacks that differ only in transformers must not overwrite each other's rows).
Result<StackKey> stack_key_of(const VerdictRow& row);

//! Sets the derived columns from the others: `neuronx_cc` = compiler_version when the
//! compiler is neuronx-cc, `neuron_cores` = cores when the backend is neuron; null otherwise.
void fill_neuron_columns(VerdictRow& row);

//! Checks one row against the dataset's rules: a valid model id and revision, an exclusion reason
//! exactly when EXCLUDED, a known parallelism, non-negative measurements, `stack` a JSON object of
//! strings. The error names the column and the value.
Status check_row(const VerdictRow& row);

// Storage policy, applied by the writer to every row before it is stored:
// - every text column is made valid UTF-8 (bad bytes become U+FFFD), since Parquet strings
//   must be UTF-8 and a crashed process can print anything;
// - `error` keeps its last kMaxErrorBytes (the end of a traceback says what went wrong),
//   after a first line "[canrun: N bytes cut from the start]";
// - `output_text` keeps its first kMaxOutputTextBytes, followed by "[canrun: N bytes cut]";
// - the derived columns are set from the others (fill_neuron_columns).
// Cuts fall on UTF-8 character boundaries.
inline constexpr std::size_t kMaxErrorBytes = 64 * 1024;
inline constexpr std::size_t kMaxOutputTextBytes = 64 * 1024;
void apply_storage_policy(VerdictRow& row);

}  // namespace canrun::dataset
