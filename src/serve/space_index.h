// SpaceIndex: everything the Space answers from, in memory — every stack's verdicts, the
// architecture census served beside them (census/census.h: a verdict per model type), the Hub
// rankings, the curated list and exclusions, the cache prefetch command of each backend, and
// which logs and images the dataset keeps beside the rows (stack_verdicts.h). Built once from
// its inputs and never changed; a reload builds a new one and swaps it in (SpaceService), so no
// query ever sees half an update.
//
// Queries never look at the disk to decide their answer: what exists was found when the inputs
// were read. The one exception is the bytes of a kept log or image, too big to hold in memory:
// log_text() and image_bytes() read the file the index knows, at its known path, when asked
// (and, only when that read fails, look whether the file was removed since).
//
// Its methods are defined in files of one job each: space_index_build.cc (build),
// space_index_lookup.cc (the stack, row and view entry a query names, exclusions, prefetch),
// space_index_lists.cc (versions, models, causes, compare), space_index_model.cc (one
// model's page, its log and images) and space_index_census.cc (the Architectures view and the
// census line of an untested model).
//
// The census's rows are never a model's verdict: they answer /api/architectures, the census
// line of a model without a row on the stack (its type's verdict on the same stack), and the
// pages of the census's own ids (canrun-census/<type>, canrun-census-sharded/<type>).
//
// Thread safety: immutable after build(); const methods may be called from many threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/profile.h"
#include "core/model_id.h"
#include "core/result.h"
#include "dataset/stack_key.h"
#include "dataset/verdict_row.h"
#include "serve/query_params.h"
#include "serve/rankings.h"
#include "serve/stack_verdicts.h"
#include "stack/parallel_support.h"

namespace canrun::serve {

//! A curator's entry of the Selected view.
struct CuratedModel {
  std::string id;
  std::string note;
};

//! Why a model is not tested, from the catalog's exclusions.
struct CatalogExclusion {
  std::string reason;
  std::string why;
};

//! The catalog as the index needs it (filled from src/catalog/ by the loader).
struct CatalogFacts {
  std::map<std::string, std::vector<CuratedModel>> selected;  //!< task → curated order
  //! The exclusion matching a model, if any; empty function when there is no exclusions file.
  std::function<std::optional<CatalogExclusion>(const ModelId&)> exclusion;
};

struct IndexInputs {
  std::vector<std::shared_ptr<const StackVerdicts>> stacks;
  //! The census dataset's stacks, if one is served.
  std::vector<std::shared_ptr<const StackVerdicts>> census;
  std::vector<RankingSnapshot> rankings;
  CatalogFacts catalog;
  //! backend → prefetch command template with {compiler_version} (its profile's
  //! prefetch_template: the cache folder filled in); absent: no public cache.
  std::map<std::string, std::string> prefetch_templates;
  //! backend → its profile's topology, for the predicted plans of untested models.
  std::map<std::string, backend::Topology> topologies;
  //! What each transformers version is known to offer per model type (the probe cache).
  stack::ParallelSupportTable parallel_support;
};

//! Selected, Trending, Downloads: curated or ranked lists joined with verdicts. Tested: every
//! model with a row for the stack and task, so whatever was tested is findable.
enum class View { kSelected, kTrending, kDownloads, kTested };

//! The Architectures view's order: model type (A→Z), verdict on one core, verdict sharded (PASS
//! first, then by failure kind, then not run), models of the type in the rankings (most first).
enum class ArchitectureSort { kType, kOneCore, kSharded, kRanked };

//! The Tested view's order: name (A→Z), verdict (PASS first, then by failure kind), cores,
//! run time, peak memory (ascending), decode tokens/s, speedup over eager (largest first);
//! unknown values last.
enum class TestedSort { kName, kVerdict, kCores, kRuntime, kMemory, kDecode, kSpeedup };

//! A parsed /api/models query; strings empty when not given.
struct ModelsQuery {
  View view = View::kSelected;
  std::string task;
  std::string search;
  std::string backend;
  std::string compiler_version;
  std::string library_version;
  std::size_t offset = 0;
  std::size_t limit = 50;
  TestedSort sort = TestedSort::kName;  //!< the Tested view only
};

//! Queries fail with the core Error: kInvalidArgument with reason::kBadParameter and the
//! parameters at fault as its subjects (an HTTP 400), or kNotFound with reason::kNotFound (404).
class SpaceIndex {
 public:
  //! The stacks of the dataset, or of the census.
  struct StackSet {
    std::string_view what;  //!< "dataset" or "census", for messages
    //! Newest first within a backend; backends by name.
    std::vector<const StackVerdicts*> stacks;
    std::vector<std::string> backends;  //!< the one with the most rows first
  };

  static std::shared_ptr<const SpaceIndex> build(IndexInputs inputs);

  //! /api/versions: backends, their stacks newest first, the tasks, the defaults, and what the
  //! page needs to know of each registered task (task_details, in the registry's order).
  nlohmann::json versions_json() const;
  //! /api/models: the view's entries, and the `summary` of the stack's rows of the task (the
  //! rows its verdicts come from; dataset/perf_summary.h).
  Result<nlohmann::json> models_json(const ModelsQuery& query) const;
  //! /api/causes: the chosen stack's failures grouped by error_signature (dataset/causes.h).
  //! `params` may hold backend / compiler_version / library_version.
  Result<nlohmann::json> causes_json(const QueryParams& params) const;
  //! /api/compare: stack `a` against stack `b` (stems), optionally one task: the lists of
  //! dataset::diff_json (the one regression rule), with both stacks described.
  Result<nlohmann::json> compare_json(const QueryParams& params) const;
  //! /api/model/<id>; `params` may hold backend / compiler_version / library_version / task.
  //! A census id (canrun-census/..., canrun-census-sharded/...) is looked up in the census.
  Result<nlohmann::json> model_json(const ModelId& id, const QueryParams& params) const;
  //! /api/architectures: the census of one stack (`stack`: its stem; default: the census stack
  //! of the default stack, else the newest) and task (`task`; default: its first), one entry
  //! per model type, searched by type (`q`) and sorted (`sort`: type, one_core, sharded,
  //! ranked). Without a census: no stack and no entries.
  Result<nlohmann::json> architectures_json(const QueryParams& params) const;

  //! /api/log/<id>: the kept log of the model's failure on the stack (params as model_json,
  //! `task` required). kNotFound when the row is not a failure or no log was kept (or it was
  //! removed since). Reads the log's bytes from the file the index knows (see the top of this
  //! file).
  Result<std::string> log_text(const ModelId& id, const QueryParams& params) const;
  //! /api/image/<id>: the bytes of an output image of the model's row on the stack the params
  //! select (task, backend, versions), `role` "image" or "reference_image" (dataset/dataset.h):
  //! a PNG. kNotFound when none is kept. Reads the file the index knows.
  Result<std::string> image_bytes(const ModelId& id, const QueryParams& params) const;

  std::size_t stack_count() const { return results_.stacks.size(); }
  std::size_t census_stack_count() const { return census_.stacks.size(); }
  std::size_t row_count() const { return row_count_; }
  std::size_t ranked_model_count() const { return ranked_count_; }

  //! The cache prefetch command of `backend` for `compiler_version`, if the backend has one.
  std::optional<std::string> prefetch_command(const std::string& backend,
                                              const std::string& compiler_version) const;

 private:
  struct ViewEntry {
    std::string id;
    std::string id_lower;
    int rank = 0;
    const RankedModel* downloads = nullptr;  //!< from the downloads snapshot, if listed there
    const RankedModel* trending = nullptr;   //!< from the trending snapshot, if listed there
    std::string note;
  };
  //! A model type's census rows for one task on one census stack.
  struct CensusType {
    const dataset::VerdictRow* one_core = nullptr;
    const dataset::VerdictRow* sharded = nullptr;  //!< none for a type never sharded
  };
  //! A model's row on the stack a query names; `row` null when the stack has none.
  struct StackRow {
    const StackVerdicts* stack = nullptr;  //!< null when the dataset has no stacks
    const dataset::VerdictRow* row = nullptr;
  };

  // space_index_lookup.cc
  //! The stack named by a request's backend / compiler_version / library_version, among the
  //! dataset's stacks or `set`.
  Result<const StackVerdicts*> resolve_stack(const QueryParams& params) const;
  static Result<const StackVerdicts*> resolve_stack(const StackSet& set, const std::string& backend,
                                                    const std::string& compiler_version,
                                                    const std::string& library_version);
  //! The census's stacks for a census id, else the dataset's.
  const StackSet& stacks_of(const ModelId& id) const;
  //! The model's row of the params' task on the stack they name.
  Result<StackRow> resolve_row(const ModelId& id, const QueryParams& params) const;
  std::optional<CatalogExclusion> exclusion_of(std::string_view model_id) const;
  //! The entry of `id` in the view of `task`, or nullptr.
  const ViewEntry* view_entry(const std::string& task, View view, std::string_view id) const;

  // space_index_lists.cc
  nlohmann::json entry_json(const ViewEntry& entry, const std::string& task,
                            const StackVerdicts& stack) const;
  //! The plan the planner would choose for an untested ranked model on `stack`, from what the
  //! Hub lists (plan/predict.h); null when the listing lacks its weights or the backend's
  //! profile is not loaded.
  nlohmann::json predicted_plan_json(const RankedModel* listed,
                                     const dataset::StackKey& stack) const;
  //! The perf summary of the stack's rows of `task` (perf_summaries_); that of no rows when
  //! the stack has none of the task or there is no stack.
  const nlohmann::json& perf_summary_of(const StackVerdicts* stack, const std::string& task) const;
  //! The Tested view's entries for the stack and task, searched and sorted.
  std::vector<ViewEntry> tested_entries(const ModelsQuery& query, const std::string& task,
                                        const StackVerdicts* stack) const;

  // space_index_model.cc
  //! Every task the model appears in (a row on any stack of `set`, a ranking or the curated
  //! list), in the index's order of tasks.
  std::vector<std::string> tasks_of(const ModelId& id, const StackSet& set) const;
  //! The model's history on the backend of `stack`, newest first, each row compared with the
  //! nearest older one by the one regression rule.
  nlohmann::json history_json(const ModelId& id, const std::string& task,
                              const StackVerdicts& stack, const StackSet& set) const;
  //! The model's latest verdict on every backend: its newest stack with a row.
  nlohmann::json latest_per_backend_json(const ModelId& id, const std::string& task,
                                         const StackSet& set) const;

  // space_index_census.cc
  //! The census rows of `model_type` for `task` on the census stack of `stack`, or nullptr.
  const CensusType* census_type(const dataset::StackKey& stack, const std::string& task,
                                const std::string& model_type) const;
  //! The census line of an untested model whose listing names `model_type`: its type's census
  //! verdicts on the stack (census_entry_json with "text"), or null when the census has none.
  nlohmann::json census_line_json(const std::optional<std::string>& model_type,
                                  const std::string& task, const StackVerdicts* stack) const;
  nlohmann::json census_entry_json(const std::string& model_type, const CensusType& rows,
                                   const std::string& task) const;
  //! Indexes the census rows (census_types_) and the types of the ranked models.
  void build_census();
  //! The tasks the census stack `stem` covers, in the registry's order.
  std::vector<std::string> census_tasks(const std::string& stem) const;

  IndexInputs inputs_;
  StackSet results_{"dataset", {}, {}};
  StackSet census_{"census", {}, {}};
  std::vector<std::string> tasks_;
  //! (census stack's stem, task) → model type → its rows.
  std::map<std::pair<std::string, std::string>, std::map<std::string, CensusType>> census_types_;
  //! (task, model type) → how many ranked models of the task (either sort) name the type.
  std::map<std::pair<std::string, std::string>, std::size_t> ranked_types_;
  std::map<std::pair<std::string, View>, std::vector<ViewEntry>> views_;
  std::map<std::string, std::string, std::less<>> notes_;  //!< model → curator's note
  //! (dataset stack's stem, task) → dataset::perf_summary_json of its rows, made once by build().
  std::map<std::pair<std::string, std::string>, nlohmann::json> perf_summaries_;
  std::size_t row_count_ = 0;
  std::size_t ranked_count_ = 0;
};

//! "selected" / "trending" / "downloads"
std::string_view view_name(View view);
std::optional<View> parse_view(std::string_view text);
//! "name" / "verdict" / "cores" / "runtime" / "memory" / "decode" / "speedup"
std::string_view sort_name(TestedSort sort);
std::optional<TestedSort> parse_sort(std::string_view text);
//! "type" / "one_core" / "sharded" / "ranked"
std::string_view architecture_sort_name(ArchitectureSort sort);
std::optional<ArchitectureSort> parse_architecture_sort(std::string_view text);

}  // namespace canrun::serve
