#include "task/task.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

namespace canrun::task {
namespace {

namespace fs = std::filesystem;

TEST(TaskTest, FindsRegisteredTasksByPipelineTag) {
  const TaskSpec* generation = find_task("text-generation");
  ASSERT_NE(generation, nullptr);
  EXPECT_EQ(generation->library, "transformers");
  EXPECT_EQ(generation->hub_filter.pipeline_tag, "text-generation");
  EXPECT_EQ(generation->default_prompt, "The capital of France is");
  EXPECT_EQ(to_string(generation->comparison), "tokens");
  EXPECT_EQ(to_string(generation->memory_estimate), "weights");
  EXPECT_EQ(to_string(generation->display), "text");
  EXPECT_EQ(find_task("image-text-to-text")->default_prompt,
            "Describe this image in one sentence.");
  EXPECT_EQ(find_task("text-to-speech"), nullptr);
  EXPECT_EQ(find_task("Text-Generation"), nullptr);
  const TaskSpec* sentences = find_task("sentence-similarity");
  ASSERT_NE(sentences, nullptr);
  EXPECT_EQ(sentences->library, "sentence-transformers");
  EXPECT_EQ(sentences->hub_filter.library, "sentence-transformers");
  EXPECT_EQ(to_string(sentences->comparison), "embeddings");
  EXPECT_FALSE(sentences->shards);
  EXPECT_TRUE(generation->shards);
  EXPECT_THAT(task_names(),
              ::testing::ElementsAre("text-generation", "image-text-to-text", "sentence-similarity",
                                     "feature-extraction", "text-classification", "fill-mask",
                                     "token-classification", "image-classification",
                                     "zero-shot-image-classification", "translation",
                                     "text2text-generation", "text-ranking",
                                     "automatic-speech-recognition", "text-to-image"));
  // Speech recognition: one task, two comparisons, chosen by the model's architecture.
  const TaskSpec* speech = find_task("automatic-speech-recognition");
  ASSERT_NE(speech, nullptr);
  EXPECT_EQ(speech->comparison, Comparison::kTokens);
  const TaskSpec whisper = spec_for_model(*speech, {"WhisperForConditionalGeneration"});
  EXPECT_EQ(whisper.comparison, Comparison::kTokens);
  EXPECT_TRUE(generates_text(whisper));
  const TaskSpec ctc = spec_for_model(*speech, {"Wav2Vec2ForCTC"});
  EXPECT_EQ(ctc.comparison, Comparison::kLogits);
  EXPECT_EQ(ctc.logits_row, "frame");
  EXPECT_EQ(ctc.name, "automatic-speech-recognition");
  // A task without families is itself, whatever the architecture.
  EXPECT_EQ(spec_for_model(*find_task("text-classification"), {"Wav2Vec2ForCTC"}).comparison,
            Comparison::kLogits);
  EXPECT_EQ(spec_for_model(*find_task("text-generation"), {"Wav2Vec2ForCTC"}).comparison,
            Comparison::kTokens);
  // A reranker is loaded by transformers; the Hub lists rerankers under sentence-transformers.
  const TaskSpec* ranking = find_task("text-ranking");
  ASSERT_NE(ranking, nullptr);
  EXPECT_EQ(ranking->library, "transformers");
  EXPECT_EQ(ranking->hub_filter.library, "sentence-transformers");
  EXPECT_EQ(to_string(ranking->comparison), "ranking");
  EXPECT_FALSE(generates_text(*ranking));
  EXPECT_TRUE(ranking->text_only);
  for (const char* name : {"translation", "text2text-generation"}) {
    const TaskSpec* seq2seq = find_task(name);
    ASSERT_NE(seq2seq, nullptr) << name;
    EXPECT_EQ(seq2seq->recipe, "text2text");  // one recipe, the family's inputs inside it
    EXPECT_TRUE(generates_text(*seq2seq));
    EXPECT_FALSE(seq2seq->shards);
  }
  const TaskSpec* classifier = find_task("image-classification");
  ASSERT_NE(classifier, nullptr);
  EXPECT_EQ(classifier->recipe, "image-classification");
  EXPECT_EQ(to_string(classifier->comparison), "logits");
  EXPECT_EQ(classifier->logits_row, "image");
  EXPECT_TRUE(classifier->shows_reference_prediction);
  const TaskSpec* features = find_task("feature-extraction");
  ASSERT_NE(features, nullptr);
  EXPECT_EQ(features->library, "transformers");
  EXPECT_EQ(features->recipe, "feature-extraction");
  EXPECT_EQ(to_string(features->comparison), "embeddings");
  EXPECT_FALSE(features->shards);
  for (const char* name : {"text-classification", "fill-mask", "token-classification"}) {
    const TaskSpec* encoder = find_task(name);
    ASSERT_NE(encoder, nullptr) << name;
    EXPECT_EQ(encoder->recipe, "encoder");
    EXPECT_EQ(to_string(encoder->comparison), "logits");
    EXPECT_FALSE(encoder->shards);
  }
  const TaskSpec* images = find_task("text-to-image");
  ASSERT_NE(images, nullptr);
  EXPECT_EQ(images->library, "diffusers");
  EXPECT_EQ(to_string(images->comparison), "image");
  EXPECT_EQ(to_string(images->display), "image");
}

TEST(TaskTest, EveryTaskIsComplete) {
  std::set<std::string_view> names;
  for (const TaskSpec& spec : tasks()) {
    SCOPED_TRACE(spec.name);
    EXPECT_TRUE(names.insert(spec.name).second) << "registered twice";
    EXPECT_FALSE(spec.library.empty());
    EXPECT_FALSE(spec.hub_filter.pipeline_tag.empty());
    EXPECT_FALSE(spec.hub_filter.library.empty());
    EXPECT_FALSE(spec.default_prompt.empty());
  }
}

// What a row of an encoder's logits is, as a FAIL_MISMATCH message names it ("masked token 2:
// the logits pick class ..."); the logits rule puts it there (src/trial/verdict_rules_test.cc).
TEST(TaskTest, EachLogitsTaskNamesItsRows) {
  EXPECT_EQ(find_task("text-classification")->logits_row, "sentence");
  EXPECT_EQ(find_task("fill-mask")->logits_row, "masked token");
  EXPECT_EQ(find_task("token-classification")->logits_row, "token");
  for (const TaskSpec& spec : tasks()) {
    EXPECT_EQ(spec.comparison == Comparison::kLogits, !spec.logits_row.empty()) << spec.name;
  }
}

// The page learns from the registry (through /api/versions) which tasks generate text and what
// their speed figures measure: the tasks whose outputs are compared token by token.
TEST(TaskTest, TheTasksThatGenerateTextAreThoseComparedByTokens) {
  std::vector<std::string_view> generating;
  for (const TaskSpec& spec : tasks()) {
    if (generates_text(spec)) generating.push_back(spec.name);
  }
  // Speech recognition's own comparison is its encoder-decoders' (its CTC models' is a family's).
  EXPECT_THAT(generating,
              ::testing::ElementsAre("text-generation", "image-text-to-text", "translation",
                                     "text2text-generation", "automatic-speech-recognition"));
  EXPECT_EQ(speed_meaning(*find_task("text-generation")),
            "Run time, first token and decode tokens/s measure 32 greedy tokens at batch 1 with a "
            "static cache, after compiling; the speedup compares them with the same model run "
            "eagerly in the same process, on the same inputs.");
  EXPECT_EQ(speed_meaning(*find_task("image-text-to-text")),
            speed_meaning(*find_task("text-generation")));
  for (const char* name : {"sentence-similarity", "text-classification", "text-to-image"}) {
    EXPECT_EQ(
        speed_meaning(*find_task(name)),
        "Run time and throughput measure the recipe\u2019s fixed inputs after compiling; the "
        "speedup compares the throughput with the same model run eagerly in the same process.")
        << name;
  }
}

//! Every registered task has its template in recipes/, and every template that is not a shared
//! part (_name.py) is a registered task's.
TEST(TaskTest, TasksAndRecipeTemplatesAgree) {
  const fs::path recipes = fs::path(CANRUN_SOURCE_DIR) / "recipes";
  std::set<std::string> templates;
  for (const auto& entry : fs::directory_iterator(recipes)) {
    if (entry.path().extension() == ".py" && !entry.path().stem().string().starts_with('_'))
      templates.insert(entry.path().stem().string());
  }
  std::set<std::string> recipes_of_tasks;
  for (const TaskSpec& spec : tasks()) {
    EXPECT_TRUE(templates.contains(std::string(spec.recipe)))
        << "task " << spec.name << " has no template recipes/" << spec.recipe << ".py";
    recipes_of_tasks.emplace(spec.recipe);
  }
  for (const std::string& name : templates) {
    EXPECT_TRUE(recipes_of_tasks.contains(name))
        << "recipes/" << name << ".py is the template of no registered task (src/task/task.cc)";
  }
}

}  // namespace
}  // namespace canrun::task
