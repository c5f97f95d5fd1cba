#include "hub/local_model.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/atomic_file.h"
#include "core/model_id.h"
#include "core/text.h"
#include "hub/hf_cache.h"

namespace canrun::hub {

namespace fs = std::filesystem;

fs::path normal_folder(const fs::path& folder) {
  fs::path normal = fs::absolute(folder).lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();  // "a/b/" names b
}

std::string local_model_id(const fs::path& folder) {
  std::string name;
  for (char c : normal_folder(folder).filename().string()) {
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '-';
  }
  while (name.find("--") != std::string::npos) name.replace(name.find("--"), 2, "-");
  while (!name.empty() && (name.front() == '-' || name.front() == '.')) name.erase(0, 1);
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  return "local/" + (name.empty() ? std::string("model") : name.substr(0, 96));
}

bool names_folder(std::string_view model) {
  if (model == "." || model == "..") return true;
  for (std::string_view start : {"./", "../", "/", "~"}) {
    if (model.starts_with(start)) return true;
  }
  std::error_code error;
  return !model.empty() && fs::is_directory(fs::path(model), error);
}

Result<fs::path> model_folder(std::string_view model) {
  fs::path folder(model);
  if (model == "~" || model.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    if (home != nullptr && *home != '\0') {
      folder = fs::path(home) / std::string(model.substr(std::min<std::size_t>(2, model.size())));
    }
  }
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    return not_found(fmt::format("no such folder: {}", quote_whole(model)));
  }
  return folder;
}

Result<LocalModel> find_local_model(std::string_view model, std::string_view revision) {
  CANRUN_ASSIGN_OR_RETURN(Revision parsed_revision, Revision::parse(revision));
  if (names_folder(model)) {
    CANRUN_ASSIGN_OR_RETURN(const fs::path as_folder, model_folder(model));
    if (!fs::is_regular_file(as_folder / "config.json")) {
      return not_found(fmt::format("folder {} has no config.json", quote_for_message(model)));
    }
    LocalModel source;
    source.model_id = local_model_id(as_folder);
    source.load_from = normal_folder(as_folder).string();
    source.revision = parsed_revision.str();
    source.folder = source.load_from;
    return source;
  }
  CANRUN_ASSIGN_OR_RETURN(ModelId id, ModelId::parse(model));
  const HfCache cache = HfCache::from_environment();
  const auto commit = cache.commit_of(id, parsed_revision);
  if (!commit) {
    return not_found(
        fmt::format("{} at {} is not in the Hugging Face cache ({} has no refs/{}); download it "
                    "first, e.g. `hf download {}`",
                    id.str(), parsed_revision.str(), cache.repo_dir(id).string(),
                    parsed_revision.str(), id.str()));
  }
  const auto snapshot = cache.snapshot_dir(id, parsed_revision);
  if (!snapshot || !fs::is_regular_file(*snapshot / "config.json")) {
    return not_found(fmt::format("{} commit {} has no config.json in the Hugging Face cache ({})",
                                 id.str(), *commit, cache.repo_dir(id).string()));
  }
  LocalModel source;
  source.model_id = id.str();
  source.load_from = id.str();
  source.revision = *commit;
  source.commit = *commit;
  source.folder = *snapshot;
  source.from_hf_cache = true;
  return source;
}

}  // namespace canrun::hub
