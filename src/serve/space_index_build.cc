// SpaceIndex::build: the stacks in order (newest first within a backend), the backends (the
// one with the most rows first), the tasks (the registry's order), each stack's perf summary per
// task, and the Selected, Trending and Downloads views joined with the rankings' numbers and the
// curators' notes.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "core/text.h"
#include "dataset/perf_summary.h"
#include "serve/space_index.h"
#include "serve/version_order.h"
#include "task/task.h"

namespace canrun::serve {
namespace {

using dataset::VerdictRow;

//! `stacks` newest first within a backend, the backends by name, the one with the most rows
//! first (the default).
SpaceIndex::StackSet stack_set(std::string_view what,
                               const std::vector<std::shared_ptr<const StackVerdicts>>& stacks) {
  SpaceIndex::StackSet set{what, {}, {}};
  std::map<std::string, std::size_t> rows_per_backend;
  for (const auto& stack : stacks) {
    set.stacks.push_back(stack.get());
    rows_per_backend[stack->key().backend] += stack->rows().size();
  }
  std::sort(set.stacks.begin(), set.stacks.end(),
            [](const StackVerdicts* a, const StackVerdicts* b) {
              const auto& ka = a->key();
              const auto& kb = b->key();
              if (ka.backend != kb.backend) return ka.backend < kb.backend;
              if (int order = compare_versions(ka.compiler_version, kb.compiler_version)) {
                return order > 0;
              }
              if (ka.library != kb.library) return ka.library > kb.library;
              return compare_versions(ka.library_version, kb.library_version) > 0;
            });
  for (const auto& [backend, rows] : rows_per_backend) set.backends.push_back(backend);
  std::stable_sort(set.backends.begin(), set.backends.end(),
                   [&](const std::string& a, const std::string& b) {
                     return rows_per_backend[a] > rows_per_backend[b];
                   });
  return set;
}

}  // namespace

std::shared_ptr<const SpaceIndex> SpaceIndex::build(IndexInputs inputs) {
  auto index = std::shared_ptr<SpaceIndex>(new SpaceIndex());
  index->inputs_ = std::move(inputs);
  const IndexInputs& in = index->inputs_;

  std::set<std::string> tasks;
  for (const auto& stack : in.stacks) {
    index->row_count_ += stack->rows().size();
    for (const VerdictRow& row : stack->rows()) tasks.insert(row.task);
  }
  index->results_ = stack_set("dataset", in.stacks);
  index->census_ = stack_set("census", in.census);
  // The dashboard's figures of each stack and task, made once here rather than per request.
  for (const StackVerdicts* stack : index->results_.stacks) {
    std::map<std::string, dataset::PerfTally> by_task;
    for (const VerdictRow& row : stack->rows()) by_task[row.task].add(row);
    for (const auto& [task, tally] : by_task) {
      index->perf_summaries_[{stack->key().stem(), task}] =
          dataset::perf_summary_json(tally.summary());
    }
  }

  // Rankings: each snapshot is a view; the Selected view borrows their numbers.
  std::map<std::pair<std::string, std::string>, std::unordered_map<std::string, const RankedModel*>>
      ranked_by_id;
  for (const RankingSnapshot& snapshot : in.rankings) {
    tasks.insert(snapshot.task);
    auto& by_id = ranked_by_id[{snapshot.task, std::string(hub::ranking_sort_name(snapshot.sort))}];
    for (const RankedModel& model : snapshot.models) by_id.emplace(model.id, &model);
  }
  auto ranked = [&](const std::string& task, const char* sort,
                    const std::string& id) -> const RankedModel* {
    const auto table = ranked_by_id.find({task, sort});
    if (table == ranked_by_id.end()) return nullptr;
    const auto found = table->second.find(id);
    return found == table->second.end() ? nullptr : found->second;
  };
  for (const auto& [task, models] : in.catalog.selected) {
    tasks.insert(task);
    for (const CuratedModel& model : models) {
      if (!model.note.empty()) index->notes_.emplace(model.id, model.note);
    }
  }
  for (const std::string& task : tasks) {
    auto& selected = index->views_[{task, View::kSelected}];
    if (const auto found = in.catalog.selected.find(task); found != in.catalog.selected.end()) {
      int rank = 0;
      for (const CuratedModel& model : found->second) {
        selected.push_back({model.id, ascii_lower(model.id), ++rank,
                            ranked(task, "downloads", model.id), ranked(task, "trending", model.id),
                            model.note});
      }
    }
    index->views_[{task, View::kTrending}];
    index->views_[{task, View::kDownloads}];
  }
  for (const RankingSnapshot& snapshot : in.rankings) {
    const View view =
        snapshot.sort == hub::RankingSort::kTrending ? View::kTrending : View::kDownloads;
    auto& entries = index->views_[{snapshot.task, view}];
    entries.clear();
    int rank = 0;
    for (const RankedModel& model : snapshot.models) {
      const auto note = index->notes_.find(model.id);
      entries.push_back({model.id, ascii_lower(model.id), ++rank,
                         ranked(snapshot.task, "downloads", model.id),
                         ranked(snapshot.task, "trending", model.id),
                         note == index->notes_.end() ? std::string() : note->second});
    }
    index->ranked_count_ += snapshot.models.size();
  }
  index->tasks_.assign(tasks.begin(), tasks.end());
  // In the task registry's order (text-generation first: the task most people come for), then
  // tasks it does not know, by name.
  const std::vector<std::string> registered = task::task_names();
  const auto place = [&](const std::string& name) {
    return std::find(registered.begin(), registered.end(), name) - registered.begin();
  };
  std::stable_sort(index->tasks_.begin(), index->tasks_.end(),
                   [&](const std::string& a, const std::string& b) { return place(a) < place(b); });
  index->build_census();
  return index;
}

}  // namespace canrun::serve
