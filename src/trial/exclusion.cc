#include "trial/exclusion.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "hub/checkpoint_files.h"
#include "task/task.h"

namespace canrun::trial {
namespace {

//! An error's message without the reason it carries in front ("no_safetensors: the repo has
//! neither …" → "the repo has neither …"): the reason is said apart from the sentence.
std::string why_of(const Error& error, std::string_view reason) {
  const std::string& message = error.message();
  const std::string prefix = fmt::format("{}: ", reason);
  return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
}

bool has_file(const hub::ModelFacts& facts, std::string_view name) {
  return std::find(facts.files.begin(), facts.files.end(), name) != facts.files.end();
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

//! A diffusers pipeline's task, by its class name.
std::string pipeline_task(std::string_view pipeline_class) {
  for (std::string_view part : {"Img2Img", "Inpaint", "InstructPix2Pix", "Upscale"}) {
    if (contains(pipeline_class, part)) return "image-to-image";
  }
  if (contains(pipeline_class, "Video")) return "text-to-video";
  if (contains(pipeline_class, "Audio") || contains(pipeline_class, "Music")) {
    return "text-to-audio";
  }
  return "text-to-image";
}

//! The task an architecture's head implies, or empty.
std::string architecture_task(std::string_view architecture, bool vision) {
  struct Head {
    std::string_view suffix;
    std::string_view task;
  };
  static constexpr std::array kHeads = {
      Head{"ForCausalLM", "text-generation"},
      Head{"LMHeadModel", "text-generation"},
      Head{"ForImageTextToText", "image-text-to-text"},
      Head{"ForSequenceClassification", "text-classification"},
      Head{"ForMaskedLM", "fill-mask"},
      Head{"ForTokenClassification", "token-classification"},
      Head{"ForQuestionAnswering", "question-answering"},
      Head{"ForImageClassification", "image-classification"},
      Head{"ForCTC", "automatic-speech-recognition"},
      Head{"ForSpeechSeq2Seq", "automatic-speech-recognition"},
      Head{"MTModel", "translation"},  // MarianMTModel, before the bare "Model" below
  };
  for (const Head& head : kHeads) {
    if (architecture.ends_with(head.suffix)) return std::string(head.task);
  }
  // Speech encoder-decoders (AutoModelForSpeechSeq2Seq's) name no head of their own.
  for (std::string_view speech :
       {"WhisperForConditionalGeneration", "Speech2TextForConditionalGeneration",
        "MoonshineForConditionalGeneration", "SpeechEncoderDecoderModel"}) {
    if (architecture == speech) return "automatic-speech-recognition";
  }
  if (architecture.ends_with("ForConditionalGeneration")) {
    return vision ? "image-text-to-text" : "text2text-generation";
  }
  // An image-text model scores images against texts (CLIPModel, SiglipModel).
  for (std::string_view image_text : {"CLIPModel", "SiglipModel", "Siglip2Model"}) {
    if (architecture.ends_with(image_text)) return "zero-shot-image-classification";
  }
  // A bare model, no head (BertModel): its hidden states.
  if (architecture.ends_with("Model")) return "feature-extraction";
  return "";
}

}  // namespace

std::optional<Exclusion> curated_exclusion(const catalog::Exclusions& exclusions,
                                           const ModelId& id) {
  const auto rule = exclusions.match(id);
  if (!rule) return std::nullopt;
  return Exclusion{rule->reason, rule->why};
}

std::optional<Exclusion> resolve_exclusion(const Error& error) {
  if (!error.has_reason(reason::kGated)) return std::nullopt;
  return Exclusion{"gated", fmt::format("Gated on the Hub and the token in use has no access: {}",
                                        error.message())};
}

std::optional<Exclusion> checkpoint_exclusion(const Checkpoint& checkpoint, std::string_view task,
                                              const backend::BackendProfile& profile) {
  const hub::ModelFacts& facts = checkpoint.facts;
  if (!facts.auto_map.empty()) {
    const auto& [auto_class, reference] = *facts.auto_map.begin();
    return Exclusion{"remote_code", fmt::format("config.json has auto_map ({} → {}): it needs "
                                                "trust_remote_code, which canrun never sets.",
                                                auto_class, reference)};
  }
  if (!facts.foreign_components.empty()) {
    return Exclusion{
        facts.foreign_components_in_repo ? "remote_code" : "incompatible",
        hub::foreign_components_why(facts.foreign_components, facts.foreign_components_in_repo)};
  }
  if (!task::find_task(task)) {
    return Exclusion{"unsupported_task",
                     fmt::format("Task {} has no canrun recipe yet (tested: {}).", task,
                                 fmt::join(task::task_names(), ", "))};
  }
  if (facts.pipeline_tag && !task::find_task(*facts.pipeline_tag)) {
    return Exclusion{"unsupported_task",
                     fmt::format("Its pipeline_tag is {}, which has no canrun recipe yet "
                                 "(tested: {}).",
                                 *facts.pipeline_tag, fmt::join(task::task_names(), ", "))};
  }
  if (facts.quantization) {
    return Exclusion{"quantized",
                     fmt::format("The checkpoint is {}-quantized (quantization_config); the {} "
                                 "profile runs {} weights.",
                                 *facts.quantization, profile.name, profile.dtype)};
  }
  if (checkpoint.no_safetensors) {
    return Exclusion{"no_safetensors", why_of(*checkpoint.no_safetensors, "no_safetensors")};
  }
  return std::nullopt;
}

ModelTask task_of_model(const hub::ModelFacts& facts) {
  if (facts.pipeline_tag) {
    return {*facts.pipeline_tag,
            fmt::format("from the model's pipeline_tag ({})",
                        facts.weights_source == "hub" ? "the Hub's model info" : "README.md")};
  }
  if (has_file(facts, hub::kPipelineIndexFile)) {
    return {pipeline_task(facts.pipeline_class),
            facts.pipeline_class.empty()
                ? std::string("from model_index.json (a diffusers pipeline)")
                : fmt::format("from model_index.json ({})", facts.pipeline_class)};
  }
  for (std::string_view file : {"modules.json", "config_sentence_transformers.json"}) {
    if (has_file(facts, file)) {
      return {"sentence-similarity", fmt::format("from {} (a sentence-transformers model)", file)};
    }
  }
  for (const std::string& architecture : facts.architectures) {
    if (std::string task = architecture_task(architecture, facts.vision_config); !task.empty()) {
      return {std::move(task), fmt::format("from config.json's architecture {}", architecture)};
    }
  }
  return {"text-generation",
          facts.architectures.empty()
              ? std::string("the default: no pipeline_tag, model_index.json or architecture")
              : fmt::format("the default: no pipeline_tag, and {} implies no task",
                            facts.architectures.front())};
}

}  // namespace canrun::trial
