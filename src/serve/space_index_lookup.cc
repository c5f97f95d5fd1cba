// What a query of the SpaceIndex names, looked up in what build() made: the stack (from
// backend and versions, the newest by default), the model's row on it, the catalog's exclusion
// of a model, a view's entry, a backend's prefetch command.
#include <fmt/format.h>

#include <algorithm>

#include "census/census_ids.h"
#include "core/text.h"
#include "serve/space_index.h"

namespace canrun::serve {

Result<const StackVerdicts*> SpaceIndex::resolve_stack(const QueryParams& params) const {
  return resolve_stack(results_, param_of(params, "backend"), param_of(params, "compiler_version"),
                       param_of(params, "library_version"));
}

const SpaceIndex::StackSet& SpaceIndex::stacks_of(const ModelId& id) const {
  return census::is_census_owner(id.owner()) ? census_ : results_;
}

Result<const StackVerdicts*> SpaceIndex::resolve_stack(const StackSet& set,
                                                       const std::string& backend,
                                                       const std::string& compiler_version,
                                                       const std::string& library_version) {
  if (set.stacks.empty()) {
    if (!backend.empty() || !compiler_version.empty() || !library_version.empty()) {
      return bad_parameters(
          fmt::format("the {} has no results yet, so no stack can be chosen", set.what),
          {"backend", "compiler_version", "library_version"});
    }
    return static_cast<const StackVerdicts*>(nullptr);
  }
  const std::string chosen_backend = backend.empty() ? set.backends.front() : backend;
  if (std::find(set.backends.begin(), set.backends.end(), chosen_backend) == set.backends.end()) {
    return bad_parameters(
        fmt::format("backend {} has no results in the {}; known: {}",
                    quote_for_message(chosen_backend), set.what, known_list(set.backends)),
        {"backend"});
  }
  std::vector<std::string> compiler_versions;
  std::vector<std::string> library_versions;
  const StackVerdicts* chosen = nullptr;
  for (const StackVerdicts* stack : set.stacks) {  // newest first
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
  CANRUN_ASSIGN_OR_RETURN(
      const StackVerdicts* stack,
      resolve_stack(stacks_of(id), param_of(params, "backend"),
                    param_of(params, "compiler_version"), param_of(params, "library_version")));
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
