#include "campaign/expected_time.h"

#include <algorithm>
#include <cmath>

namespace canrun::campaign {

TimeModel time_model_for(std::string_view backend) {
  if (backend == "cuda") return {60, 10, 15};
  if (backend == "cpu") return {30, 90, 10};
  return {300, 120, 30};  // neuron, and any backend we know nothing of
}

void RuntimeHistory::record(std::string_view model_id, std::string_view backend, UtcTime started_at,
                            double runtime_s, bool how_well) {
  if (!std::isfinite(runtime_s) || runtime_s <= 0) return;
  const auto key = std::pair<std::string, std::string>(model_id, backend);
  const auto found = latest_.find(key);
  if (found == latest_.end()) {
    latest_.emplace(key, Latest{started_at, runtime_s, how_well});
    return;
  }
  Latest& latest = found->second;
  if (started_at > latest.started_at ||
      (started_at == latest.started_at && runtime_s > latest.runtime_s)) {
    latest = Latest{started_at, runtime_s, how_well};
  }
}

void RuntimeHistory::record_row(const dataset::VerdictRow& row) {
  if (!row.runtime_s) return;
  record(row.model_id, row.backend, row.started_at, *row.runtime_s,
         row.eager_throughput || row.eager_note || row.long_tokens);
}

void RuntimeHistory::record_rows(const std::vector<dataset::VerdictRow>& rows) {
  for (const auto& row : rows) record_row(row);
}

std::optional<double> RuntimeHistory::runtime_s(std::string_view model_id,
                                                std::string_view backend) const {
  const auto found = latest_.find(std::pair<std::string, std::string>(model_id, backend));
  if (found == latest_.end()) return std::nullopt;
  const Latest& latest = found->second;
  return latest.runtime_s * (how_well_ && !latest.how_well ? 1 + kHowWellShare : 1);
}

double expected_seconds(const TestSize& test, const TimeModel& model,
                        const RuntimeHistory* history) {
  if (history != nullptr) {
    if (const auto seen = history->runtime_s(test.model_id, test.backend)) return *seen;
  }
  const double gib = static_cast<double>(test.weights_bytes) / (1024.0 * 1024.0 * 1024.0);
  const double line = model.fixed_s + model.per_weights_gib_s * gib +
                      model.per_extra_core_s * std::max(0, test.cores - 1);
  return history != nullptr && history->how_well() ? line * (1 + kHowWellShare) : line;
}

double expected_seconds(const TestSize& test, const RuntimeHistory* history) {
  return expected_seconds(test, time_model_for(test.backend), history);
}

}  // namespace canrun::campaign
