#include "hub/model_facts.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/json_fields.h"
#include "core/model_id.h"
#include "core/text.h"

namespace canrun::hub {
namespace {

using nlohmann::json;

Status read_config_fields(const json& config, std::string_view where, ModelFacts& facts) {
  if (!config.is_object()) {
    return corrupt(fmt::format("{}: config is {}, not an object", where, config.type_name()));
  }
  CANRUN_RETURN_IF_ERROR(
      read_json_string_list(config, where, "architectures", facts.architectures));
  CANRUN_RETURN_IF_ERROR(read_json_string(config, where, "model_type", facts.model_type));
  if (const auto it = config.find("auto_map"); it != config.end() && !it->is_null()) {
    if (!it->is_object()) return json_field_type_error(where, "auto_map", *it, "an object");
    facts.auto_map.clear();
    for (const auto& [auto_class, reference] : it->items()) {
      facts.auto_map[auto_class] =
          reference.is_string() ? reference.get<std::string>() : reference.dump();
    }
  }
  if (const auto it = config.find("quantization_config"); it != config.end() && !it->is_null()) {
    if (!it->is_object())
      return json_field_type_error(where, "quantization_config", *it, "an object");
    const auto method = it->find("quant_method");
    facts.quantization = method != it->end() && method->is_string() && !method->empty()
                             ? method->get<std::string>()
                             : std::string("unknown");
  }
  if (const auto it = config.find("vision_config"); it != config.end() && it->is_object()) {
    facts.vision_config = true;
  }
  // Multimodal configs keep the language model's numbers under text_config.
  const json* numbers = &config;
  if (const auto text = config.find("text_config"); text != config.end() && text->is_object() &&
                                                    !config.contains("num_attention_heads") &&
                                                    !config.contains("n_head")) {
    numbers = &*text;
  }
  // Older configs name the head count as transformers' attribute_map aliases do (GPT-2: n_head).
  for (const char* field : {"num_attention_heads", "n_head", "num_heads", "n_heads"}) {
    if (!numbers->contains(field)) continue;
    CANRUN_RETURN_IF_ERROR(read_json_count(*numbers, where, field, facts.num_attention_heads));
    break;
  }
  CANRUN_RETURN_IF_ERROR(
      read_json_count(*numbers, where, "num_key_value_heads", facts.num_key_value_heads));
  for (const char* field : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (!numbers->contains(field)) continue;
    CANRUN_RETURN_IF_ERROR(read_json_count(*numbers, where, field, facts.num_experts));
    break;
  }
  return ok_status();
}

}  // namespace

bool ModelFacts::has_tokenizer() const {
  static constexpr std::string_view kTokenizerFiles[] = {
      "tokenizer.json", "tokenizer_config.json",  "vocab.txt", "vocab.json", "tokenizer.model",
      "spiece.model",   "sentencepiece.bpe.model"};
  return std::any_of(files.begin(), files.end(), [](const std::string& file) {
    return std::find(std::begin(kTokenizerFiles), std::end(kTokenizerFiles), file) !=
           std::end(kTokenizerFiles);
  });
}

bool ModelFacts::has_safetensors() const {
  const bool pipeline = std::find(files.begin(), files.end(), "model_index.json") != files.end();
  for (const auto& file : files) {
    if (file == "model.safetensors" || file == "model.safetensors.index.json") return true;
    // A diffusers pipeline: its components' weights are in their folders (the file list cannot
    // tell a weightless component; reading the headers does, see read_checkpoint_headers).
    if (pipeline && file.find('/') != std::string::npos &&
        (file.ends_with(".safetensors") || file.ends_with(".safetensors.index.json"))) {
      return true;
    }
  }
  return false;
}

std::string foreign_components_why(const std::vector<std::string>& components, bool in_repo) {
  return fmt::format(
      "model_index.json names {} ({}): {}; canrun loads only diffusers' and transformers' "
      "classes and never sets trust_remote_code.",
      fmt::join(components, ", "), components.size() == 1 ? "a component" : "components",
      in_repo ? "code from the repo" : "classes of a library outside the stack");
}

bool is_expert_tensor(std::string_view name) {
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = name.find('.', start);
    const std::string_view part =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part == "experts") return true;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return false;
}

Status apply_model_info(const json& info, ModelFacts& facts) {
  constexpr std::string_view kWhere = "Hub model info";
  if (!info.is_object()) {
    return corrupt(fmt::format("{} is {}, not an object", kWhere, info.type_name()));
  }
  if (!info.contains("id")) return corrupt(fmt::format("{} has no field \"id\"", kWhere));
  CANRUN_ASSIGN_OR_RETURN(const std::string id, required_json_string(info, kWhere, "id"));
  auto parsed_id = ModelId::parse(id);
  if (!parsed_id.ok()) {
    return corrupt(fmt::format("{}: field \"id\": {}", kWhere, parsed_id.error().message()));
  }
  facts.model_id = parsed_id->str();
  std::optional<std::string> sha;
  CANRUN_RETURN_IF_ERROR(read_json_string(info, kWhere, "sha", sha));
  if (sha) {
    auto revision = Revision::parse(*sha);
    if (!revision.ok() || !revision->is_commit()) {
      return corrupt(fmt::format("{}: field \"sha\" is {}, not a 40-hex commit", kWhere,
                                 quote_for_message(*sha)));
    }
    facts.sha = revision->str();
  }
  CANRUN_RETURN_IF_ERROR(read_json_string(info, kWhere, "pipeline_tag", facts.pipeline_tag));
  CANRUN_RETURN_IF_ERROR(read_json_string(info, kWhere, "library_name", facts.library_name));
  CANRUN_RETURN_IF_ERROR(read_json_string_list(info, kWhere, "tags", facts.tags));
  if (const auto gated = info.find("gated"); gated != info.end() && !gated->is_null()) {
    if (gated->is_boolean()) {
      facts.gated = gated->get<bool>() ? "manual" : "";
    } else if (gated->is_string() &&
               (gated->get<std::string>() == "auto" || gated->get<std::string>() == "manual")) {
      facts.gated = gated->get<std::string>();
    } else {
      return json_field_type_error(kWhere, "gated", *gated, "false, \"auto\" or \"manual\"");
    }
  }
  if (const auto siblings = info.find("siblings"); siblings != info.end() && !siblings->is_null()) {
    if (!siblings->is_array())
      return json_field_type_error(kWhere, "siblings", *siblings, "a list");
    facts.files.clear();
    for (const auto& sibling : *siblings) {
      if (!sibling.is_object())
        return json_field_type_error(kWhere, "siblings", sibling, "a list of objects");
      const auto name = sibling.find("rfilename");
      if (name == sibling.end() || !name->is_string()) {
        return corrupt(
            fmt::format("{}: an entry of \"siblings\" has no string \"rfilename\"", kWhere));
      }
      facts.files.push_back(name->get<std::string>());
    }
  }
  if (const auto config = info.find("config"); config != info.end() && !config->is_null()) {
    CANRUN_RETURN_IF_ERROR(read_config_fields(*config, "Hub model info config", facts));
  }
  return ok_status();
}

Status apply_config(const json& config, ModelFacts& facts) {
  return read_config_fields(config, "config.json", facts);
}

void apply_model_card(std::string_view readme, ModelFacts& facts) {
  const auto next_line = [&readme](std::size_t& at) {
    const std::size_t end = std::min(readme.find('\n', at), readme.size());
    std::string_view line = readme.substr(at, end - at);
    at = end + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    return line;
  };
  std::size_t at = 0;
  if (next_line(at) != "---") return;
  while (at < readme.size()) {
    const std::string_view line = next_line(at);
    if (line == "---" || line == "...") return;
    for (auto [key, field] : {std::pair{std::string_view("pipeline_tag:"), &facts.pipeline_tag},
                              std::pair{std::string_view("library_name:"), &facts.library_name}}) {
      if (!line.starts_with(key) || field->has_value()) continue;
      std::string_view value = line.substr(key.size());
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
      }
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
        value.remove_suffix(1);
      }
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      if (!value.empty()) *field = std::string(value);
    }
  }
}

void apply_checkpoint(const std::vector<std::pair<std::string, SafetensorsHeader>>& headers,
                      ModelFacts& facts) {
  facts.tensors.clear();
  facts.weights_bytes_by_dtype.clear();
  facts.weights_bytes = facts.expert_weights_bytes = facts.non_expert_weights_bytes = 0;
  for (const auto& [file, header] : headers) {
    for (const auto& tensor : header.tensors) {
      TensorFacts out{tensor.name,    tensor.dtype, tensor.shape,
                      tensor.bytes(), file,         is_expert_tensor(tensor.name)};
      facts.weights_bytes += out.bytes;
      facts.weights_bytes_by_dtype[out.dtype] += out.bytes;
      (out.expert ? facts.expert_weights_bytes : facts.non_expert_weights_bytes) += out.bytes;
      facts.tensors.push_back(std::move(out));
    }
  }
}

json facts_to_json(const ModelFacts& facts, bool with_tensors) {
  const auto optional = [](const auto& value) -> json {
    return value ? json(*value) : json(nullptr);
  };
  json out = {
      {"model_id", facts.model_id},
      {"revision", facts.revision},
      {"sha", facts.sha.empty() ? json(nullptr) : json(facts.sha)},
      {"pipeline_tag", optional(facts.pipeline_tag)},
      {"library_name", optional(facts.library_name)},
      {"tags", facts.tags},
      {"gated", facts.gated.empty() ? json(false) : json(facts.gated)},
      {"files", facts.files},
      {"has_safetensors", facts.has_safetensors()},
      {"config",
       {{"architectures", facts.architectures},
        {"model_type", optional(facts.model_type)},
        {"auto_map", facts.auto_map},
        {"num_attention_heads", optional(facts.num_attention_heads)},
        {"num_key_value_heads", optional(facts.num_key_value_heads)},
        {"num_experts", optional(facts.num_experts)}}},
      {"weights",
       {{"source", facts.weights_source},
        {"bytes", facts.weights_bytes},
        {"bytes_by_dtype", facts.weights_bytes_by_dtype},
        {"expert_bytes", facts.expert_weights_bytes},
        {"non_expert_bytes", facts.non_expert_weights_bytes},
        {"tensor_count", facts.tensors.size()}}},
  };
  if (with_tensors) {
    json tensors = json::array();
    for (const auto& tensor : facts.tensors) {
      tensors.push_back({{"name", tensor.name},
                         {"dtype", tensor.dtype},
                         {"shape", tensor.shape},
                         {"bytes", tensor.bytes},
                         {"file", tensor.file},
                         {"expert", tensor.expert}});
    }
    out["tensors"] = std::move(tensors);
  }
  return out;
}

Result<ModelFacts> facts_from_model_info_text(std::string_view text, std::string_view source_name) {
  const auto info = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (info.is_discarded()) {
    return corrupt(
        fmt::format("{}: not valid JSON ({} bytes; truncated?)", source_name, text.size()));
  }
  ModelFacts facts;
  if (auto status = apply_model_info(info, facts); !status.ok()) {
    return status.error().with_context(source_name);
  }
  return facts;
}

}  // namespace canrun::hub
