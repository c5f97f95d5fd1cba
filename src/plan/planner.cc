#include "plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace canrun::plan {
namespace {

using backend::kBytesPerGiB;

bool divides(std::optional<std::int64_t> count, int degree) {
  return count && *count > 0 && *count % degree == 0;
}

//! What both planners weigh: the per-core budget, the weights and their routed experts' share
//! (bytes), whether the model is a mixture of experts, its KV heads (the attention heads when
//! not given).
struct Sizes {
  double budget;
  double weights;
  double experts;
  bool moe;
  std::optional<std::int64_t> kv_heads;
};

Sizes sizes_of(const PlanFacts& facts, const backend::Topology& topology) {
  return {topology.core_budget_bytes(), static_cast<double>(facts.weights_bytes),
          static_cast<double>(std::min(facts.expert_weights_bytes, facts.weights_bytes)),
          facts.num_experts.value_or(0) > 0,
          facts.num_key_value_heads ? facts.num_key_value_heads : facts.num_attention_heads};
}

//! A plan not placed yet, with the weights and the budget it is weighed against.
PlannedShards unplaced(const PlanFacts& facts, const backend::Topology& topology) {
  PlannedShards plan;
  plan.weights_bytes = facts.weights_bytes;
  plan.budget_bytes = static_cast<std::uint64_t>(std::max(0.0, topology.core_budget_bytes()));
  return plan;
}

}  // namespace

std::string gib(double bytes) {
  if (bytes >= kBytesPerGiB / 4) return fmt::format("{:.2f} GiB", bytes / kBytesPerGiB);
  if (bytes >= 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024 * 1024));
  return fmt::format("{:.1f} KiB", bytes / 1024);
}

PlannedShards plan_model(const PlanFacts& facts, const ParallelSupport& support,
                         const backend::Topology& topology) {
  PlannedShards plan = unplaced(facts, topology);
  const auto [budget, weights, experts, moe, kv_heads] = sizes_of(facts, topology);
  const std::string budget_text =
      fmt::format("{} per core ({:g} GiB less the {:g} GiB reserve)", gib(budget),
                  topology.memory_per_core_gib, topology.reserve_gib);
  plan.per_core_bytes = facts.weights_bytes;

  if (weights <= budget) {
    plan.placed = true;
    plan.cores = 1;
    plan.why = fmt::format("{} of weights fit one core: {}.", gib(weights), budget_text);
    return plan;
  }
  std::vector<std::string> skipped;  // degrees that would fit but cannot shard this model
  bool any_fit = false;
  // The plan at `degree`, its explanation ending with the degrees passed over.
  const auto place = [&](int degree, Parallelism parallelism, double share, std::string why) {
    plan.placed = true;
    plan.cores = degree;
    plan.parallelism = parallelism;
    plan.per_core_bytes = static_cast<std::uint64_t>(share);
    plan.why =
        fmt::format("{} of weights need more than one core ({}); {}{}.", gib(weights), budget_text,
                    why, skipped.empty() ? "" : fmt::format("; {}", fmt::join(skipped, "; ")));
    return plan;
  };
  for (const int degree : topology.degrees) {
    if (degree <= 1 || degree > topology.max_cores) continue;
    const double tp_share = weights / degree;
    const double ep_share = (weights - experts) + experts / degree;
    if (support.tp_plan) {
      if (tp_share > budget) continue;
      any_fit = true;
      if (divides(facts.num_attention_heads, degree) && divides(kv_heads, degree)) {
        return place(degree, Parallelism::kTensor, tp_share,
                     fmt::format("tensor parallel over {} cores puts {} on each ({} attention and "
                                 "{} KV heads divide by {})",
                                 degree, gib(tp_share), facts.num_attention_heads.value_or(0),
                                 kv_heads.value_or(0), degree));
      }
      skipped.push_back(
          fmt::format("{} cores would hold it but {} attention / {} KV heads do not divide by {}",
                      degree, facts.num_attention_heads.value_or(0), kv_heads.value_or(0), degree));
    } else if (moe && support.ep_plan) {
      if (ep_share > budget) continue;
      any_fit = true;
      if (divides(facts.num_experts, degree)) {
        return place(
            degree, Parallelism::kExpert, ep_share,
            fmt::format("with no tensor-parallel plan, expert parallel over {} cores "
                        "puts {} on each: {} shared plus {} of the {} experts ({} divide "
                        "by {})",
                        degree, gib(ep_share), gib(weights - experts), gib(experts / degree),
                        *facts.num_experts, *facts.num_experts, degree));
      }
      skipped.push_back(fmt::format("{} cores would hold it but {} experts do not divide by {}",
                                    degree, *facts.num_experts, degree));
    } else if (tp_share <= budget) {
      any_fit = true;
    }
  }
  const int most = topology.max_cores;
  const double best_share = (support.tp_plan || !moe || !support.ep_plan)
                                ? weights / most
                                : (weights - experts) + experts / most;
  if (!any_fit) {
    plan.exclusion = "too_large";
    plan.why = fmt::format("{} of weights do not fit even {} cores: {} each, above {}.",
                           gib(weights), most, gib(best_share), budget_text);
    return plan;
  }
  plan.exclusion = "no_parallel_plan";
  if (!skipped.empty()) {
    plan.why = fmt::format(
        "{} of weights need more than one core ({}), and no allowed degree can shard it: {}.",
        gib(weights), budget_text, fmt::join(skipped, "; "));
  } else {
    plan.why = fmt::format(
        "{} of weights need more than one core ({}), but transformers {} has no tensor-parallel "
        "plan for {}{}.",
        gib(weights), budget_text,
        support.library_version.empty() ? "here" : support.library_version,
        facts.model_type.empty() ? "this architecture" : facts.model_type,
        moe ? " and no expert-parallel plan" : " and it is not a mixture of experts");
  }
  return plan;
}

PlannedShards plan_at_degree(const PlanFacts& facts, const ParallelSupport& support,
                             const backend::Topology& topology, int degree) {
  PlannedShards plan = unplaced(facts, topology);
  const auto [budget, weights, experts, moe, kv_heads] = sizes_of(facts, topology);
  const std::string version = support.library_version.empty() ? "here" : support.library_version;
  const std::string type = facts.model_type.empty() ? "this architecture" : facts.model_type;
  const auto place = [&](Parallelism parallelism, double share, std::string why) {
    if (share > budget) {
      plan.exclusion = "too_large";
      plan.why = fmt::format("{} cores asked for: {} of weights put {} on each, above {} per core.",
                             degree, gib(weights), gib(share), gib(budget));
      return plan;
    }
    plan.placed = true;
    plan.cores = degree;
    plan.parallelism = parallelism;
    plan.per_core_bytes = static_cast<std::uint64_t>(share);
    plan.why = std::move(why);
    return plan;
  };
  if (degree <= 1) {
    return place(Parallelism::kNone, weights,
                 fmt::format("one core asked for: {} of weights on it.", gib(weights)));
  }
  plan.exclusion = "no_parallel_plan";
  if (degree > topology.max_cores || std::find(topology.degrees.begin(), topology.degrees.end(),
                                               degree) == topology.degrees.end()) {
    plan.why = fmt::format(
        "{} cores asked for, which the backend does not allow (degrees {}, at "
        "most {} cores).",
        degree, fmt::join(topology.degrees, ", "), topology.max_cores);
    return plan;
  }
  if (support.tp_plan) {
    if (divides(facts.num_attention_heads, degree) && divides(kv_heads, degree)) {
      return place(
          Parallelism::kTensor, weights / degree,
          fmt::format("{} cores asked for: tensor parallel ({} attention and {} KV heads "
                      "divide by {}).",
                      degree, facts.num_attention_heads.value_or(0), kv_heads.value_or(0), degree));
    }
    plan.why = fmt::format(
        "{} cores asked for, but {} attention / {} KV heads do not divide by {} for its "
        "tensor-parallel plan.",
        degree, facts.num_attention_heads.value_or(0), kv_heads.value_or(0), degree);
    return plan;
  }
  if (moe && support.ep_plan) {
    if (divides(facts.num_experts, degree)) {
      return place(Parallelism::kExpert, (weights - experts) + experts / degree,
                   fmt::format("{} cores asked for: with no tensor-parallel plan, expert "
                               "parallel ({} experts divide by {}).",
                               degree, *facts.num_experts, degree));
    }
    plan.why = fmt::format("{} cores asked for, but its {} experts do not divide by {}.", degree,
                           *facts.num_experts, degree);
    return plan;
  }
  plan.why = fmt::format(
      "{} cores asked for, but transformers {} has no tensor-parallel plan for "
      "{}{}.",
      degree, version, type,
      moe ? " and no expert-parallel plan" : " and it is not a mixture of experts");
  return plan;
}

}  // namespace canrun::plan
