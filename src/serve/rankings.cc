#include "serve/rankings.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/model_id.h"
#include "core/text.h"

namespace canrun::serve {
namespace fs = std::filesystem;

Result<RankingSnapshot> parse_ranking_snapshot(std::string_view json_text,
                                               std::string_view source) {
  const auto json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return corrupt(fmt::format("{}: not a JSON object", source));
  }
  RankingSnapshot snapshot;
  for (const char* key : {"task", "sort", "fetched_at"}) {
    if (!json.contains(key) || !json[key].is_string()) {
      return corrupt(fmt::format("{}: \"{}\" is missing or not a string", source, key));
    }
  }
  snapshot.task = json["task"].get<std::string>();
  snapshot.sort = json["sort"].get<std::string>();
  snapshot.fetched_at = json["fetched_at"].get<std::string>();
  if (snapshot.sort != "downloads" && snapshot.sort != "trending") {
    return corrupt(fmt::format("{}: sort {} is neither \"downloads\" nor \"trending\"", source,
                               quote_for_message(snapshot.sort)));
  }
  if (!json.contains("models") || !json["models"].is_array()) {
    return corrupt(fmt::format("{}: \"models\" is missing or not an array", source));
  }
  for (const auto& entry : json["models"]) {
    if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string()) continue;
    auto id = ModelId::parse(entry["id"].get<std::string>());
    if (!id.ok()) continue;
    RankedModel model;
    model.id = id->str();
    auto number = [&](const char* key) -> double {
      const auto found = entry.find(key);
      return found != entry.end() && found->is_number() ? found->get<double>() : 0.0;
    };
    model.downloads = static_cast<std::int64_t>(number("downloads"));
    model.likes = static_cast<std::int64_t>(number("likes"));
    model.trending_score = number("trendingScore");
    snapshot.models.push_back(std::move(model));
  }
  return snapshot;
}

RankingsLoad load_rankings_dir(const fs::path& dir) {
  RankingsLoad out;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.') || !name.ends_with(".json")) continue;
    const std::string stem = name.substr(0, name.size() - 5);
    const std::size_t split = stem.rfind("__");
    if (split == std::string::npos) {
      out.problems.push_back(fmt::format("{}: name is not <task>__<sort>.json", name));
      continue;
    }
    auto text = read_file(it->path());
    if (!text.ok()) {
      out.problems.push_back(text.error().message());
      continue;
    }
    auto snapshot = parse_ranking_snapshot(*text, name);
    if (!snapshot.ok()) {
      out.problems.push_back(snapshot.error().message());
      continue;
    }
    if (snapshot->task != stem.substr(0, split) || snapshot->sort != stem.substr(split + 2)) {
      out.problems.push_back(fmt::format("{}: holds task {} sorted by {}, not what its name says",
                                         name, quote_for_message(snapshot->task),
                                         quote_for_message(snapshot->sort)));
      continue;
    }
    out.snapshots.push_back(std::move(*snapshot));
  }
  if (error) out.problems.push_back(fmt::format("{}: {}", dir.string(), error.message()));
  std::sort(out.snapshots.begin(), out.snapshots.end(), [](const auto& a, const auto& b) {
    return std::tie(a.task, a.sort) < std::tie(b.task, b.sort);
  });
  return out;
}

}  // namespace canrun::serve
