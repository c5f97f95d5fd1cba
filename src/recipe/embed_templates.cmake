# Writes OUTPUT, a .cc defining canrun::recipe::recipe_templates() from the files in
# TEMPLATES (recipes/<task>.py). Run at build time: a template edit rebuilds the binary.
string(REPLACE "|" ";" TEMPLATES "${TEMPLATES}")
set(body "")
foreach(template ${TEMPLATES})
  get_filename_component(task "${template}" NAME_WE)
  file(READ "${template}" text)
  string(FIND "${text}" ")canrun_recipe\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${template} contains the raw-string delimiter )canrun_recipe\"")
  endif()
  string(APPEND body "      {\"${task}\", R\"canrun_recipe(${text})canrun_recipe\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from recipes/*.py by src/recipe/embed_templates.cmake. Do not edit.
#include \"recipe/templates.h\"

namespace canrun::recipe {

const std::map<std::string_view, std::string_view>& recipe_templates() {
  static const std::map<std::string_view, std::string_view> kTemplates = {
${body}  };
  return kTemplates;
}

}  // namespace canrun::recipe
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
