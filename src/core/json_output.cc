#include "core/json_output.h"

namespace canrun {

std::string to_json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(std::ostream& out, const nlohmann::json& value) {
  out << to_json_text(value) << '\n';
}

}  // namespace canrun
