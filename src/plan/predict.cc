#include "plan/predict.h"

#include <fmt/format.h>

namespace canrun::plan {

using backend::kBytesPerGiB;

PredictedPlan predict_plan(std::uint64_t weights_bytes, const std::string& model_type,
                           const std::optional<stack::ParallelSupport>& support,
                           const backend::Topology& topology) {
  PredictedPlan plan;
  const double weights = static_cast<double>(weights_bytes);
  const double budget = topology.core_budget_bytes();
  const std::string size = fmt::format("{:.2f} GiB of weights", weights / kBytesPerGiB);
  const std::string type = model_type.empty() ? "this model type" : model_type;
  if (weights <= budget) {
    plan = {true, 1, Parallelism::kNone, "", fmt::format("{} fit one core.", size)};
    return plan;
  }
  int degree = 0;
  for (const int allowed : topology.degrees) {
    if (allowed > 1 && allowed <= topology.max_cores && weights / allowed <= budget) {
      degree = allowed;
      break;
    }
  }
  if (degree == 0) {
    plan.exclusion = "too_large";
    plan.why = fmt::format("{} do not fit even {} cores.", size, topology.max_cores);
    return plan;
  }
  if (!support) {
    plan = {true, degree, std::nullopt, "",
            fmt::format("{} need {} cores; whether this stack can shard {} was never probed.", size,
                        degree, type)};
  } else if (support->tp_plan) {
    plan = {true, degree, Parallelism::kTensor, "",
            fmt::format("{} need {} cores, tensor parallel (transformers {} has a TP plan for "
                        "{}; head counts not checked).",
                        size, degree, support->library_version, type)};
  } else if (support->ep_plan) {
    plan = {true, degree, std::nullopt, "",
            fmt::format("{} need at least {} cores, expert parallel if its experts divide "
                        "(transformers {} has only an EP plan for {}).",
                        size, degree, support->library_version, type)};
  } else {
    plan.exclusion = "no_parallel_plan";
    plan.why = fmt::format("{} need {} cores, but transformers {} has no TP or EP plan for {}.",
                           size, degree, support->library_version, type);
  }
  return plan;
}

}  // namespace canrun::plan
