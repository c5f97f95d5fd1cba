#include "task/task.h"

namespace canrun::task {

std::string_view to_string(Comparison comparison) {
  switch (comparison) {
    case Comparison::kTokens:
      return "tokens";
    case Comparison::kEmbeddings:
      return "embeddings";
    case Comparison::kLogits:
      return "logits";
    case Comparison::kImage:
      return "image";
    case Comparison::kRanking:
      return "ranking";
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
    case Display::kImage:
      return "image";
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
          .long_generation = true,
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
          .long_generation = true,
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
      // transformers' AutoModel, one pooled vector per sentence (the repo's sentence-transformers
      // pooling, else the mean), compared as sentence-similarity's embeddings. A
      // sentence-transformers repo listed here is tested through transformers (SPEC.md §1).
      {
          .name = "feature-extraction",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "feature-extraction", .library = "transformers"},
          .recipe = "feature-extraction",
          .default_prompt = "Where is the Eiffel Tower?",  // the first query
          .comparison = Comparison::kEmbeddings,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // a summary: sentences, dimensions, pooling, sentences/s
          .shards = false,
          .takes_models_of = "sentence-similarity",
          .text_only = true,
      },
      // Encoder tasks of transformers: recipes/encoder.py, the logits compared.
      {
          .name = "text-classification",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "text-classification", .library = "transformers"},
          .recipe = "encoder",
          .default_prompt = "I loved this film, it was wonderful from start to finish.",
          .comparison = Comparison::kLogits,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // the predicted labels
          .shards = false,
          .logits_row = "sentence",
      },
      {
          .name = "fill-mask",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "fill-mask", .library = "transformers"},
          .recipe = "encoder",
          .default_prompt = "The capital of France is <mask>.",  // <mask>: the tokenizer's
          .comparison = Comparison::kLogits,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // the best words for each mask
          .shards = false,
          .logits_row = "masked token",
      },
      {
          .name = "token-classification",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "token-classification", .library = "transformers"},
          .recipe = "encoder",
          .default_prompt = "My name is Clara and I live in Berkeley, California.",
          .comparison = Comparison::kLogits,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // the first sentence's tags
          .shards = false,
          .logits_row = "token",
      },
      // transformers image classifiers: recipes/image-classification.py, on images it draws,
      // the logits compared.
      {
          .name = "image-classification",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "image-classification", .library = "transformers"},
          .recipe = "image-classification",
          // No text goes in: the prompt names what run.py shows the model (and keys its reference).
          .default_prompt = "two images drawn by run.py: a landscape and a checkerboard",
          .comparison = Comparison::kLogits,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // the input image, the top 5 labels of the run and reference
          .shards = false,
          .logits_row = "image",
          .shows_reference_prediction = true,
      },
      // CLIP/SigLIP-style models: recipes/zero-shot-image-classification.py, the same images
      // scored against fixed candidate labels, the image-text logits compared.
      {
          .name = "zero-shot-image-classification",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "zero-shot-image-classification",
                         .library = "transformers"},
          .recipe = "zero-shot-image-classification",
          .default_prompt = "a landscape with a red sun over green hills",  // the first label
          .comparison = Comparison::kLogits,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // the input image, the labels ranked by the run and reference
          .shards = false,
          .logits_row = "image",
          .shows_reference_prediction = true,
      },
      // Encoder-decoder generation (Marian, T5, BART, M2M100, NLLB): recipes/text2text.py,
      // the encoder and the decoder step compiled, greedy tokens compared on one core as a
      // decoder's are. The family's inputs (a T5 prefix, the languages of a many-to-many
      // translator) are the recipe's, said in the row.
      {
          .name = "translation",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "translation", .library = "transformers"},
          .recipe = "text2text",
          .default_prompt = "The house is wonderful and the garden is full of flowers.",
          .comparison = Comparison::kTokens,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,
          .shards = false,
          .shows_reference_prediction = true,
      },
      {
          .name = "text2text-generation",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "text2text-generation", .library = "transformers"},
          .recipe = "text2text",
          .default_prompt = "Answer the question: what is the capital of France?",
          .comparison = Comparison::kTokens,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,
          .shards = false,
          .shows_reference_prediction = true,
      },
      // Rerankers (cross-encoders): recipes/text-ranking.py scores each query against each
      // document of a fixed set through transformers' sequence-classification head over the
      // pairs, which is what sentence-transformers' CrossEncoder runs; the scores and each
      // query's order of documents are compared. The Hub lists them under sentence-transformers.
      {
          .name = "text-ranking",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "text-ranking", .library = "sentence-transformers"},
          .recipe = "text-ranking",
          .default_prompt = "Where is the Eiffel Tower?",  // the first query
          .comparison = Comparison::kRanking,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // queries, documents, the run's and reference's orders
          .shards = false,
          .text_only = true,
          .shows_reference_prediction = true,
      },
      // Speech recognition: recipes/speech-recognition.py gives the model a 16 kHz clip it
      // synthesizes and writes (input.wav), read back with the standard library. Whisper-style
      // encoder-decoders (AutoModelForSpeechSeq2Seq) generate greedy tokens in English,
      // transcribing, compared as text generation's; CTC models (AutoModelForCTC) give logits per
      // frame, compared as an encoder's.
      {
          .name = "automatic-speech-recognition",
          .library = "transformers",
          .hub_filter = {.pipeline_tag = "automatic-speech-recognition", .library = "transformers"},
          .recipe = "speech-recognition",
          // No text goes in: the prompt names what run.py gives the model (and keys its reference).
          .default_prompt = "a 2.4 s clip of vowel sounds at 16 kHz, synthesized by run.py",
          .comparison = Comparison::kTokens,
          .memory_estimate = MemoryEstimate::kWeights,
          .display = Display::kText,  // the clip (a player), the transcripts of run and reference
          .shards = false,
          .shows_reference_prediction = true,
          .families = {{.architecture_suffix = "ForCTC",
                        .comparison = Comparison::kLogits,
                        .logits_row = "frame"}},
      },
      {
          .name = "text-to-image",
          .library = "diffusers",
          .hub_filter = {.pipeline_tag = "text-to-image", .library = "diffusers"},
          .recipe = "text-to-image",  // one image, fixed seed, a few steps
          .default_prompt = "A red apple on a wooden table",
          .comparison = Comparison::kImage,
          .memory_estimate = MemoryEstimate::kWeights,  // the sum of the components' weights
          .display = Display::kImage,
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

TaskSpec spec_for_model(const TaskSpec& spec, const std::vector<std::string>& architectures) {
  for (const FamilyComparison& family : spec.families) {
    for (const std::string& architecture : architectures) {
      if (!architecture.ends_with(family.architecture_suffix)) continue;
      TaskSpec out = spec;
      out.comparison = family.comparison;
      out.logits_row = family.logits_row;
      return out;
    }
  }
  return spec;
}

bool generates_text(const TaskSpec& spec) { return spec.comparison == Comparison::kTokens; }

std::string_view speed_meaning(const TaskSpec& spec) {
  if (generates_text(spec)) {
    return "Run time, first token and decode tokens/s measure 32 greedy tokens at batch 1 with a "
           "static cache, after compiling; the speedup compares them with the same model run "
           "eagerly in the same process, on the same inputs.";
  }
  return "Run time and throughput measure the recipe’s fixed inputs after compiling; the speedup "
         "compares the throughput with the same model run eagerly in the same process.";
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const TaskSpec& spec : tasks()) names.emplace_back(spec.name);
  return names;
}

}  // namespace canrun::task
