// The recipe templates (recipes/<task>.py), embedded at build time by
// src/recipe/embed_templates.cmake so the binary is self-contained.
#pragma once

#include <map>
#include <string_view>

namespace canrun::recipe {

//! task → template text
const std::map<std::string_view, std::string_view>& recipe_templates();

}  // namespace canrun::recipe
