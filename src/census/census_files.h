// The census's files (census/build_checkpoints.py, census/overrides.json), embedded at build time
// by src/recipe/embed_templates.cmake so the binary is self-contained.
#pragma once

#include <map>
#include <string_view>

namespace canrun::census {

//! "build_checkpoints" → census/build_checkpoints.py, "overrides" → census/overrides.json
const std::map<std::string_view, std::string_view>& census_files();

}  // namespace canrun::census
