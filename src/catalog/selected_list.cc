#include "catalog/selected_list.h"

#include <set>

#include "core/atomic_file.h"
#include "core/text.h"
#include "core/toml_file.h"

namespace canrun::catalog {

Result<SelectedList> SelectedList::load(const std::filesystem::path& path) {
  CANRUN_ASSIGN_OR_RETURN(std::string text, read_file(path));
  return parse(text, path.string());
}

Result<SelectedList> SelectedList::parse(std::string_view toml_text, std::string_view source_name) {
  CANRUN_ASSIGN_OR_RETURN(toml::table root, parse_toml(toml_text, source_name));
  SelectedList list;
  for (const auto& [task_key, task_node] : root) {
    const std::string task(task_key.str());
    const toml::table* task_table = task_node.as_table();
    if (task_table == nullptr) {
      return invalid_argument(fmt::format("{}: [{}] must be a table with a models list",
                                          where(source_name, task_node), task));
    }
    for (const auto& [key, value] : *task_table) {
      if (key.str() != "models") {
        return invalid_argument(fmt::format("{}: [{}] has unknown key {}; only models is allowed",
                                            where(source_name, value), task, key.str()));
      }
    }
    const toml::array* models = (*task_table)["models"].as_array();
    if (models == nullptr) {
      return invalid_argument(fmt::format("{}: [{}] needs models = [ {{ id = \"...\" }}, ... ]",
                                          where(source_name, task_node), task));
    }
    std::set<std::string> seen;
    auto& entries = list.by_task_[task];
    for (const toml::node& entry_node : *models) {
      const toml::table* entry = entry_node.as_table();
      if (entry == nullptr) {
        return invalid_argument(fmt::format("{}: each entry of [{}] models is {{ id = \"...\" }}",
                                            where(source_name, entry_node), task));
      }
      for (const auto& [key, value] : *entry) {
        if (key.str() != "id" && key.str() != "note") {
          return invalid_argument(fmt::format("{}: unknown key {}; an entry has id and note",
                                              where(source_name, value), key.str()));
        }
      }
      const auto id_text = (*entry)["id"].value<std::string>();
      if (!id_text) {
        return invalid_argument(fmt::format("{}: an entry of [{}] has no id string",
                                            where(source_name, entry_node), task));
      }
      auto id = ModelId::parse(*id_text);
      if (!id.ok()) return id.error().with_context(where(source_name, entry_node));
      if (!seen.insert(id->str()).second) {
        return invalid_argument(fmt::format("{}: {} is listed twice in [{}]",
                                            where(source_name, entry_node), id->str(), task));
      }
      if ((*entry)["note"] && !(*entry)["note"].is_string()) {
        return invalid_argument(
            fmt::format("{}: note must be a string", where(source_name, entry_node)));
      }
      entries.push_back({std::move(*id), (*entry)["note"].value_or(std::string())});
    }
  }
  return list;
}

const std::vector<SelectedModel>& SelectedList::for_task(std::string_view task) const {
  static const std::vector<SelectedModel> kNone;
  const auto found = by_task_.find(task);
  return found == by_task_.end() ? kNone : found->second;
}

std::vector<std::string> SelectedList::tasks() const {
  std::vector<std::string> out;
  for (const auto& [task, models] : by_task_) out.push_back(task);
  return out;
}

}  // namespace canrun::catalog
