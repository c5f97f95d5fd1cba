// What a query of the SpaceIndex names, looked up in what build() made: the stack (from
// backend and versions, the newest by default), the model's row on it, the catalog's exclusion
// of a model, a view's entry, a backend's prefetch command.
#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "serve/space_index.h"

namespace canrun::serve {

Result<const StackVerdicts*> SpaceIndex::resolve_stack(const QueryParams& params) const {
  return resolve_stack(param_of(params, "backend"), param_of(params, "compiler_version"),
                       param_of(params, "library_version"));
}

Result<const StackVerdicts*> SpaceIndex::resolve_stack(const std::string& backend,
                                                       const std::string& compiler_version,
                                                       const std::string& library_version) const {
  if (stacks_.empty()) {
    if (!backend.empty() || !compiler_version.empty() || !library_version.empty()) {
      return bad_parameters("the dataset has no results yet, so no stack can be chosen",
                            {"backend", "compiler_version", "library_version"});
    }
    return static_cast<const StackVerdicts*>(nullptr);
  }
  const std::string chosen_backend = backend.empty() ? backends_.front() : backend;
  if (std::find(backends_.begin(), backends_.end(), chosen_backend) == backends_.end()) {
    return bad_parameters(fmt::format("backend {} has no results; known: {}",
                                      quote_for_message(chosen_backend), known_list(backends_)),
                          {"backend"});
  }
  std::vector<std::string> compiler_versions;
  std::vector<std::string> library_versions;
  const StackVerdicts* chosen = nullptr;
  for (const StackVerdicts* stack : stacks_) {  // newest first
    const auto& key = stack->key();
    if (key.backend != chosen_backend) continue;
    if (std::find(compiler_versions.begin(), compiler_versions.end(), key.compiler_version) ==
        compiler_versions.end()) {
      compiler_versions.push_back(key.compiler_version);
    }
    if (!compiler_version.empty() && key.compiler_version != compiler_version) continue;
    if (compiler_version.empty() && key.compiler_version != compiler_versions.front()) continue;
    library_versions.push_back(key.library_version);
    if (!library_version.empty() && key.library_version != library_version) continue;
    if (!chosen) chosen = stack;
  }
  if (!compiler_version.empty() && std::find(compiler_versions.begin(), compiler_versions.end(),
                                             compiler_version) == compiler_versions.end()) {
    return bad_parameters(fmt::format("compiler_version {} has no results on backend {}; known: {}",
                                      quote_for_message(compiler_version), chosen_backend,
                                      known_list(compiler_versions)),
                          {"compiler_version"});
  }
  if (!chosen) {
    return bad_parameters(fmt::format("library_version {} has no results with that compiler "
                                      "version on backend {}; known: {}",
                                      quote_for_message(library_version), chosen_backend,
                                      known_list(library_versions)),
                          {"library_version"});
  }
  return chosen;
}

Result<SpaceIndex::StackRow> SpaceIndex::resolve_row(const ModelId& id,
                                                     const QueryParams& params) const {
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* stack, resolve_stack(params));
  return StackRow{stack, stack ? stack->find(id.str(), param_of(params, "task")) : nullptr};
}

std::optional<CatalogExclusion> SpaceIndex::exclusion_of(std::string_view model_id) const {
  if (!inputs_.catalog.exclusion) return std::nullopt;
  auto id = ModelId::parse(model_id);
  if (!id.ok()) return std::nullopt;
  return inputs_.catalog.exclusion(*id);
}

const SpaceIndex::ViewEntry* SpaceIndex::view_entry(const std::string& task, View view,
                                                    std::string_view id) const {
  const auto found = views_.find({task, view});
  if (found == views_.end()) return nullptr;
  for (const ViewEntry& entry : found->second) {
    if (entry.id == id) return &entry;
  }
  return nullptr;
}

std::optional<std::string> SpaceIndex::prefetch_command(const std::string& backend,
                                                        const std::string& compiler_version) const {
  const auto found = inputs_.prefetch_templates.find(backend);
  if (found == inputs_.prefetch_templates.end()) return std::nullopt;
  backend::BackendProfile profile;
  profile.cache_prefetch = found->second;
  return profile.prefetch_command(compiler_version);
}

}  // namespace canrun::serve
