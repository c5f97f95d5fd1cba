// ModelFacts: what canrun knows about one Hub model before running it — from the Hub's model
// info, its config.json and its safetensors headers. The planner reads these (weights bytes,
// expert split, head and expert counts); `canrun hub info` prints them.
//
// The mapping from JSON (the Hub's /api/models/{id} answer, config.json) checks every field's
// type and says which field was wrong; absent optional fields stay empty.
//
// Thread safety: plain values and free functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "hub/safetensors_header.h"

namespace canrun::hub {

//! One tensor of the checkpoint, with the file that holds it.
struct TensorFacts {
  std::string name;                  //!< tensor name, e.g. "model.layers.0.mlp.experts.3.w1.weight"
  std::string dtype;                 //!< safetensors dtype name
  std::vector<std::uint64_t> shape;  //!< dimensions
  std::uint64_t bytes = 0;           //!< size of its data
  std::string file;                  //!< the .safetensors file, relative to the repo root
  bool expert = false;               //!< belongs to a routed expert (see is_expert_tensor)
};

struct ModelFacts {
  std::string model_id;  //!< "owner/name"
  std::string revision;  //!< the revision asked for ("main", a tag, a sha)
  std::string sha;       //!< the commit it resolved to; empty if unknown
  //! The Hub's task: its model info's, else the model card's (README.md front matter).
  std::optional<std::string> pipeline_tag;
  std::optional<std::string> library_name;  //!< "transformers", ... (the same sources)
  std::vector<std::string> tags;            //!< the Hub's tags
  std::string gated;                        //!< "" (not gated), "auto" or "manual"
  std::vector<std::string> files;           //!< every file of the repo ("siblings")

  // config.json (the text model's config for multimodal models, under "text_config").
  std::vector<std::string> architectures;       //!< e.g. {"LlamaForCausalLM"}
  std::optional<std::string> model_type;        //!< e.g. "llama"
  std::map<std::string, std::string> auto_map;  //!< auto class → remote code reference
  //! quantization_config.quant_method ("fp8", "gptq", "awq", "bitsandbytes", ...): the weights
  //! are quantized; absent for a plain checkpoint.
  std::optional<std::string> quantization;
  std::optional<std::int64_t> num_attention_heads;  //!< attention heads
  std::optional<std::int64_t> num_key_value_heads;  //!< KV heads (GQA)
  std::optional<std::int64_t> num_experts;  //!< routed experts (num_local_experts / num_experts)
  bool vision_config = false;  //!< config.json has a vision_config (a vision-language model)

  // The safetensors headers.
  std::vector<TensorFacts> tensors;                             //!< every tensor, by file
  std::map<std::string, std::uint64_t> weights_bytes_by_dtype;  //!< dtype → bytes
  std::uint64_t weights_bytes = 0;                              //!< all tensors' bytes
  std::uint64_t expert_weights_bytes = 0;                       //!< routed experts' bytes
  std::uint64_t non_expert_weights_bytes = 0;                   //!< everything else
  std::string weights_source;  //!< where the headers were read: "hub", "local", "hf-cache"

  //! A diffusers pipeline (model_index.json): its components that are not diffusers' or
  //! transformers' classes, as "<name>: <library>.<class>" (code from the repo or another
  //! library, which canrun never loads).
  std::vector<std::string> foreign_components;
  //! Those of them whose library is a Python file of the repo itself (custom code).
  bool foreign_components_in_repo = false;
  //! A diffusers pipeline's class (model_index.json's "_class_name"), e.g.
  //! "StableDiffusionPipeline"; empty for other repos.
  std::string pipeline_class;

  //! Whether the repo has safetensors weights (model.safetensors or its index; a pipeline's
  //! components' safetensors in their folders).
  bool has_safetensors() const;
  //! Whether the repo has a tokenizer at its root (tokenizer.json, tokenizer_config.json, or a
  //! vocabulary file); an image or audio encoder has none.
  bool has_tokenizer() const;
};

//! Why a pipeline with foreign_components is excluded (remote_code when their code is the repo's,
//! incompatible when another library's).
std::string foreign_components_why(const std::vector<std::string>& components, bool in_repo);

//! Whether a tensor name belongs to a routed expert: one of its dot-separated parts is
//! "experts" ("model.layers.3.mlp.experts.7.down_proj.weight", "mlp.experts.gate_up_proj");
//! shared experts ("shared_experts", "shared_expert") are not routed and count as non-expert.
bool is_expert_tensor(std::string_view name);

//! Fills the Hub fields from a /api/models/{id}[/revision/{rev}] answer. Errors (kCorrupt)
//! name the field and what it held: a non-object answer, an id that is missing or does not
//! validate, a field of the wrong type. Config fields present in the answer's "config" are
//! taken too (config.json, when read later, overrides them).
Status apply_model_info(const nlohmann::json& info, ModelFacts& facts);

//! Fills the config fields from config.json.
Status apply_config(const nlohmann::json& config, ModelFacts& facts);

//! Fills pipeline_tag and library_name, where the facts have none (the Hub's model info comes
//! first), from a model card (README.md): its YAML front matter's top-level "pipeline_tag:" and
//! "library_name:" lines. A card without front matter, or without those keys, changes nothing.
void apply_model_card(std::string_view readme, ModelFacts& facts);

//! Adds the tensors of each (file, header) and recomputes the totals.
void apply_checkpoint(const std::vector<std::pair<std::string, SafetensorsHeader>>& headers,
                      ModelFacts& facts);

//! The JSON form (stable key names, as printed by `canrun hub info --json`). With
//! `with_tensors` false the per-tensor list is left out (it can run to thousands).
nlohmann::json facts_to_json(const ModelFacts& facts, bool with_tensors = true);

//! Parses JSON text (e.g. the Hub's answer) and applies it; the fuzzed entry point of the
//! mapping. Malformed text is kCorrupt naming `source_name`.
Result<ModelFacts> facts_from_model_info_text(std::string_view text, std::string_view source_name);

}  // namespace canrun::hub
