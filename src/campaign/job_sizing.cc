#include "campaign/job_sizing.h"

#include <algorithm>
#include <string>

#include "core/log.h"

namespace canrun::campaign {
namespace {

constexpr std::string_view kReference = "reference:";
constexpr std::string_view kVerify = "verify:";

}  // namespace

Job job_of(std::size_t index, const WorkItem& item, const backend::BackendProfile& profile,
           const RuntimeHistory& history) {
  Job job;
  job.id = std::to_string(index);
  job.cores = item.cores;
  job.host_cpus = profile.pinning_syntax == "count" ? 0 : 2;
  job.host_memory_gib = 1.0 + 2.0 * static_cast<double>(item.weights_bytes) / (1ull << 30);
  job.expected_s = expected_seconds(
      TestSize{item.model_id.str(), profile.name, item.weights_bytes, item.cores}, &history);
  return job;
}

Job reference_job_of(std::size_t index, const WorkItem& item, const Job& device_job) {
  Job job;
  job.id = std::string(kReference) + std::to_string(index);
  job.cores = 0;
  job.host_cpus = 1;
  job.host_memory_gib = 1.0 + 3.0 * static_cast<double>(item.weights_bytes) / (1ull << 30);
  job.expected_s = device_job.expected_s / 2;
  return job;
}

Job verify_job_of(std::size_t index, const Job& device_job) {
  Job job;
  job.id = std::string(kVerify) + std::to_string(index);
  job.cores = 0;
  job.host_cpus = 1;
  job.host_memory_gib = 2.0;
  job.expected_s = device_job.expected_s / 10;
  job.finishing = true;
  return job;
}

StageJob stage_of(std::string_view job_id) {
  StageJob job;
  if (job_id.starts_with(kReference)) {
    job.stage = TrialStage::kReference;
    job_id.remove_prefix(kReference.size());
  } else if (job_id.starts_with(kVerify)) {
    job.stage = TrialStage::kVerify;
    job_id.remove_prefix(kVerify.size());
  }
  job.index = std::stoul(std::string(job_id));
  return job;
}

Result<CoreAllocator> machine_cores(const backend::BackendProfile& profile, int max_cores,
                                    const HostResources& host) {
  backend::BackendProfile limited = profile;
  int host_cpus = static_cast<int>(host.cpus);
  if (max_cores > 0) {
    if (profile.pinning_syntax == "count") {
      if (max_cores > host_cpus) {
        log::info("{} worker processes share the host's {} CPUs (--cores {})", max_cores, host_cpus,
                  max_cores);
      }
      host_cpus = max_cores;
    } else {
      host_cpus = std::min(host_cpus, max_cores);
      const int per_device = std::max(1, limited.topology.cores_per_device);
      limited.topology.devices = std::min(limited.topology.devices,
                                          std::max(1, (max_cores + per_device - 1) / per_device));
    }
  }
  return CoreAllocator::for_profile(limited, host_cpus);
}

}  // namespace canrun::campaign
