#include "serve/query_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/text.h"

namespace canrun::serve {

std::string param_of(const QueryParams& params, std::string_view name) {
  const auto found = params.find(std::string(name));
  return found == params.end() ? std::string() : found->second;
}

Error bad_parameters(std::string message, std::vector<std::string> names) {
  return invalid_argument(std::move(message)).with_reason(reason::kBadParameter, std::move(names));
}

std::string known_list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  return fmt::format("{}", fmt::join(names, ", "));
}

Status check_parameters(const QueryParams& params, const std::vector<std::string_view>& allowed,
                        std::string_view route) {
  std::vector<std::string> unknown;
  for (const auto& [name, value] : params) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) unknown.push_back(name);
  }
  if (unknown.empty()) return ok_status();
  if (allowed.empty()) return bad_parameters(fmt::format("{} takes no parameters", route), unknown);
  return bad_parameters(fmt::format("unknown parameter{} {}", unknown.size() == 1 ? "" : "s",
                                    fmt::join(unknown, ", ")),
                        unknown);
}

Result<std::size_t> parse_count(const std::string& name, const std::string& text, std::size_t max) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value > max) {
    return bad_parameters(fmt::format("{} must be a whole number from 0 to {}, not {}", name, max,
                                      quote_for_message(text)),
                          {name});
  }
  return value;
}

Result<ModelId> model_id_after(std::string_view path, std::string_view prefix) {
  const std::string_view text = path.substr(std::min(prefix.size(), path.size()));
  auto id = ModelId::parse(text);
  if (!id.ok()) {
    return bad_parameters(
        fmt::format("model id {}: {}", quote_for_message(text), id.error().message()), {"model"});
  }
  return std::move(*id);
}

}  // namespace canrun::serve
