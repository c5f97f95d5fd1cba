// Test tool: a campaign's fetch loop over real Hub HTTP (HF_ENDPOINT, HF_TOKEN) into the HF
// cache (HF_HUB_CACHE / HF_HOME): the checkpoints named are enqueued on a CheckpointPrefetcher
// within a DiskBudget, then, in order, each is waited for, "tested" (held --hold-ms), and
// done. Prints one JSON line per event on stdout — ready, error, released, and a summary with
// the budget's peak — for tests/campaign/test_fetch.py. Exit 0 when every checkpoint was
// fetched, 1 when one failed, 2 on bad usage.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "campaign/disk_budget.h"
#include "campaign/fetch.h"
#include "hub/hub_client.h"

namespace {

using nlohmann::json;
using namespace canrun;

void emit(const json& event) { std::cout << event.dump() << std::endl; }

int usage(const std::string& why) {
  std::cerr << why
            << "\nusage: campaign_fetch_checkpoints --budget-bytes N [--ledger FILE] "
               "[--hold-ms MS] [--evict-at-end] MODEL[@REVISION]...\n";
  return 2;
}

json error_json(const ModelId& model, const Error& error) {
  return {{"event", "error"},
          {"model", model.str()},
          {"code", std::string(error_code_name(error.code()))},
          {"reason", error.reason()},
          {"message", error.message()}};
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t budget_bytes = 0;
  std::optional<std::filesystem::path> ledger;
  int hold_ms = 0;
  bool evict_at_end = false;
  std::vector<std::pair<ModelId, Revision>> models;
  for (int idx = 1; idx < argc; ++idx) {
    const std::string arg = argv[idx];
    const bool has_value = idx + 1 < argc;
    if (arg == "--budget-bytes" && has_value) {
      budget_bytes = std::strtoull(argv[++idx], nullptr, 10);
    } else if (arg == "--ledger" && has_value) {
      ledger = argv[++idx];
    } else if (arg == "--hold-ms" && has_value) {
      hold_ms = std::atoi(argv[++idx]);
    } else if (arg == "--evict-at-end") {
      evict_at_end = true;
    } else if (!arg.starts_with("--")) {
      const auto at = arg.find('@');
      auto id = ModelId::parse(arg.substr(0, at));
      auto revision = at == std::string::npos ? Result<Revision>(Revision::main_branch())
                                              : Revision::parse(arg.substr(at + 1));
      if (!id.ok()) return usage(id.error().message());
      if (!revision.ok()) return usage(revision.error().message());
      models.emplace_back(*id, *revision);
    } else {
      return usage("unknown option " + arg);
    }
  }
  if (models.empty()) return usage("no model named");
  auto config = hub::HubConfig::from_environment();
  if (!config.ok()) return usage(config.error().message());
  const hub::HfCache cache = hub::HfCache::from_environment();
  auto budget = campaign::DiskBudget::open(cache, {budget_bytes, ledger});
  if (!budget.ok()) return usage(budget.error().message());

  auto client = std::make_unique<hub::HubClient>(
      *config, hub::make_curl_transport(hub::default_transport_options()));
  int failures = 0;
  {
    campaign::CheckpointPrefetcher prefetcher(std::move(client), cache, **budget);
    std::vector<campaign::FetchHandle> handles;
    for (const auto& [id, revision] : models) handles.push_back(prefetcher.enqueue(id, revision));
    for (std::size_t idx = 0; idx < models.size(); ++idx) {
      const ModelId& id = models[idx].first;
      auto ready = prefetcher.wait(handles[idx]);
      if (!ready.ok()) {
        ++failures;
        emit(error_json(id, ready.error()));
      } else {
        emit({{"event", "ready"},
              {"model", id.str()},
              {"commit", ready->commit},
              {"snapshot", ready->snapshot.string()},
              {"bytes", ready->bytes},
              {"bytes_fetched", ready->download.bytes_fetched},
              {"bytes_reused", ready->download.bytes_reused},
              {"resumed_transfers", ready->download.resumed_transfers},
              {"bytes_held", (*budget)->bytes_held()}});
        std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));  // the "test"
      }
      prefetcher.done(handles[idx]);
      emit({{"event", "released"}, {"model", id.str()}, {"bytes_held", (*budget)->bytes_held()}});
    }
  }
  if (evict_at_end) {
    auto evicted = (*budget)->evict_released();
    if (!evicted.ok()) {
      std::cerr << evicted.error().message() << '\n';
      ++failures;
    }
  }
  emit({{"event", "summary"},
        {"budget_bytes", (*budget)->budget_bytes()},
        {"peak_bytes_held", (*budget)->peak_bytes_held()},
        {"bytes_held", (*budget)->bytes_held()}});
  return failures == 0 ? 0 : 1;
}
