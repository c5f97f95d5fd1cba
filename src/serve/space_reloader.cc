#include "serve/space_reloader.h"

#include "core/log.h"

namespace canrun::serve {

SpaceReloader::SpaceReloader(SpaceSources sources, SpaceService& service,
                             std::chrono::milliseconds period)
    : sources_(std::move(sources)),
      service_(service),
      reloads_(sources_.reloads()),
      reload_failures_(sources_.reload_failures()),
      last_load_seconds_(sources_.last_load_seconds()),
      loop_(period, BackgroundLoop::FirstRun::kAfterPeriod, [this] { poll(); }) {}

SpaceReloader::~SpaceReloader() { stop(); }

void SpaceReloader::stop() { loop_.stop(); }

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

void SpaceReloader::poll() {
  std::shared_ptr<const SpaceIndex> fresh = sources_.reload_if_changed();
  publish_gauges();
  if (fresh) {
    log::info("reloaded: {} stacks, {} rows", fresh->stack_count(), fresh->row_count());
    service_.set_index(std::move(fresh));
  }
}

}  // namespace canrun::serve
