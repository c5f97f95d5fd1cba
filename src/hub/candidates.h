// The candidate list of one task (SPEC.md §10, "select → exclude"): the curated list
// (catalog/selected.toml) in its order, then the top N of the Hub's ranking not already in it;
// then the exclusions, each with its reason — the curated rules (catalog/exclusions.toml)
// first, then the automatic ones, in this order:
//   gated            the Hub gates the model (a token and a license to accept)
//   remote_code      config.json has auto_map, or names an architecture the stack's
//                    transformers lacks (canrun never sets trust_remote_code)
//   no_safetensors   neither model.safetensors nor model.safetensors.index.json
//   unsupported_task the model's pipeline_tag is not a task canrun tests
// The automatic rules read the model's info from the Hub; when the Hub cannot be reached they
// use what the ranking entry says (gated, pipeline_tag, tags) and say so.
//
// Thread safety: free functions; the lookups are called from the calling thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/exclusions.h"
#include "catalog/selected_list.h"
#include "core/model_id.h"
#include "core/result.h"
#include "hub/model_facts.h"
#include "hub/rankings.h"
#include "stack/architectures.h"

namespace canrun::hub {

//! The tasks canrun has a recipe for.
const std::vector<std::string>& supported_tasks();

struct CandidateExclusion {
  std::string reason;    //!< a category of SPEC.md §7, or "note"
  std::string why;       //!< one sentence
  bool curated = false;  //!< from catalog/exclusions.toml (else automatic)
};

struct Candidate {
  std::string id;                               //!< model id
  bool selected = false;                        //!< in the curated list
  std::string note;                             //!< the curator's note
  std::optional<std::size_t> rank;              //!< 1-based place in the ranking
  std::optional<CandidateExclusion> exclusion;  //!< why it is not tested; none: a candidate
  //! What the automatic rules read: "hub" (model info), "ranking" (the Hub unreachable: the
  //! ranking entry), "none" (unreachable and not ranked: not checked), "" (curated rule).
  std::string facts_from;
  std::string problem;  //!< a lookup error that left the automatic checks undone
};

//! The model's Hub info (gated, config, files, pipeline_tag), for the automatic rules.
using ModelInfoLookup = std::function<Result<ModelFacts>(const ModelId&)>;

struct CandidateInputs {
  std::string task;
  const catalog::SelectedList* selected = nullptr;
  const catalog::Exclusions* exclusions = nullptr;
  std::vector<RankedModel> ranked;  //!< the top N, in rank order
};

//! The candidates without their exclusions: the curated list in its order, then the ranked
//! models not in it (a model ranked twice keeps its first rank).
std::vector<Candidate> list_candidates(const CandidateInputs& inputs);

//! The candidates, curated first, each with its exclusion (if any). Errors only from the
//! architecture probe (the stack's Python could not answer).
Result<std::vector<Candidate>> select_candidates(const CandidateInputs& inputs,
                                                 const ModelInfoLookup& lookup,
                                                 stack::ArchitectureSupport& architectures);

nlohmann::json candidate_to_json(const Candidate& candidate);

}  // namespace canrun::hub
