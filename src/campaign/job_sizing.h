// How much of the machine each stage of a campaign's trial holds, as the Scheduler's jobs
// (scheduler.h), and the machine's cores a campaign packs them onto.
//
// A trial runs in three stages (trial.h), each a job of its own: its CPU reference as host work
// ("reference:<index>", no cores), then on its cores ("<index>", ready once its reference is
// done or failed: run.py is given the reference's tokens), then, when the run generated, as
// host work again ("verify:<index>") that decides the verdict. The cores are held only for the
// run. The sizes are estimates the scheduler packs by, not limits anything enforces.
//
// Thread safety: free functions over values.
#pragma once

#include <cstddef>
#include <string_view>

#include "backend/profile.h"
#include "campaign/core_allocator.h"
#include "campaign/expected_time.h"
#include "campaign/host_budget.h"
#include "campaign/scheduler.h"
#include "campaign/work.h"
#include "core/result.h"

namespace canrun::campaign {

//! The host share a trial's device stage holds: on a `count` profile its cores are the CPUs
//! (the scheduler counts them), elsewhere the compiler runs on the host beside it; memory for
//! loading the weights and the process. Its expected time from `history`, else the backend's
//! line (expected_time.h).
Job job_of(std::size_t index, const WorkItem& item, const backend::BackendProfile& profile,
           const RuntimeHistory& history);

//! The host work before a trial's device stage: its CPU reference (found in the store, or
//! computed eagerly on one host CPU), memory for the reference's float32 weights; about half
//! the device's time when it is computed.
Job reference_job_of(std::size_t index, const WorkItem& item, const Job& device_job);

//! The host work that decides a verdict after its device stage: the comparison with the
//! reference, or (sharded) the judge model; one host CPU, memory for the judge. It finishes a
//! trial under way (Job::finishing): the scheduler takes it before any run not started yet.
Job verify_job_of(std::size_t index, const Job& device_job);

//! Which stage of a trial a job is.
enum class TrialStage { kReference, kDevice, kVerify };

//! The stage, and the index of the item, of a job that the functions above made.
struct StageJob {
  TrialStage stage = TrialStage::kDevice;
  std::size_t index = 0;
};
StageJob stage_of(std::string_view job_id);

//! The cores of this machine for the profile, within --cores (`max_cores`; 0: all). On `count`
//! (the cpu backend, whose cores are worker processes) they are the host's CPUs, or exactly
//! --cores when given: more workers than CPUs then share them, as `canrun test --cores N` does.
//! Elsewhere --cores caps the host CPUs and the devices (whole devices, rounded up).
Result<CoreAllocator> machine_cores(const backend::BackendProfile& profile, int max_cores,
                                    const HostResources& host);

}  // namespace canrun::campaign
