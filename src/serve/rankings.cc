#include "serve/rankings.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/text.h"

namespace canrun::serve {
namespace fs = std::filesystem;

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
    auto snapshot = hub::snapshot_from_json_text(*text, name);
    if (!snapshot.ok()) {
      out.problems.push_back(snapshot.error().message());
      continue;
    }
    const std::string_view sort = hub::ranking_sort_name(snapshot->sort);
    if (snapshot->task != stem.substr(0, split) || sort != stem.substr(split + 2)) {
      out.problems.push_back(fmt::format("{}: holds task {} sorted by {}, not what its name says",
                                         name, quote_for_message(snapshot->task), sort));
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
