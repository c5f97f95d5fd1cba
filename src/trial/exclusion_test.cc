#include "trial/exclusion.h"

#include <gtest/gtest.h>

#include "hub/checkpoint_files.h"

namespace canrun::trial {
namespace {

backend::BackendProfile cpu_profile() {
  backend::BackendProfile profile;
  profile.name = "cpu";
  profile.dtype = "float32";
  return profile;
}

Checkpoint checkpoint_of(hub::ModelFacts facts) {
  Checkpoint checkpoint;
  checkpoint.model_id = "org/model";
  checkpoint.facts = std::move(facts);
  return checkpoint;
}

TEST(CheckpointExclusionTest, APlainCheckpointOfATestedTaskIsNotExcluded) {
  hub::ModelFacts facts;
  facts.architectures = {"LlamaForCausalLM"};
  EXPECT_FALSE(checkpoint_exclusion(checkpoint_of(facts), "text-generation", cpu_profile()));
}

TEST(CheckpointExclusionTest, RemoteCodeComesBeforeQuantizedAndTheTask) {
  hub::ModelFacts facts;
  facts.auto_map["AutoModelForCausalLM"] = "modeling_x.XForCausalLM";
  facts.quantization = "fp8";
  const auto excluded = checkpoint_exclusion(checkpoint_of(facts), "text-to-speech", cpu_profile());
  ASSERT_TRUE(excluded);
  EXPECT_EQ(excluded->reason, "remote_code");
  EXPECT_NE(excluded->why.find("modeling_x.XForCausalLM"), std::string::npos) << excluded->why;
}

TEST(CheckpointExclusionTest, APipelineOfAnotherLibraryIsIncompatible) {
  hub::ModelFacts facts;
  facts.foreign_components = {"unet: other_lib.UNet"};
  const auto excluded = checkpoint_exclusion(checkpoint_of(facts), "text-to-image", cpu_profile());
  ASSERT_TRUE(excluded);
  EXPECT_EQ(excluded->reason, "incompatible");
}

TEST(CheckpointExclusionTest, ATaskWithoutARecipeAndAPipelineTagOfOneAreUnsupported) {
  hub::ModelFacts facts;
  EXPECT_EQ(checkpoint_exclusion(checkpoint_of(facts), "text-to-speech", cpu_profile())->reason,
            "unsupported_task");
  facts.pipeline_tag = "image-to-3d";
  const auto excluded = checkpoint_exclusion(checkpoint_of(facts), "fill-mask", cpu_profile());
  ASSERT_TRUE(excluded);
  EXPECT_EQ(excluded->reason, "unsupported_task");
  EXPECT_NE(excluded->why.find("image-to-3d"), std::string::npos) << excluded->why;
}

TEST(CheckpointExclusionTest, QuantizedSaysWhatTheProfileRuns) {
  hub::ModelFacts facts;
  facts.quantization = "gptq";
  const auto excluded =
      checkpoint_exclusion(checkpoint_of(facts), "text-generation", cpu_profile());
  ASSERT_TRUE(excluded);
  EXPECT_EQ(excluded->reason, "quantized");
  EXPECT_EQ(excluded->why,
            "The checkpoint is gptq-quantized (quantization_config); the cpu profile runs "
            "float32 weights.");
}

TEST(CheckpointExclusionTest, NoSafetensorsWhyDoesNotRepeatTheReason) {
  Checkpoint checkpoint = checkpoint_of({});
  checkpoint.no_safetensors = not_found(
                                  "no_safetensors: the repo has neither model.safetensors "
                                  "nor model.safetensors.index.json (3 files)")
                                  .with_reason(reason::kNoSafetensors);
  const auto excluded = checkpoint_exclusion(checkpoint, "text-generation", cpu_profile());
  ASSERT_TRUE(excluded);
  EXPECT_EQ(excluded->reason, "no_safetensors");
  EXPECT_EQ(excluded->why,
            "the repo has neither model.safetensors nor model.safetensors.index.json (3 files)");
}

TEST(ResolveExclusionTest, OnlyAGatedModelIsExcludedByItsError) {
  const auto gated = resolve_exclusion(
      not_found("GET x: HTTP 403: the model is gated or private").with_reason(reason::kGated));
  ASSERT_TRUE(gated);
  EXPECT_EQ(gated->reason, "gated");
  EXPECT_FALSE(resolve_exclusion(
      not_found("org/model at main is not in the HF cache").with_reason(reason::kNotCached)));
}

TEST(CuratedExclusionTest, TheFirstMatchingRuleGivesReasonAndWhy) {
  auto exclusions = catalog::Exclusions::parse(R"([[exclude]]
match = "org/*-GGUF"
reason = "no_safetensors"
why = "GGUF only."
)",
                                               "test.toml");
  ASSERT_TRUE(exclusions.ok()) << exclusions.error().message();
  const auto excluded = curated_exclusion(*exclusions, *ModelId::parse("org/model-GGUF"));
  ASSERT_TRUE(excluded);
  EXPECT_EQ(excluded->reason, "no_safetensors");
  EXPECT_EQ(excluded->why, "GGUF only.");
  EXPECT_FALSE(curated_exclusion(*exclusions, *ModelId::parse("org/model")));
}

TEST(TaskOfModelTest, ThePipelineTagComesFirst) {
  hub::ModelFacts facts;
  facts.pipeline_tag = "sentence-similarity";
  facts.architectures = {"BertForMaskedLM"};
  facts.weights_source = "hf-cache";
  const ModelTask task = task_of_model(facts);
  EXPECT_EQ(task.task, "sentence-similarity");
  EXPECT_EQ(task.why, "from the model's pipeline_tag (README.md)");
  facts.weights_source = "hub";
  EXPECT_EQ(task_of_model(facts).why, "from the model's pipeline_tag (the Hub's model info)");
}

TEST(TaskOfModelTest, APipelineIsTextToImageUnlessItsClassSaysOtherwise) {
  hub::ModelFacts facts;
  facts.files = {std::string(hub::kPipelineIndexFile), "unet/config.json"};
  facts.pipeline_class = "StableDiffusionPipeline";
  ModelTask task = task_of_model(facts);
  EXPECT_EQ(task.task, "text-to-image");
  EXPECT_EQ(task.why, "from model_index.json (StableDiffusionPipeline)");
  facts.pipeline_class = "StableDiffusionImg2ImgPipeline";
  EXPECT_EQ(task_of_model(facts).task, "image-to-image");
}

TEST(TaskOfModelTest, ASentenceTransformersModelIsSentenceSimilarity) {
  hub::ModelFacts facts;
  facts.files = {"config.json", "modules.json", "model.safetensors"};
  facts.architectures = {"BertModel"};
  EXPECT_EQ(task_of_model(facts).task, "sentence-similarity");
}

TEST(TaskOfModelTest, TheArchitecturesHeadSaysTheTask) {
  const auto task_of = [](std::string architecture, bool vision = false) {
    hub::ModelFacts facts;
    facts.architectures = {std::move(architecture)};
    facts.vision_config = vision;
    return task_of_model(facts).task;
  };
  EXPECT_EQ(task_of("Qwen3ForCausalLM"), "text-generation");
  EXPECT_EQ(task_of("GPT2LMHeadModel"), "text-generation");
  EXPECT_EQ(task_of("LlavaForConditionalGeneration", true), "image-text-to-text");
  EXPECT_EQ(task_of("T5ForConditionalGeneration"), "text2text-generation");
  EXPECT_EQ(task_of("MarianMTModel"), "translation");  // not a bare model
  // Speech recognizers: a CTC head, or a speech encoder-decoder that names none.
  EXPECT_EQ(task_of("Wav2Vec2ForCTC"), "automatic-speech-recognition");
  EXPECT_EQ(task_of("WhisperForConditionalGeneration"), "automatic-speech-recognition");
  EXPECT_EQ(task_of("SpeechEncoderDecoderModel"), "automatic-speech-recognition");
  EXPECT_EQ(task_of("BertForSequenceClassification"), "text-classification");
  EXPECT_EQ(task_of("RobertaForMaskedLM"), "fill-mask");
  EXPECT_EQ(task_of("ElectraForTokenClassification"), "token-classification");
  EXPECT_EQ(task_of("BertForQuestionAnswering"), "question-answering");
  EXPECT_EQ(task_of("BertModel"), "feature-extraction");
}

TEST(TaskOfModelTest, WithoutAClueItIsTextGenerationAndSaysItIsTheDefault) {
  hub::ModelFacts facts;
  ModelTask task = task_of_model(facts);
  EXPECT_EQ(task.task, "text-generation");
  EXPECT_TRUE(task.why.starts_with("the default")) << task.why;
  facts.architectures = {"CanrunImaginaryEncoder"};
  task = task_of_model(facts);
  EXPECT_EQ(task.task, "text-generation");
  EXPECT_NE(task.why.find("CanrunImaginaryEncoder"), std::string::npos) << task.why;
}

}  // namespace
}  // namespace canrun::trial
