// The SpaceIndex's answers about one model: its page (/api/model: the verdict on the chosen
// stack, rankings, catalog facts, the predicted plan of an untested model, the links to its kept
// log and images, its history on the backend and its latest verdict on every backend), and the
// bytes of its kept log (/api/log) and images (/api/image).
#include <fmt/format.h>

#include <algorithm>

#include "core/atomic_file.h"
#include "core/json_output.h"
#include "core/text.h"
#include "dataset/row_json.h"
#include "serve/answer_json.h"
#include "serve/space_index.h"
#include "serve/url.h"
#include "task/task.h"

namespace canrun::serve {
namespace {

using dataset::VerdictRow;
using nlohmann::json;

//! The URL of a kept file's answer (`route`: "log" or "image") for the row of (id, task) on
//! the stack `key`.
std::string kept_file_url(std::string_view route, const ModelId& id, const dataset::StackKey& key,
                          const std::string& task) {
  return fmt::format("/api/{}/{}?backend={}&compiler_version={}&library_version={}&task={}", route,
                     id.str(), percent_encode(key.backend), percent_encode(key.compiler_version),
                     percent_encode(key.library_version), percent_encode(task));
}

//! The bytes of a file the index knows is kept. One removed since (a writer replaced its row's
//! verdict) is `gone()`, the answer as if it had never been kept; another failed read keeps
//! its error, marked reason::kNotFound.
template <typename Gone>
Result<std::string> kept_file_bytes(const std::filesystem::path& path, const Gone& gone) {
  auto bytes = read_file(path);
  if (bytes.ok()) return std::move(*bytes);
  std::error_code error;
  if (!std::filesystem::exists(path, error) && !error) return gone();
  return bytes.error().with_reason(reason::kNotFound);
}

std::string task_for_message(const QueryParams& params) {
  const std::string task = param_of(params, "task");
  return task.empty() ? "no task given" : task;
}

}  // namespace

std::vector<std::string> SpaceIndex::tasks_of(const ModelId& id, const StackSet& set) const {
  std::vector<std::string> model_tasks;
  // A census id's tasks are the census's own, which the dataset may not have.
  std::vector<std::string> all_tasks = &set == &census_ ? task::task_names() : tasks_;
  for (const std::string& task : all_tasks) {
    constexpr View kListed[] = {View::kSelected, View::kTrending, View::kDownloads};
    const bool present =
        std::any_of(set.stacks.begin(), set.stacks.end(),
                    [&](const StackVerdicts* stack) { return stack->find(id.str(), task); }) ||
        std::any_of(std::begin(kListed), std::end(kListed),
                    [&](View view) { return view_entry(task, view, id.str()); });
    if (present) model_tasks.push_back(task);
  }
  return model_tasks;
}

json SpaceIndex::history_json(const ModelId& id, const std::string& task,
                              const StackVerdicts& stack, const StackSet& set) const {
  std::vector<const StackVerdicts*> same_backend;
  for (const StackVerdicts* candidate : set.stacks) {
    if (candidate->key().backend == stack.key().backend) same_backend.push_back(candidate);
  }
  json history = json::array();
  for (std::size_t idx = 0; idx < same_backend.size(); ++idx) {
    const StackVerdicts* at = same_backend[idx];
    const VerdictRow* at_row = at->find(id.str(), task);
    const VerdictRow* older_row = nullptr;
    for (std::size_t older = idx + 1; older < same_backend.size() && !older_row; ++older) {
      older_row = same_backend[older]->find(id.str(), task);
    }
    json item = stack_json(at->key());
    item["current"] = at == &stack;
    put_status(item, at_row, false);
    item["cores"] = at_row ? optional_json(at_row->cores) : json(nullptr);
    item["runtime_s"] = at_row ? optional_json(at_row->runtime_s) : json(nullptr);
    item["peak_device_memory_bytes"] =
        at_row ? optional_json(at_row->peak_device_memory_bytes) : json(nullptr);
    item["error_signature"] = at_row ? optional_json(at_row->error_signature) : json(nullptr);
    item["started_at"] =
        at_row ? json(dataset::format_timestamp(at_row->started_at)) : json(nullptr);
    const bool compared = at_row && older_row;
    item["regression"] =
        compared && is_regression(dataset::outcome_of(*older_row), dataset::outcome_of(*at_row));
    item["fixed"] =
        compared && is_fix(dataset::outcome_of(*older_row), dataset::outcome_of(*at_row));
    item["unverified"] =
        compared && is_unverified(dataset::outcome_of(*older_row), dataset::outcome_of(*at_row));
    history.push_back(std::move(item));
  }
  return history;
}

json SpaceIndex::latest_per_backend_json(const ModelId& id, const std::string& task,
                                         const StackSet& set) const {
  json across = json::array();
  for (const std::string& backend : set.backends) {
    for (const StackVerdicts* candidate : set.stacks) {  // newest first within a backend
      if (candidate->key().backend != backend) continue;
      const VerdictRow* found = candidate->find(id.str(), task);
      if (!found) continue;
      json item = stack_json(candidate->key());
      put_status(item, found, false);
      item["cores"] = optional_json(found->cores);
      item["parallelism"] = optional_json(found->parallelism);
      item["runtime_s"] = optional_json(found->runtime_s);
      item["peak_device_memory_bytes"] = optional_json(found->peak_device_memory_bytes);
      item["decode_tokens_per_s"] = optional_json(found->decode_tokens_per_s);
      item["ttft_s"] = optional_json(found->ttft_s);
      across.push_back(std::move(item));
      break;
    }
  }
  return across;
}

Result<json> SpaceIndex::model_json(const ModelId& id, const QueryParams& params) const {
  const StackSet& set = stacks_of(id);
  CANRUN_ASSIGN_OR_RETURN(
      const StackVerdicts* stack,
      resolve_stack(set, param_of(params, "backend"), param_of(params, "compiler_version"),
                    param_of(params, "library_version")));
  const std::vector<std::string> model_tasks = tasks_of(id, set);
  if (model_tasks.empty()) {
    return not_found(fmt::format("model {} is not in the {}", quote_for_message(id.str()),
                                 &set == &census_ ? "census served beside the dataset"
                                                  : "dataset, the rankings or the curated list"))
        .with_reason(reason::kNotFound);
  }
  // The task asked for, else the first with a row on the stack, else the first at all.
  std::string task = param_of(params, "task");
  if (task.empty()) {
    const auto with_row = std::find_if(model_tasks.begin(), model_tasks.end(), [&](const auto& t) {
      return stack && stack->find(id.str(), t);
    });
    task = with_row == model_tasks.end() ? model_tasks.front() : *with_row;
  } else if (std::find(model_tasks.begin(), model_tasks.end(), task) == model_tasks.end()) {
    return bad_parameters(fmt::format("model {} has nothing for task {}; it has: {}", id.str(),
                                      quote_for_message(task), known_list(model_tasks)),
                          {"task"});
  }

  json rankings = json::array();
  for (View view : {View::kSelected, View::kTrending, View::kDownloads}) {
    if (const ViewEntry* entry = view_entry(task, view, id.str())) {
      rankings.push_back({{"view", view_name(view)}, {"rank", entry->rank}});
    }
  }
  // The Hub's numbers, from the downloads ranking when the model is listed there.
  const RankedModel* numbers = nullptr;
  for (View view : {View::kDownloads, View::kTrending}) {
    const ViewEntry* entry = view_entry(task, view, id.str());
    if (!numbers && entry) numbers = entry->downloads ? entry->downloads : entry->trending;
  }
  const auto exclusion = exclusion_of(id.str());
  const auto note = notes_.find(id.str());
  const VerdictRow* row = stack ? stack->find(id.str(), task) : nullptr;

  json out = {{"id", id.str()},
              {"task", task},
              {"tasks", model_tasks},
              {"stack", stack ? stack_json(stack->key()) : json(nullptr)},
              {"note", note == notes_.end() ? json(nullptr) : json(note->second)},
              {"exclusion", exclusion ? json{{"reason", exclusion->reason}, {"why", exclusion->why}}
                                      : json(nullptr)},
              {"rankings", rankings},
              {"downloads", numbers ? json(numbers->downloads) : json(nullptr)},
              {"likes", numbers ? json(numbers->likes) : json(nullptr)},
              {"verdict", row ? dataset::row_to_json(*row) : json(nullptr)},
              {"run_command", "python3 run.py"}};
  std::optional<std::string> prefetch;
  if (stack) {
    prefetch = prefetch_command(stack->key().backend,
                                row ? row->compiler_version : stack->key().compiler_version);
  }
  put_status(out, row, exclusion.has_value());
  out["predicted"] =
      row || exclusion || !stack ? json(nullptr) : predicted_plan_json(numbers, stack->key());
  // An untested model's evidence from its architecture; a census row's page says it is one.
  out["census"] = row || exclusion
                      ? json(nullptr)
                      : census_line_json(numbers ? numbers->model_type : std::nullopt, task, stack);
  out["census_row"] = &set == &census_;
  out["prefetch_command"] = prefetch ? json(*prefetch) : json(nullptr);
  if (!prefetch) out["prefetch_note"] = "no public cache for this backend";
  // The failure's full log and the task's output images (text-to-image: the backend's beside
  // the CPU reference's), when kept beside the dataset.
  out["log_url"] = row && stack->kept_log(*row) ? json(kept_file_url("log", id, stack->key(), task))
                                                : json(nullptr);
  out["images"] = nullptr;
  if (const auto kept = row ? stack->kept_images(*row) : KeptFiles::Images(); !kept.empty()) {
    json images = json::object();
    for (const auto& [role, path] : kept) {
      images[role] = kept_file_url("image", id, stack->key(), task) + "&role=" + role;
    }
    out["images"] = std::move(images);
  }
  out["history"] = stack ? history_json(id, task, *stack, set) : json::array();
  out["backends"] = latest_per_backend_json(id, task, set);
  return out;
}

Result<std::string> SpaceIndex::log_text(const ModelId& id, const QueryParams& params) const {
  CANRUN_ASSIGN_OR_RETURN(const StackRow found, resolve_row(id, params));
  const auto not_kept = [&]() -> Error {
    return not_found(fmt::format("no log kept for {} ({}) on this stack: logs are kept for "
                                 "failures only",
                                 id.str(), task_for_message(params)))
        .with_reason(reason::kNotFound);
  };
  const auto path = found.row ? found.stack->kept_log(*found.row) : std::nullopt;
  if (!path) return not_kept();
  return kept_file_bytes(*path, not_kept);
}

Result<std::string> SpaceIndex::image_bytes(const ModelId& id, const QueryParams& params) const {
  CANRUN_ASSIGN_OR_RETURN(const StackRow found, resolve_row(id, params));
  const std::string role = param_of(params, "role");
  const auto not_kept = [&]() -> Error {
    return not_found(fmt::format("no {} kept for {} ({}) on this stack",
                                 role.empty() ? "image role given" : role, id.str(),
                                 task_for_message(params)))
        .with_reason(reason::kNotFound);
  };
  const KeptFiles::Images images =
      found.row ? found.stack->kept_images(*found.row) : KeptFiles::Images();
  const auto image = images.find(role);
  if (image == images.end()) return not_kept();
  return kept_file_bytes(image->second, not_kept);
}

}  // namespace canrun::serve
