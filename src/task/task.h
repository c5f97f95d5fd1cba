// The tasks canrun tests (SPEC.md §1): one registry, and every list of tasks derives from it —
// the Hub candidates (hub::supported_tasks), the recipes (recipe::recipe_tasks, the renderer's
// template and default prompt), and later the Space. A task is a Hub pipeline_tag with a
// library; it owns its recipe template, its inputs, how its output is compared with the CPU
// reference, how its memory is estimated and how the Space shows its output.
//
// Adding a task (sentence-transformers embeddings, diffusers, encoders) is a row in tasks.cc
// and a template recipes/<recipe>.py; a task_test checks the two agree.
//
// Thread safety: immutable data, built at first use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace canrun::task {

//! How a task's output is compared with the CPU reference (SPEC.md §7).
enum class Comparison {
  //! Generated token ids equal to the reference's on one core; sharded, judged fluent (and
  //! teacher-forced agreement recorded where a reference exists).
  kTokens,
  //! One core: each sentence's embedding within the dtype's cosine threshold of the
  //! reference's, and the same nearest documents for each query of a small retrieval set
  //! (verify/embeddings.h).
  kEmbeddings,
  //! One core: the logits run.py writes to outputs.safetensors (per sentence, token or masked
  //! token) have the reference's argmax in every row (a near-tie aside) and are within the
  //! dtype's relative error of the reference's (verify/logits.h).
  kLogits,
  //! One core: the image run.py writes (outputs.safetensors, image.png) is not blank, has no
  //! NaN, and is within the dtype's PSNR and SSIM of the reference's (verify/image.h).
  kImage,
  //! One core: a reranker's [queries, documents] scores run.py writes to outputs.safetensors are
  //! within the dtype's relative error of the reference's for each query, and order the
  //! documents as the reference does (a near-tie aside) (verify/ranking.h).
  kRanking,
};

//! How the memory a model needs on a core is estimated for planning (SPEC.md §5).
enum class MemoryEstimate {
  //! The weights' bytes from the safetensors headers, over the shard degree, plus the reserve.
  kWeights,
};

//! How the Space shows one verdict's output.
enum class Display {
  kText,   //!< the generated text, or a summary of the output
  kImage,  //!< the generated image beside the CPU reference's
};

std::string_view to_string(Comparison comparison);
std::string_view to_string(MemoryEstimate estimate);
std::string_view to_string(Display display);

//! Which models the Hub lists for a task: GET /api/models?pipeline_tag=...&library=...
struct HubFilter {
  std::string_view pipeline_tag;
  std::string_view library;
};

//! A family of a task's models verified another way than the task's own comparison, told by the
//! model's architecture (config.json's `architectures`): automatic-speech-recognition's CTC
//! models (…ForCTC) by their logits per frame, where its encoder-decoders generate tokens.
struct FamilyComparison {
  std::string_view architecture_suffix;  //!< e.g. "ForCTC"
  Comparison comparison = Comparison::kLogits;
  std::string_view logits_row = {};  //!< as TaskSpec::logits_row
};

struct TaskSpec {
  std::string_view name;            //!< the Hub pipeline_tag, e.g. "text-generation"
  std::string_view library;         //!< what loads the model: "transformers"
  HubFilter hub_filter;             //!< the Hub ranking of this task's models
  std::string_view recipe;          //!< the template recipes/<recipe>.py
  std::string_view default_prompt;  //!< the recipe's text input unless one is given
  Comparison comparison = Comparison::kTokens;
  MemoryEstimate memory_estimate = MemoryEstimate::kWeights;
  Display display = Display::kText;
  //! Whether the recipe can run sharded (rank code for tensor or expert parallel); a model of
  //! a task that cannot, and that needs more than one core, is excluded as too large.
  bool shards = true;
  //! kLogits: what a row of the logits is, for messages ("sentence", "token", "masked token").
  std::string_view logits_row = {};
  //! Another task whose models this one tests too: a model the Hub lists for it is a candidate
  //! here, by this task's recipe, instead of being sent to its own (feature-extraction takes
  //! sentence-similarity's models: sentence-transformers weights are transformers weights).
  std::string_view takes_models_of = {};
  //! The recipe encodes text, and the Hub lists image and audio encoders under the same tag: a
  //! repo without a tokenizer is not for it.
  bool text_only = false;
  //! The row's output_text gives what the CPU reference predicted under what the run did (an
  //! image classifier's top 5 labels, both; a translation, both): the recipe's `text` of each.
  bool shows_reference_prediction = false;
  //! The families verified their own way (spec_for_model); the rest by `comparison`.
  std::vector<FamilyComparison> families = {};
  //! The recipe generates --long-tokens more tokens after the check (recipe::RecipeRequest::
  //! long_tokens), with their decode speed and teacher-forced agreement: the generating tasks
  //! whose models are asked for long answers (text-generation, image-text-to-text).
  bool long_generation = false;
};

//! Every task canrun tests, in the order lists show them.
const std::vector<TaskSpec>& tasks();

//! The task named `name` (a pipeline_tag), or nullptr.
const TaskSpec* find_task(std::string_view name);

//! The names of tasks(), in order.
std::vector<std::string> task_names();

//! The task as it verifies a model of these architectures: `spec` with the comparison and
//! logits_row of the first family one of them ends with (FamilyComparison), else `spec`.
TaskSpec spec_for_model(const TaskSpec& spec, const std::vector<std::string>& architectures);

//! Whether the task's output is generated text: its recipe generates 32 greedy tokens (batch 1,
//! a static cache), which is what a token comparison compares, and it measures the first
//! token's time and decode speed as well as the run time.
bool generates_text(const TaskSpec& spec);

//! What the run time (and the throughput of a task that does not generate text) of a verdict
//! of this task measures, a sentence for the Space's page.
std::string_view speed_meaning(const TaskSpec& spec);

}  // namespace canrun::task
