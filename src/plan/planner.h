// The planner (SPEC.md §5): the fewest cores that hold a model's weights.
//
// Rule, for the allowed degrees d of the backend in increasing order, up to its most cores:
//   budget     = memory_per_core - reserve              (what one core offers the weights)
//   per core   = weights / d                            (TP, or d = 1)
//              = non-expert weights + expert weights / d  (EP: experts split, the rest replicated)
//   d fits     when per core <= budget, i.e. weights / d + reserve <= memory_per_core
//   d = 1      needs no plan;
//   d > 1, TP  when the architecture has a tensor-parallel plan in the stack's transformers,
//              and num_attention_heads and num_key_value_heads divide by d;
//   d > 1, EP  only for a mixture of experts without a TP plan whose transformers has an
//              expert-parallel plan, when the expert count divides by d.
// The smallest d that fits and meets its constraints wins. None: `too_large` when even the
// largest allowed degree would not hold the weights; `no_parallel_plan` when the model needs
// more than one core and no allowed degree can shard it (no plan, or heads/experts that no
// fitting degree divides).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backend/profile.h"
#include "core/parallelism.h"
#include "stack/parallel_support.h"

namespace canrun::plan {

//! What the planner needs to know of a model (from its safetensors headers and config).
struct PlanFacts {
  std::uint64_t weights_bytes = 0;
  std::uint64_t expert_weights_bytes = 0;  //!< routed experts' share of weights_bytes
  std::optional<std::int64_t> num_attention_heads;
  std::optional<std::int64_t> num_key_value_heads;  //!< absent: equal to the attention heads
  std::optional<std::int64_t> num_experts;          //!< absent or 0: dense
  std::string model_type;

  friend bool operator==(const PlanFacts&, const PlanFacts&) = default;
};

using stack::ParallelSupport;

using canrun::Parallelism;

//! Bytes as the plans' explanations write them: GiB for model-sized numbers, MiB or KiB for
//! small fixtures.
std::string gib(double bytes);

struct PlannedShards {
  bool placed = false;
  int cores = 0;  //!< the degree; 0 when not placed
  Parallelism parallelism = Parallelism::kNone;
  std::string exclusion;  //!< "too_large" or "no_parallel_plan" when not placed
  std::uint64_t weights_bytes = 0;
  std::uint64_t per_core_bytes = 0;  //!< weights each core holds under the plan (or at d = 1)
  std::uint64_t budget_bytes = 0;    //!< memory per core minus the reserve
  std::string why;                   //!< one sentence for people

  friend bool operator==(const PlannedShards&, const PlannedShards&) = default;
};

PlannedShards plan_model(const PlanFacts& facts, const ParallelSupport& support,
                         const backend::Topology& topology);

//! The plan over exactly `degree` cores, as a campaign's listed "MODEL TASK CORES" asks for (the
//! census's sharded runs): degree 1 is one core; a larger one is tensor parallel where the
//! architecture has a TP plan and its heads divide by it, else expert parallel for a mixture of
//! experts with an EP plan whose experts divide by it, else no_parallel_plan — whether or not
//! fewer cores would hold the weights. A degree the backend does not allow is no_parallel_plan;
//! shards above the per-core budget are too_large.
PlannedShards plan_at_degree(const PlanFacts& facts, const ParallelSupport& support,
                             const backend::Topology& topology, int degree);

}  // namespace canrun::plan
