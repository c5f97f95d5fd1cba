#include "cli/campaign_progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "core/log.h"

namespace canrun::cli {

std::string planned_message(std::size_t items, std::size_t to_run) {
  return fmt::format("campaign: {} items planned, {} to run now", items, to_run);
}

std::string started_message(const campaign::WorkItem& item, const std::string& cores) {
  return fmt::format("start   {} ({}) on cores {}", item.model_id.str(), item.task, cores);
}

std::string verifying_message(const campaign::WorkItem& item, std::string_view evidence) {
  return fmt::format("verify  {} ({}) on the host: {}", item.model_id.str(), item.task, evidence);
}

std::string finished_message(const campaign::WorkItem& item, const dataset::VerdictRow& row) {
  return fmt::format("done    {} ({}): {}{}", item.model_id.str(), item.task, to_string(row.result),
                     row.runtime_s ? fmt::format(" in {:.1f} s", *row.runtime_s) : "");
}

std::string failed_message(const campaign::WorkItem& item, const Error& error) {
  return fmt::format("{} ({}) could not run: {}", item.model_id.str(), item.task, error.message());
}

void ProgressStatus::planned(std::size_t to_run, Clock::time_point now) {
  total_ = to_run;
  started_at_ = now;
}

void ProgressStatus::running(const std::string& key, const std::string& where,
                             Clock::time_point now) {
  running_[key] = {where, now};
}

void ProgressStatus::ended(const std::string& key, const std::string& result) {
  running_.erase(key);
  ++done_;
  ++counts_[result];
}

std::string ProgressStatus::line(Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - started_at_).count();
  std::string line = fmt::format("[{}/{}]", done_, total_);
  for (const auto& [result, count] : counts_) line += fmt::format(" {} {}", result, count);
  for (const auto& [key, run] : running_) {
    line += fmt::format(" | {} @{} {:.0f}s", key, run.where,
                        std::chrono::duration<double>(now - run.since).count());
  }
  if (done_ > 0 && done_ < total_) {
    line += fmt::format(" | ETA {:.0f}s",
                        elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  }
  return line.substr(0, 200);
}

ProgressDisplay::ProgressDisplay(bool quiet)
    : terminal_(!quiet && ::isatty(STDERR_FILENO) == 1), quiet_(quiet) {}

void ProgressDisplay::planned(const std::vector<campaign::WorkItem>& items, std::size_t to_run) {
  status_.planned(to_run, ProgressStatus::Clock::now());
  if (!quiet_) log::info("{}", planned_message(items.size(), to_run));
}

void ProgressDisplay::started(const campaign::WorkItem& item, const std::string& cores) {
  status_.running(item.key(), cores, ProgressStatus::Clock::now());
  if (!terminal_ && !quiet_) log::info("{}", started_message(item, cores));
  redraw();
}

void ProgressDisplay::verifying(const campaign::WorkItem& item, std::string_view evidence) {
  status_.running(item.key(), "host", ProgressStatus::Clock::now());
  if (!terminal_ && !quiet_) log::info("{}", verifying_message(item, evidence));
  redraw();
}

void ProgressDisplay::finished(const campaign::WorkItem& item, const dataset::VerdictRow& row) {
  status_.ended(item.key(), std::string(to_string(row.result)));
  if (!terminal_ && !quiet_) log::info("{}", finished_message(item, row));
  redraw();
}

void ProgressDisplay::failed(const campaign::WorkItem& item, const Error& error) {
  status_.ended(item.key(), "error");
  clear();
  log::warning("{}", failed_message(item, error));
  redraw();
}

void ProgressDisplay::tick() { redraw(); }

void ProgressDisplay::clear() {
  if (terminal_ && drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

void ProgressDisplay::redraw() {
  if (!terminal_) return;
  std::cerr << "\r\033[K" << status_.line(ProgressStatus::Clock::now()) << std::flush;
  drawn_ = true;
}

}  // namespace canrun::cli
