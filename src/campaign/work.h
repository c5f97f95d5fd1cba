// The planned work of a campaign: one item per (task, model), each either excluded with its
// reason or placed on a number of cores, in the order the schedule considers them. A campaign
// folder keeps the list (campaign_dir.h), so a resumed or distributed campaign runs what was
// planned, not a new selection: an item to run keeps the checkpoint planning resolved and the
// plan the planner made, so its runs resolve nothing again, on this machine or a fleet node.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/model_id.h"
#include "core/parallelism.h"
#include "core/result.h"
#include "plan/stack_plan.h"
#include "trial/checkpoint.h"

namespace canrun::campaign {

struct WorkItem {
  WorkItem(ModelId model_id, std::string task)
      : model_id(std::move(model_id)), task(std::move(task)) {}

  ModelId model_id;
  std::string task;
  std::string revision;  //!< the commit planned (empty when not resolved: an excluded item)
  std::string source;    //!< why it is in the campaign: "selected", "ranked #3", "listed"
  std::optional<std::string> exclusion_reason;  //!< set: not run, recorded as EXCLUDED
  std::string why;                              //!< of the exclusion
  int cores = 1;
  Parallelism parallelism = Parallelism::kNone;
  std::uint64_t weights_bytes = 0;
  double expected_s = 0;  //!< the schedule's estimate
  //! Set for an item to run: the checkpoint as planning resolved it and the planner's plan.
  //! Unset in work lists written before canrun kept them: its runs resolve the checkpoint
  //! again, as those versions did.
  std::optional<trial::KeptCheckpoint> checkpoint;
  std::optional<plan::StackPlan> stack_plan;

  //! "<task>/<model id>": unique in a campaign.
  std::string key() const { return task + "/" + model_id.str(); }
  bool excluded() const { return exclusion_reason.has_value(); }

  friend bool operator==(const WorkItem&, const WorkItem&) = default;
};

nlohmann::json work_item_to_json(const WorkItem& item);
//! kCorrupt naming the field for anything that is not what work_item_to_json writes.
Result<WorkItem> work_item_from_json(const nlohmann::json& json);

}  // namespace canrun::campaign
