#include "serve/space_reloader.h"

#include "core/log.h"

namespace canrun::serve {

SpaceReloader::SpaceReloader(SpaceSources sources, SpaceService& service,
                             std::chrono::milliseconds period)
    : sources_(std::move(sources)), service_(service), period_(period) {
  publish_gauges();
  thread_ = std::thread([this] { run(); });
}

SpaceReloader::~SpaceReloader() { stop(); }

void SpaceReloader::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SpaceReloader::read_gauges(IndexGauges& gauges) const {
  gauges.reloads = reloads_.load();
  gauges.reload_failures = reload_failures_.load();
  gauges.last_load_seconds = last_load_seconds_.load();
}

void SpaceReloader::publish_gauges() {
  reloads_ = sources_.reloads();
  reload_failures_ = sources_.reload_failures();
  last_load_seconds_ = sources_.last_load_seconds();
}

void SpaceReloader::run() {
  std::unique_lock lock(stop_mutex_);
  while (!stop_signal_.wait_for(lock, period_, [this] { return stopping_; })) {
    lock.unlock();
    std::shared_ptr<const SpaceIndex> fresh = sources_.reload_if_changed();
    publish_gauges();
    if (fresh) {
      log::info("reloaded: {} stacks, {} rows", fresh->stack_count(), fresh->row_count());
      service_.set_index(std::move(fresh));
    }
    lock.lock();
  }
}

}  // namespace canrun::serve
