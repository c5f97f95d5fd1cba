#include "run/model_source.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/atomic_file.h"
#include "core/model_id.h"
#include "core/text.h"

namespace canrun::run {
namespace {

namespace fs = std::filesystem;

std::string local_id(const fs::path& folder) {
  std::string name;
  for (char c : fs::absolute(folder).lexically_normal().filename().string()) {
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '-';
  }
  while (name.find("--") != std::string::npos) name.replace(name.find("--"), 2, "-");
  while (!name.empty() && (name.front() == '-' || name.front() == '.')) name.erase(0, 1);
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  return "local/" + (name.empty() ? std::string("model") : name.substr(0, 96));
}

}  // namespace

fs::path hf_hub_cache() {
  if (const char* env = std::getenv("HF_HUB_CACHE"); env != nullptr && *env != '\0') return env;
  if (const char* env = std::getenv("HF_HOME"); env != nullptr && *env != '\0')
    return fs::path(env) / "hub";
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : "/") / ".cache" / "huggingface" / "hub";
}

Result<ModelSource> resolve_model(std::string_view model, std::string_view revision) {
  CANRUN_ASSIGN_OR_RETURN(Revision parsed_revision, Revision::parse(revision));
  const fs::path as_folder(model);
  if (model.find('/') != std::string_view::npos && fs::is_directory(as_folder)) {
    if (!fs::is_regular_file(as_folder / "config.json")) {
      return not_found(fmt::format("folder {} has no config.json", quote_for_message(model)));
    }
    ModelSource source;
    source.model_id = local_id(as_folder);
    source.load_from = fs::absolute(as_folder).lexically_normal().string();
    source.revision = parsed_revision.str();
    source.folder = source.load_from;
    return source;
  }
  CANRUN_ASSIGN_OR_RETURN(ModelId id, ModelId::parse(model));
  const fs::path repo = hf_hub_cache() / id.cache_folder_name();
  std::string commit = parsed_revision.str();
  if (!parsed_revision.is_commit()) {
    auto ref = read_file(repo / "refs" / parsed_revision.str());
    if (!ref.ok()) {
      return not_found(fmt::format(
          "{} at {} is not in the Hugging Face cache ({} has no refs/{}); download it first, e.g. "
          "`hf download {}`",
          id.str(), parsed_revision.str(), repo.string(), parsed_revision.str(), id.str()));
    }
    commit = std::string(*ref);
    while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back())))
      commit.pop_back();
    auto as_revision = Revision::parse(commit);
    if (!as_revision.ok() || !as_revision->is_commit()) {
      return corrupt(
          fmt::format("{}: refs/{} does not hold a commit", repo.string(), parsed_revision.str()));
    }
  }
  const fs::path snapshot = repo / "snapshots" / commit;
  if (!fs::is_regular_file(snapshot / "config.json")) {
    return not_found(fmt::format("{} commit {} has no config.json in the Hugging Face cache ({})",
                                 id.str(), commit, snapshot.string()));
  }
  ModelSource source;
  source.model_id = id.str();
  source.load_from = id.str();
  source.revision = commit;
  source.commit = commit;
  source.folder = snapshot;
  source.from_hf_cache = true;
  return source;
}

}  // namespace canrun::run
