// SpaceIndex: everything the Space answers from, in memory — every stack's verdicts, the Hub
// rankings, the curated list and exclusions, the cache prefetch command of each backend.
// Built once from its inputs and never changed; a reload builds a new one and swaps it in
// (SpaceService), so queries never touch the disk and never see half an update.
//
// Thread safety: immutable after build(); const methods may be called from many threads.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/profile.h"
#include "core/model_id.h"
#include "core/result.h"
#include "dataset/stack_key.h"
#include "dataset/verdict_row.h"
#include "serve/rankings.h"
#include "stack/parallel_support.h"

namespace canrun::serve {

//! One stack file's rows with a lookup by (model id, task). Shared between successive indexes
//! while its file is unchanged.
class StackVerdicts {
 public:
  StackVerdicts(dataset::StackKey key, std::vector<dataset::VerdictRow> rows);

  const dataset::StackKey& key() const { return key_; }
  const std::vector<dataset::VerdictRow>& rows() const { return rows_; }
  //! The row of (model, task), or nullptr.
  const dataset::VerdictRow* find(std::string_view model_id, std::string_view task) const;

 private:
  dataset::StackKey key_;
  std::vector<dataset::VerdictRow> rows_;
  std::unordered_map<std::string, std::size_t> by_model_task_;  //!< "model\ntask" → row
};

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
  std::vector<RankingSnapshot> rankings;
  CatalogFacts catalog;
  //! backend → prefetch command template with {compiler_version}; absent: no public cache.
  std::map<std::string, std::string> prefetch_templates;
  //! backend → its profile's topology, for the predicted plans of untested models.
  std::map<std::string, backend::Topology> topologies;
  //! What each transformers version is known to offer per model type (the probe cache).
  stack::ParallelSupportTable parallel_support;
  //! The dataset folder, whose logs/ holds failures' logs (dataset::DatasetDir::record_log);
  //! empty: no logs.
  std::filesystem::path dataset_root;
};

//! Selected, Trending, Downloads: curated or ranked lists joined with verdicts. Tested: every
//! model with a row for the stack and task, so whatever was tested is findable.
enum class View { kSelected, kTrending, kDownloads, kTested };

//! The Tested view's order: name (A→Z), verdict (PASS first, then by failure kind), cores,
//! run time, peak memory (ascending), decode tokens/s (fastest first); unknown values last.
enum class TestedSort { kName, kVerdict, kCores, kRuntime, kMemory, kDecode };

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
  static std::shared_ptr<const SpaceIndex> build(IndexInputs inputs);

  //! /api/versions: backends, their stacks newest first, the tasks, the defaults.
  nlohmann::json versions_json() const;
  //! /api/models
  Result<nlohmann::json> models_json(const ModelsQuery& query) const;
  //! /api/causes: the chosen stack's failures grouped by error_signature (dataset/causes.h).
  //! `params` may hold backend / compiler_version / library_version.
  Result<nlohmann::json> causes_json(const std::map<std::string, std::string>& params) const;
  //! /api/compare: stack `a` against stack `b` (stems), optionally one task: the lists of
  //! dataset::diff_json (the one regression rule), with both stacks described.
  Result<nlohmann::json> compare_json(const std::map<std::string, std::string>& params) const;
  //! /api/model/<id>; `params` may hold backend / compiler_version / library_version / task.
  Result<nlohmann::json> model_json(const ModelId& id,
                                    const std::map<std::string, std::string>& params) const;

  //! /api/log/<id>: the kept log of the model's failure on the stack (params as model_json,
  //! `task` required), read from the dataset folder: the one answer read from disk, since
  //! logs are too big to hold in memory. kNotFound when the row is not a failure or no log
  //! was kept.
  Result<std::string> log_text(const ModelId& id,
                               const std::map<std::string, std::string>& params) const;
  //! The bytes of an output image of the model's row on the stack the params select (task,
  //! backend, versions), `role` "image" or "reference_image" (dataset/dataset.h): a PNG.
  Result<std::string> image_bytes(const ModelId& id,
                                  const std::map<std::string, std::string>& params) const;

  std::size_t stack_count() const { return stacks_.size(); }
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
  //! The stack named by a request's backend / compiler_version / library_version.
  Result<const StackVerdicts*> resolve_stack(
      const std::map<std::string, std::string>& params) const;
  Result<const StackVerdicts*> resolve_stack(const std::string& backend,
                                             const std::string& compiler_version,
                                             const std::string& library_version) const;
  nlohmann::json entry_json(const ViewEntry& entry, const std::string& task,
                            const StackVerdicts& stack) const;
  //! The plan the planner would choose for an untested ranked model on `stack`, from what the
  //! Hub lists (plan/predict.h); null when the listing lacks its weights or the backend's
  //! profile is not loaded.
  nlohmann::json predicted_plan_json(const RankedModel* listed,
                                     const dataset::StackKey& stack) const;
  //! The Tested view's entries for the stack and task, searched and sorted.
  std::vector<ViewEntry> tested_entries(const ModelsQuery& query, const std::string& task,
                                        const StackVerdicts* stack) const;
  std::optional<CatalogExclusion> exclusion_of(std::string_view model_id) const;

  IndexInputs inputs_;
  //! Newest first within a backend; backends by name.
  std::vector<const StackVerdicts*> stacks_;
  std::vector<std::string> backends_;  //!< the default one first
  std::vector<std::string> tasks_;
  std::map<std::pair<std::string, View>, std::vector<ViewEntry>> views_;
  std::map<std::string, std::string, std::less<>> notes_;  //!< model → curator's note
  std::size_t row_count_ = 0;
  std::size_t ranked_count_ = 0;
};

//! "selected" / "trending" / "downloads"
std::string_view view_name(View view);
std::optional<View> parse_view(std::string_view text);
//! "name" / "verdict" / "cores" / "runtime" / "memory" / "decode"
std::string_view sort_name(TestedSort sort);
std::optional<TestedSort> parse_sort(std::string_view text);

}  // namespace canrun::serve
