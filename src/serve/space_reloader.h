// SpaceReloader: keeps the Space's index current while it serves. A thread of its own looks
// at the sources every `period`; when a file changed (space_sources.h says which count), it
// builds the new index and hands it to the service, which serves it from the next request.
//
// It owns the sources from then on: only its thread touches them. The loader's figures for
// /metrics are copied out after each poll, so reading them never waits for a reload.
//
// Thread safety: read_gauges() may be called from any thread at any time (the service's
// /metrics handler). The constructor, stop() and the destructor belong to the owning thread.
// The service must outlive the reloader. The thread starts with the signal mask of the thread
// that makes the reloader.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "serve/background_loop.h"
#include "serve/metrics.h"
#include "serve/space_service.h"
#include "serve/space_sources.h"

namespace canrun::serve {

class SpaceReloader {
 public:
  //! Starts the thread; the first look is one `period` from now. `sources` has been load()ed
  //! and `service` serves the index that load() built.
  SpaceReloader(SpaceSources sources, SpaceService& service, std::chrono::milliseconds period);
  //! stop().
  ~SpaceReloader();
  SpaceReloader(const SpaceReloader&) = delete;
  SpaceReloader& operator=(const SpaceReloader&) = delete;

  //! Returns once the thread has ended; a reload in progress finishes first. Idempotent.
  void stop();

  //! Sets the loader's fields of `gauges`: reloads, reload_failures, last_load_seconds.
  void read_gauges(IndexGauges& gauges) const;

 private:
  //! One look at the sources: a new index to the service when anything changed.
  void poll();
  //! Copies the sources' figures into the atomics below.
  void publish_gauges();

  SpaceSources sources_;  //!< touched by the thread only, once it runs
  SpaceService& service_;
  std::atomic<std::uint64_t> reloads_;          //!< as of the last finished poll
  std::atomic<std::uint64_t> reload_failures_;  //!< as of the last finished poll
  std::atomic<double> last_load_seconds_;       //!< as of the last finished poll
  BackgroundLoop loop_;                         //!< last: starts once the rest is ready
};

}  // namespace canrun::serve
