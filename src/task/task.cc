#include "task/task.h"

namespace canrun::task {

std::string_view to_string(Comparison comparison) {
  switch (comparison) {
    case Comparison::kTokens:
      return "tokens";
    case Comparison::kEmbeddings:
      return "embeddings";
  }
  return "unknown";
}

std::string_view to_string(MemoryEstimate estimate) {
  switch (estimate) {
    case MemoryEstimate::kWeights:
      return "weights";
  }
  return "unknown";
}

std::string_view to_string(Display display) {
  switch (display) {
    case Display::kText:
      return "text";
  }
  return "unknown";
}

const std::vector<TaskSpec>& tasks() {
  static const std::vector<TaskSpec> kTasks = {
      {
          .name = "text-generation",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "text-generation", .library = "transformers"},
          .recipe = "text-generation",
          .default_prompt = "The capital of France is",
          .comparison = Comparison::kTokens,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,
      },
      {
          .name = "image-text-to-text",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "image-text-to-text", .library = "transformers"},
          .recipe = "image-text-to-text",  // with a test image drawn by the script
          .default_prompt = "Describe this image in one sentence.",
          .comparison = Comparison::kTokens,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,
      },
      {
          .name = "sentence-similarity",
          .library = "sentence-transformers",
          .hub_filter = {.pipeline_tag = "sentence-similarity", .library = "sentence-transformers"},
          .recipe = "sentence-similarity",  // fixed sentences, a small retrieval set in them
          .default_prompt = "Where is the Eiffel Tower?",  // the first query
          .comparison = Comparison::kEmbeddings,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // a summary: sentences, dimensions, sentences/s
          .shards = false,
      },
  };
  return kTasks;
}

const TaskSpec* find_task(std::string_view name) {
  for (const TaskSpec& spec : tasks()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const TaskSpec& spec : tasks()) names.emplace_back(spec.name);
  return names;
}

}  // namespace canrun::task
