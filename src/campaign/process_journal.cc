#include "campaign/process_journal.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace canrun::campaign {

namespace fs = std::filesystem;

void mark_campaign_processes(const fs::path& dir) { ::setenv(kCampaignVariable, dir.c_str(), 1); }

int end_leftover_processes(const fs::path& dir, int slice) {
  const std::string mark = std::string(kCampaignVariable) + "=" + fs::absolute(dir).string();
  std::set<int> groups;
  for (const auto& event : CampaignDir(dir).read_journal(slice)) {
    if (event.value("event", "") == "process" && event.value("pgid", 0) > 1)
      groups.insert(event["pgid"].get<int>());
  }
  if (groups.empty()) return 0;
  int killed = 0;
  std::error_code error;
  for (fs::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const int pid = std::stoi(name);
    if (pid == ::getpid() || !groups.contains(::getpgid(pid))) continue;
    std::ifstream environ(it->path() / "environ", std::ios::binary);
    std::string variables((std::istreambuf_iterator<char>(environ)), {});
    if (variables.find(mark + '\0') == std::string::npos && !variables.ends_with(mark)) {
      continue;  // a process that reuses the number, not one of ours
    }
    if (::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

Result<process::ProcessOutcome> TrackingLauncher::run(const process::ProcessSpec& spec) {
  process::ProcessSpec tracked = spec;
  int group = 0;
  tracked.on_start = [&](int pgid) {
    group = pgid;
    {
      std::lock_guard lock(mutex_);
      if (killing_) ::kill(-pgid, SIGKILL);
      live_.insert(pgid);
    }
    (void)dir_.journal(slice_, {{"event", "process"}, {"pgid", pgid}});
    if (spec.on_start) spec.on_start(pgid);
  };
  auto outcome = inner_.run(tracked);
  std::lock_guard lock(mutex_);
  live_.erase(group);
  return outcome;
}

void TrackingLauncher::kill_all() {
  std::lock_guard lock(mutex_);
  killing_ = true;
  for (int pgid : live_) ::kill(-pgid, SIGKILL);
}

}  // namespace canrun::campaign
