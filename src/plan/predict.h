// A predicted plan for a model nobody has tested on a stack yet, from what the Hub lists about
// it (parameter counts by dtype, the config's model_type) and what the stack's transformers is
// known to offer for that model type (the parallel probe's cached answers). The Space shows it
// in Trending and Downloads, marked "predicted": never a verdict.
//
// The rule is the planner's (planner.h), with what the listing lacks said plainly:
//   - the fewest allowed cores whose share of the weights fits (weights / d + reserve <= memory
//     per core); none: `too_large`;
//   - one core needs no plan; more need the stack's tensor-parallel plan for the model type
//     (head counts are not listed, so their divisibility is not checked) — `no_parallel_plan`
//     when the stack is known to have neither a TP nor an EP plan for it;
//   - an expert-parallel-only model type, or one the stack was never asked about, gets the
//     cores by memory with the parallelism left open (the expert share is not listed).
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backend/profile.h"
#include "core/parallelism.h"
#include "stack/parallel_support.h"

namespace canrun::plan {

struct PredictedPlan {
  bool placed = false;
  int cores = 0;                           //!< 0 when not placed
  std::optional<Parallelism> parallelism;  //!< nullopt: open
  std::string exclusion;                   //!< "too_large" or "no_parallel_plan"
  std::string why;                         //!< one sentence for people
};

//! `support`: the stack's answer for the model type, nullopt when it was never probed.
PredictedPlan predict_plan(std::uint64_t weights_bytes, const std::string& model_type,
                           const std::optional<stack::ParallelSupport>& support,
                           const backend::Topology& topology);

}  // namespace canrun::plan
