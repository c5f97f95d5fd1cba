// The verdict rules of the verify step (trial.h): from what a run reported, the files it wrote
// in its run folder and the CPU reference, the row's result, error, error_signature and
// verification, with the columns each comparison measures. One core: the task's comparison
// (task::Comparison) — tokens, logits, image or embeddings; sharded: the judge's judgement and
// the teacher-forced agreement. Internal to src/trial: declared here so that unit tests call
// the rules with plain values, without running anything.
//
// A rule that cannot read what it compares (a file run.py named but did not write, a bad
// safetensors file) returns an error: that is not a verdict on the backend.
//
// Thread safety: functions of their arguments and of the files they read.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "dataset/verdict_row.h"
#include "judge/judge.h"
#include "run/classify.h"
#include "run/result_line.h"
#include "task/task.h"
#include "verify/reference_store.h"
#include "verify/tensor_file.h"

namespace canrun::trial {

//! A file the run named in its folder (`what`: "outputs", "image"); kCorrupt when it named none,
//! or named one that is not there.
Result<std::filesystem::path> run_file(const std::filesystem::path& run_dir,
                                       const std::string& name, std::string_view what);

//! The tensor `name` ("logits", "scores", "image") of the run's outputs file and of the
//! reference's: what a one-core comparison of files reads. Errors as run_file's and
//! verify::read_tensor's: not a verdict.
struct OutputTensors {
  verify::Tensor got, expected;
};
Result<OutputTensors> read_output_tensors(const std::filesystem::path& run_dir,
                                          const run::RunReport& report,
                                          const verify::Reference& reference,
                                          const std::string& name);

//! "; 12.5 sentences/s" (`decimals` after the point) for a summary, or "" when the run
//! measured no throughput.
std::string throughput_suffix(const run::RunReport& report, int decimals = 1);

//! FAIL_MISMATCH, signed "FAIL_MISMATCH | <what> differ from the CPU reference".
void fail_comparison(dataset::VerdictRow& row, std::string error, std::string_view what);

//! One core, the CPU reference failed: REFERENCE_FAIL, no verdict on the backend; the error names
//! the reference's run.py and says how it failed.
void fail_for_reference(const run::Classification& failure,
                        const std::filesystem::path& reference_run_dir, dataset::VerdictRow& row);

//! One core, text generation: PASS when every token equals the reference's. When the first
//! differing token is one where the reference's two best logits were nearly tied (its margins,
//! verify::logits_tie_tolerance of `dtype`), near_tie is set and the teacher-forced agreement
//! decides: PASS at verify::kAgreementThreshold or above. Else FAIL_MISMATCH naming the first
//! differing token. Sets match_tokens either way.
void compare_tokens_with_reference(const run::RunReport& report, const verify::Reference& reference,
                                   std::string_view dtype, dataset::VerdictRow& row);

//! What the run predicted (report.text); for a task that shows both
//! (spec.shows_reference_prediction: image classifiers, translation), what the model read
//! (report.source, when the recipe says) above it and the CPU reference's prediction under it,
//! each of the two on one line (line breaks and control bytes escaped: \n, \x0f).
//! The long generation's agreement over all the reference's tokens (report.agreed), and where
//! the model drifts when it is below verify::kAgreementThreshold (verify::long_agreement): the
//! verdict stays that of the check, the drift is its own column.
void record_long_agreement(const run::RunReport& report, dataset::VerdictRow& row);

std::string predictions_text(const task::TaskSpec& spec, const run::RunReport& report,
                             const verify::Reference& reference);

//! One core, an encoder task: the logits in the run's outputs file against the reference's
//! (verify/logits.h), rows named by `spec.logits_row`. Sets output_text to a summary.
Status compare_logits_with_reference(const task::TaskSpec& spec,
                                     const std::filesystem::path& run_dir,
                                     const run::RunReport& report,
                                     const verify::Reference& reference, const std::string& dtype,
                                     dataset::VerdictRow& row);

//! One core, a reranker: the run's [queries, documents] scores against the reference's
//! (verify/ranking.h). Sets output_text to the queries, documents and both orders
//! (predictions_text), and a summary.
Status compare_ranking_with_reference(const task::TaskSpec& spec,
                                      const std::filesystem::path& run_dir,
                                      const run::RunReport& report,
                                      const verify::Reference& reference, const std::string& dtype,
                                      dataset::VerdictRow& row);

//! One core, text-to-image: the run's image against the reference's (verify/image.h), and
//! neither blank nor holding NaN. Sets output_text to a summary.
Status compare_image_with_reference(const std::filesystem::path& run_dir,
                                    const run::RunReport& report,
                                    const verify::Reference& reference, const std::string& dtype,
                                    dataset::VerdictRow& row);

//! One core, an embedding task: every embedding near the reference's (the dtype's cosine
//! threshold), the same nearest documents for each query; the embeddings encoded one at a time
//! count too (verify/embeddings.h). Sets output_text to a summary.
void compare_embeddings_with_reference(const run::RunReport& report,
                                       const verify::Reference& reference, const std::string& dtype,
                                       dataset::VerdictRow& row);

//! The margin of the reference's two best logits at `at`, the first token where a run of
//! `run_tokens` tokens parts from it, when that margin is a near-tie for `dtype`
//! (verify::logits_tie_tolerance); none otherwise, or where the reference kept no margins.
std::optional<double> near_tie_at(const verify::Reference& reference, std::size_t at,
                                  std::size_t run_tokens, std::string_view dtype);

//! Sharded, text generation of random weights (TrialRequest::agreement_decides): the
//! teacher-forced agreement alone decides, PASS at verify::kAgreementThreshold or above, else
//! FAIL_MISMATCH; match_tokens is information, and near_tie is set when the free-running tokens
//! part from the reference's at a near-tie of its logits (the error says so on a FAIL). kCorrupt
//! when the run measured no agreement.
Status agree_sharded_run(const run::RunReport& report, const verify::Reference& reference,
                         std::string_view dtype, dataset::VerdictRow& row);

//! Sharded, text generation: the judge's judgement of the text and, where the run measured its
//! teacher-forced agreement (`report.agreement`) against `reference`, the agreement too: below
//! verify::kAgreementThreshold is FAIL_MISMATCH whatever the judge said; else PASS when fluent,
//! FAIL_JUDGE when not. match_tokens against the reference when there is one (information).
void judge_sharded_run(const run::RunReport& report,
                       const std::optional<verify::Reference>& reference,
                       const judge::Judgement& judgement, dataset::VerdictRow& row);

}  // namespace canrun::trial
