#include "serve/stack_verdicts.h"

namespace canrun::serve {
namespace {

std::string lookup_key(std::string_view model_id, std::string_view task) {
  std::string key;
  key.reserve(model_id.size() + task.size() + 1);
  key.append(model_id).push_back('\n');
  key.append(task);
  return key;
}

}  // namespace

StackVerdicts::StackVerdicts(dataset::StackKey key, std::vector<dataset::VerdictRow> rows,
                             KeptFiles kept)
    : key_(std::move(key)), rows_(std::move(rows)), kept_(std::move(kept)) {
  by_model_task_.reserve(rows_.size());
  for (std::size_t idx = 0; idx < rows_.size(); ++idx) {
    by_model_task_.emplace(lookup_key(rows_[idx].model_id, rows_[idx].task), idx);
  }
}

const dataset::VerdictRow* StackVerdicts::find(std::string_view model_id,
                                               std::string_view task) const {
  const auto found = by_model_task_.find(lookup_key(model_id, task));
  return found == by_model_task_.end() ? nullptr : &rows_[found->second];
}

}  // namespace canrun::serve
