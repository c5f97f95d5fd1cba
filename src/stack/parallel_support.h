// The parallel probe: asks the stack's own transformers whether a model type's config class
// defines a tensor-parallel plan (base_model_tp_plan) and an expert-parallel plan
// (base_model_ep_plan, usable only where DistributedConfig has enable_expert_parallel), and
// whether its model classes claim to compile as one graph (_can_compile_fullgraph). The
// answer depends on the transformers version, so it is cached per (transformers version, model
// type) in StackPython's cache: transformers-<version>/parallel/<model_type>.json.
//
// Thread safety: as StackPython (concurrent probes of one key both write the same file).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "stack/python.h"

namespace canrun::stack {

//! What the stack's transformers offers for a model type.
struct ParallelSupport {
  bool known_model_type = true;
  bool tp_plan = false;
  bool ep_plan = false;
  std::string library_version;  //!< for the explanation, e.g. "5.18.0"
  //! The type's model classes declare _can_compile_fullgraph; none when no class of it imports.
  std::optional<bool> fullgraph;

  friend bool operator==(const ParallelSupport&, const ParallelSupport&) = default;
};

//! `library_version` is the stack's transformers version (from the stack probe), used as the
//! cache key without importing anything; a miss runs the stack's Python once (a few seconds).
//! kInvalidArgument for a model type or version that is not a plain name.
Result<ParallelSupport> probe_parallel_support(const StackPython& python,
                                               const std::string& library_version,
                                               const std::string& model_type);

//! Asks about every model type of `model_types` not yet cached in one run of the stack's Python
//! and caches the answers (a campaign plans many models: one process instead of one per model
//! type). Failures are left to probe_parallel_support, which asks a type alone and reports.
void warm_parallel_support(const StackPython& python, const std::string& library_version,
                           const std::vector<std::string>& model_types);

//! (transformers version, model type) → the cached answer.
using ParallelSupportTable = std::map<std::pair<std::string, std::string>, ParallelSupport>;

//! Every answer cached under `cache_root` (StackPython's cache folder), read without starting
//! any Python: for the Space's predicted plans. Unreadable files are skipped; a missing folder
//! is an empty table.
ParallelSupportTable read_cached_parallel_support(const std::filesystem::path& cache_root);

}  // namespace canrun::stack
