#include "run/result_line.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace canrun::run {
namespace {

std::optional<double> number(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

//! The numbers of a JSON list into `values`, where null is a value that was not finite (run.py
//! writes NaN and infinities so: JSON has neither); anything else is corrupt.
Status numbers(const nlohmann::json& list, const char* key, std::vector<double>& values) {
  for (const auto& value : list) {
    if (value.is_null()) {
      values.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (value.is_number()) {
      values.push_back(value.get<double>());
    } else {
      return corrupt(fmt::format("the result line's {} are not numbers", key));
    }
  }
  return ok_status();
}

//! A list of lists of numbers under `key` (absent: empty), as numbers() reads them.
Result<std::vector<std::vector<double>>> matrix(const nlohmann::json& object, const char* key) {
  std::vector<std::vector<double>> rows;
  const auto found = object.find(key);
  if (found == object.end()) return rows;
  if (!found->is_array()) return corrupt(fmt::format("the result line's {} is not a list", key));
  for (const auto& row : *found) {
    if (!row.is_array()) return corrupt(fmt::format("the result line's {} are not lists", key));
    CANRUN_RETURN_IF_ERROR(numbers(row, key, rows.emplace_back()));
  }
  return rows;
}

//! The integers of the list under `key` (absent: none) into `tokens`.
Status integers(const nlohmann::json& object, const char* key, std::vector<std::int64_t>& tokens) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_array()) return ok_status();
  for (const auto& token : *found) {
    if (!token.is_number_integer()) {
      return corrupt(fmt::format("the result line's {} are not integers", key));
    }
    tokens.push_back(token.get<std::int64_t>());
  }
  return ok_status();
}

std::optional<std::int64_t> integer(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number_integer()) return std::nullopt;
  return found->get<std::int64_t>();
}

//! The eager baseline's and the long generation's figures.
Status read_perf(const nlohmann::json& json, RunReport& report) {
  report.eager_generate_s = number(json, "eager_generate_s");
  if (!report.eager_generate_s) report.eager_generate_s = number(json, "eager_encode_s");
  report.eager_ttft_s = number(json, "eager_ttft_s");
  report.eager_decode_tokens_per_s = number(json, "eager_decode_tokens_per_s");
  report.eager_throughput = number(json, "eager_throughput");
  report.eager_peak_memory_bytes = integer(json, "eager_peak_memory_bytes");
  report.eager_note = json.value("eager_note", "");
  CANRUN_RETURN_IF_ERROR(integers(json, "long_tokens", report.long_tokens));
  report.long_decode_tokens_per_s = number(json, "long_decode_tokens_per_s");
  report.long_compiled_graphs = integer(json, "long_compiled_graphs");
  std::vector<std::int64_t> agreed;
  CANRUN_RETURN_IF_ERROR(integers(json, "agreed", agreed));
  for (const std::int64_t one : agreed) report.agreed.push_back(one != 0);
  return ok_status();
}

}  // namespace

Result<std::optional<RunReport>> parse_result_line(std::string_view stdout_text) {
  std::size_t at = std::string_view::npos;
  for (std::size_t pos = stdout_text.rfind(kResultMarker); pos != std::string_view::npos;
       pos = pos == 0 ? std::string_view::npos : stdout_text.rfind(kResultMarker, pos - 1)) {
    if (pos == 0 || stdout_text[pos - 1] == '\n') {
      at = pos;
      break;
    }
  }
  if (at == std::string_view::npos) return std::optional<RunReport>();
  const std::size_t start = at + kResultMarker.size();
  const std::size_t end = std::min(stdout_text.find('\n', start), stdout_text.size());
  const auto json = nlohmann::json::parse(stdout_text.substr(start, end - start), nullptr, false);
  if (!json.is_object() || !json.contains("ok") || !json["ok"].is_boolean()) {
    return corrupt("the result line of run.py is not a JSON object with \"ok\"");
  }
  RunReport report;
  report.ok = json["ok"].get<bool>();
  report.stage = json.value("stage", "");
  CANRUN_RETURN_IF_ERROR(integers(json, "tokens", report.tokens));
  if (json.contains("text") && json["text"].is_string())
    report.text = json["text"].get<std::string>();
  report.load_s = number(json, "load_s");
  report.compile_s = number(json, "compile_s");
  // The measured call's seconds: generating, or encoding (sentence-similarity's run.py).
  report.generate_s = number(json, "generate_s");
  if (!report.generate_s) report.generate_s = number(json, "encode_s");
  report.ttft_s = number(json, "ttft_s");
  report.decode_tokens_per_s = number(json, "decode_tokens_per_s");
  report.peak_device_memory_bytes = integer(json, "peak_device_memory_bytes");
  CANRUN_RETURN_IF_ERROR(read_perf(json, report));
  if (const auto cache = json.find("compile_cache"); cache != json.end() && cache->is_object()) {
    const auto count = [&](const char* key) {
      const auto found = cache->find(key);
      return found != cache->end() && found->is_number_integer() ? found->get<std::int64_t>()
                                                                 : std::int64_t{0};
    };
    report.compile_cache = CompileCacheCounts{count("hits"), count("misses")};
  }
  report.agreement = number(json, "agreement");
  if (report.agreement && !(*report.agreement >= 0 && *report.agreement <= 1)) {
    report.agreement.reset();  // not a share
  }
  report.agreement_s = number(json, "agreement_s");
  report.agreement_positions = integer(json, "agreement_positions");
  report.agreement_compiled_graphs = integer(json, "agreement_compiled_graphs");
  if (const auto found = json.find("margins"); found != json.end() && found->is_array()) {
    CANRUN_RETURN_IF_ERROR(numbers(*found, "margins", report.margins));
  }
  CANRUN_ASSIGN_OR_RETURN(report.embeddings, matrix(json, "embeddings"));
  CANRUN_ASSIGN_OR_RETURN(report.embeddings_one_at_a_time,
                          matrix(json, "embeddings_one_at_a_time"));
  report.queries = integer(json, "queries").value_or(0);
  for (auto [key, field] : {std::pair{"pooling", &RunReport::pooling},
                            std::pair{"pooling_source", &RunReport::pooling_source},
                            std::pair{"source", &RunReport::source}}) {
    if (const auto found = json.find(key); found != json.end() && found->is_string()) {
      report.*field = found->get<std::string>();
    }
  }
  report.throughput = number(json, "throughput");
  report.throughput_unit = json.value("throughput_unit", "");
  report.time_to_first_image_s = number(json, "time_to_first_image_s");
  report.nan_values = integer(json, "nan_values");
  for (auto [key, field] : {std::pair{"outputs_file", &RunReport::outputs_file},
                            std::pair{"image_file", &RunReport::image_file},
                            std::pair{"input_image_file", &RunReport::input_image_file},
                            std::pair{"input_audio_file", &RunReport::input_audio_file}}) {
    const auto found = json.find(key);
    if (found == json.end()) continue;
    // A file of run.py's own folder: a plain name, never a path out of it.
    const std::string name = found->is_string() ? found->get<std::string>() : "";
    if (name.empty() || name.find('/') != std::string::npos || name.starts_with('.')) {
      return corrupt(
          fmt::format("the result line's {} is not a file name of the run's folder", key));
    }
    report.*field = name;
  }
  if (json.contains("versions") && json["versions"].is_object()) {
    for (const auto& [name, version] : json["versions"].items()) {
      if (version.is_string()) report.versions[name] = version.get<std::string>();
    }
  }
  if (json.contains("error") && json["error"].is_string())
    report.error = json["error"].get<std::string>();
  if (json.contains("error_types") && json["error_types"].is_array()) {
    for (const auto& name : json["error_types"]) {
      if (name.is_string()) report.error_types.push_back(name.get<std::string>());
    }
  }
  return std::optional<RunReport>(std::move(report));
}

}  // namespace canrun::run
