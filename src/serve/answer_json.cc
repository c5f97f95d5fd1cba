#include "serve/answer_json.h"

namespace canrun::serve {

nlohmann::json stack_json(const dataset::StackKey& key) {
  return {{"backend", key.backend},
          {"compiler", key.compiler},
          {"compiler_version", key.compiler_version},
          {"library", key.library},
          {"library_version", key.library_version},
          {"display", key.display()},
          {"stem", key.stem()}};
}

void put_status(nlohmann::json& out, const dataset::VerdictRow* row, bool catalog_excludes) {
  if (row) {
    out["status"] = to_string(row->result);
    out["status_class"] = display_class(row->result);
  } else if (catalog_excludes) {
    out["status"] = to_string(VerdictResult::kExcluded);
    out["status_class"] = display_class(VerdictResult::kExcluded);
  } else {
    out["status"] = "not tested";
    out["status_class"] = kUntestedClass;
  }
}

}  // namespace canrun::serve
