#include "hub/rankings.h"

#include <fmt/format.h>

#include <system_error>

#include "core/atomic_file.h"
#include "core/json_fields.h"
#include "core/model_id.h"
#include "core/text.h"
#include "hub/safetensors_header.h"

namespace canrun::hub {

using nlohmann::json;
namespace fs = std::filesystem;

Result<RankingSort> parse_ranking_sort(std::string_view text) {
  if (text == "downloads") return RankingSort::kDownloads;
  if (text == "trending" || text == "trendingScore") return RankingSort::kTrending;
  return invalid_argument(
      fmt::format("sort {} is not one of downloads, trending", quote_for_message(text)));
}

std::string_view ranking_sort_name(RankingSort sort) {
  return sort == RankingSort::kDownloads ? "downloads" : "trending";
}

std::string_view ranking_sort_key(RankingSort sort) {
  return sort == RankingSort::kDownloads ? "downloads" : "trendingScore";
}

Status check_task_name(std::string_view task) {
  if (task.empty() || task.size() > 64) {
    return invalid_argument(
        fmt::format("task {} must be 1 to 64 characters", quote_for_message(task)));
  }
  for (const char c : task) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return invalid_argument(fmt::format(
          "task {} has {}; a task is a Hub pipeline tag of a-z, 0-9 and '-' (text-generation)",
          quote_for_message(task), describe_byte(static_cast<unsigned char>(c))));
    }
  }
  return ok_status();
}

namespace {

//! The Hub's "safetensors": {"parameters": {DTYPE: n}, "total": n}.
Status read_parameter_counts(const json& safetensors, std::string_view where,
                             std::map<std::string, std::int64_t>& out) {
  if (!safetensors.is_object()) {
    return json_field_type_error(where, "safetensors", safetensors, "an object");
  }
  const auto parameters = safetensors.find("parameters");
  if (parameters == safetensors.end() || parameters->is_null()) return ok_status();
  if (!parameters->is_object()) {
    return json_field_type_error(where, "safetensors.parameters", *parameters,
                                 "an object of dtype → count");
  }
  for (const auto& [dtype, count] : parameters->items()) {
    if (!count.is_number_integer() || count.get<std::int64_t>() < 0) {
      return json_field_type_error(where, fmt::format("safetensors.parameters.{}", dtype), count,
                                   "a non-negative integer");
    }
    out[dtype] = count.get<std::int64_t>();
  }
  return ok_status();
}

}  // namespace

std::optional<std::uint64_t> RankedModel::weights_bytes() const {
  if (parameters_by_dtype.empty()) return std::nullopt;
  std::uint64_t bits = 0;
  for (const auto& [dtype, count] : parameters_by_dtype) {
    const auto size = safetensors_dtype_bits(dtype);
    if (!size) return std::nullopt;
    bits += static_cast<std::uint64_t>(count) * *size;
  }
  return (bits + 7) / 8;
}

Result<RankedModel> ranked_model_from_json(const json& value, std::string_view where) {
  if (!value.is_object()) {
    return corrupt(fmt::format("{}: {} where a model object belongs", where, value.type_name()));
  }
  RankedModel model;
  CANRUN_ASSIGN_OR_RETURN(const std::string id, required_json_string(value, where, "id"));
  auto parsed = ModelId::parse(id);
  if (!parsed.ok()) {
    return corrupt(fmt::format("{}: field \"id\": {}", where, parsed.error().message()));
  }
  model.id = parsed->str();
  const std::string at = fmt::format("{} ({})", where, model.id);
  CANRUN_RETURN_IF_ERROR(read_json_integer(value, at, "downloads", model.downloads));
  CANRUN_RETURN_IF_ERROR(read_json_integer(value, at, "likes", model.likes));
  CANRUN_RETURN_IF_ERROR(read_json_number(value, at, "trendingScore", model.trending_score));
  CANRUN_RETURN_IF_ERROR(read_json_string(value, at, "pipeline_tag", model.pipeline_tag));
  CANRUN_RETURN_IF_ERROR(read_json_string(value, at, "library_name", model.library_name));
  CANRUN_RETURN_IF_ERROR(read_json_string(value, at, "createdAt", model.created_at));
  CANRUN_RETURN_IF_ERROR(read_json_string(value, at, "lastModified", model.last_modified));
  CANRUN_RETURN_IF_ERROR(read_json_string_list(value, at, "tags", model.tags));
  if (const auto safetensors = value.find("safetensors");
      safetensors != value.end() && !safetensors->is_null()) {
    CANRUN_RETURN_IF_ERROR(read_parameter_counts(*safetensors, at, model.parameters_by_dtype));
  }
  if (const auto config = value.find("config"); config != value.end() && !config->is_null()) {
    if (!config->is_object()) return json_field_type_error(at, "config", *config, "an object");
    const std::string in_config = fmt::format("{}, config", at);
    CANRUN_RETURN_IF_ERROR(
        read_json_string_list(*config, in_config, "architectures", model.architectures));
    CANRUN_RETURN_IF_ERROR(read_json_string(*config, in_config, "model_type", model.model_type));
    if (const auto quantization = config->find("quantization_config");
        quantization != config->end() && quantization->is_object()) {
      CANRUN_RETURN_IF_ERROR(read_json_string(*quantization, in_config + ".quantization_config",
                                              "quant_method", model.quant_method));
    }
  }
  if (const auto gated = value.find("gated"); gated != value.end() && !gated->is_null()) {
    if (gated->is_boolean() && !gated->get<bool>()) {
      model.gated = "";
    } else if (gated->is_string() &&
               (gated->get<std::string>() == "auto" || gated->get<std::string>() == "manual")) {
      model.gated = gated->get<std::string>();
    } else {
      return json_field_type_error(at, "gated", *gated, "false, \"auto\" or \"manual\"");
    }
  }
  return model;
}

json ranked_model_to_json(const RankedModel& model) {
  const auto optional = [](const std::optional<std::string>& text) -> json {
    return text ? json(*text) : json(nullptr);
  };
  json out = {{"id", model.id},
              {"downloads", model.downloads},
              {"likes", model.likes},
              {"trendingScore", model.trending_score},
              {"pipeline_tag", optional(model.pipeline_tag)},
              {"library_name", optional(model.library_name)},
              {"tags", model.tags},
              {"gated", model.gated.empty() ? json(false) : json(model.gated)},
              {"createdAt", model.created_at},
              {"lastModified", model.last_modified}};
  if (!model.parameters_by_dtype.empty()) {
    std::int64_t total = 0;
    for (const auto& [dtype, count] : model.parameters_by_dtype) total += count;
    out["safetensors"] = {{"parameters", model.parameters_by_dtype}, {"total", total}};
  }
  if (!model.architectures.empty() || model.model_type || model.quant_method) {
    json config = json::object();
    if (!model.architectures.empty()) config["architectures"] = model.architectures;
    if (model.model_type) config["model_type"] = *model.model_type;
    if (model.quant_method) config["quantization_config"] = {{"quant_method", *model.quant_method}};
    out["config"] = std::move(config);
  }
  return out;
}

fs::path snapshot_path(const fs::path& dir, std::string_view task, RankingSort sort) {
  return dir / fmt::format("{}__{}.json", task, ranking_sort_name(sort));
}

json snapshot_to_json(const RankingsSnapshot& snapshot) {
  json models = json::array();
  for (const auto& model : snapshot.models) models.push_back(ranked_model_to_json(model));
  return {{"task", snapshot.task},
          {"sort", ranking_sort_name(snapshot.sort)},
          {"fetched_at", snapshot.fetched_at},
          {"endpoint", snapshot.endpoint},
          {"models", std::move(models)}};
}

Result<RankingsSnapshot> snapshot_from_json_text(std::string_view text, std::string_view where) {
  const auto value = json::parse(text, nullptr, false);
  if (value.is_discarded()) {
    return corrupt(fmt::format("{}: not valid JSON ({} bytes; truncated?)", where, text.size()));
  }
  if (!value.is_object()) {
    return corrupt(fmt::format("{}: a JSON {}, not an object", where, value.type_name()));
  }
  RankingsSnapshot snapshot;
  CANRUN_ASSIGN_OR_RETURN(snapshot.task, required_json_string(value, where, "task"));
  CANRUN_ASSIGN_OR_RETURN(const std::string sort, required_json_string(value, where, "sort"));
  auto parsed_sort = parse_ranking_sort(sort);
  if (!parsed_sort.ok())
    return corrupt(fmt::format("{}: {}", where, parsed_sort.error().message()));
  snapshot.sort = *parsed_sort;
  CANRUN_ASSIGN_OR_RETURN(snapshot.fetched_at, required_json_string(value, where, "fetched_at"));
  if (auto fetched_at = parse_utc(snapshot.fetched_at); !fetched_at.ok()) {
    return corrupt(
        fmt::format("{}: field \"fetched_at\": {}", where, fetched_at.error().message()));
  }
  CANRUN_ASSIGN_OR_RETURN(snapshot.endpoint, required_json_string(value, where, "endpoint"));
  const auto models = value.find("models");
  if (models == value.end() || !models->is_array()) {
    return corrupt(fmt::format("{}: no \"models\" list", where));
  }
  for (std::size_t idx = 0; idx < models->size(); ++idx) {
    CANRUN_ASSIGN_OR_RETURN(
        RankedModel model,
        ranked_model_from_json((*models)[idx], fmt::format("{}, model {}", where, idx + 1)));
    snapshot.models.push_back(std::move(model));
  }
  return snapshot;
}

Status write_snapshot(const fs::path& dir, const RankingsSnapshot& snapshot) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return io_error(fmt::format("cannot create the rankings folder {}: {}",
                                quote_for_message(dir.string()), error.message()));
  }
  return write_file_atomically(snapshot_path(dir, snapshot.task, snapshot.sort),
                               snapshot_to_json(snapshot).dump(1) + "\n");
}

Result<RankingsSnapshot> read_snapshot(const fs::path& dir, std::string_view task,
                                       RankingSort sort) {
  const fs::path path = snapshot_path(dir, task, sort);
  std::error_code error;
  if (!fs::exists(path, error)) {
    return not_found(fmt::format("no rankings snapshot {}", quote_for_message(path.string())));
  }
  CANRUN_ASSIGN_OR_RETURN(const std::string text, read_file(path));
  return snapshot_from_json_text(text, path.string());
}

std::string describe_age(std::chrono::seconds age) {
  const long long total = age.count();
  if (total < 0) return "0 s (fetched_at is in the future)";
  if (total < 60) return fmt::format("{} s", total);
  if (total < 3600) return fmt::format("{} min", total / 60);
  if (total < 86'400) return fmt::format("{} h {} min", total / 3600, total % 3600 / 60);
  return fmt::format("{} d {} h", total / 86'400, total % 86'400 / 3600);
}

}  // namespace canrun::hub
