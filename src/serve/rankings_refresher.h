// RankingsRefresher: keeps the Space's rankings snapshots fresh while it serves (SPEC.md §9).
// A thread of its own asks the Hub for every supported task's downloads and trending rankings
// at once and then every `period`, writing each answer as the new snapshot in the folder the
// Space reads (hub::current_rankings); the reloader then picks the files up like any other
// change. When the Hub cannot be reached, the snapshot on disk is kept and served, and the log
// says so.
//
// Thread safety: the constructor, stop() and the destructor belong to the owning thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>

#include "hub/hub_client.h"
#include "serve/background_loop.h"

namespace canrun::serve {

class RankingsRefresher {
 public:
  //! Starts the thread; the first refresh begins at once. Requests are short (20 s at most,
  //! two tries) and the wait between tries ends at stop(), so stopping is prompt.
  RankingsRefresher(hub::HubConfig config, std::filesystem::path dir, std::chrono::seconds period,
                    std::size_t limit);
  ~RankingsRefresher();  //!< stop()
  RankingsRefresher(const RankingsRefresher&) = delete;
  RankingsRefresher& operator=(const RankingsRefresher&) = delete;

  //! Returns once the thread has ended (a Hub request in progress finishes first). Idempotent.
  void stop();

 private:
  void refresh_once();

  std::unique_ptr<hub::HubClient> client_;
  const std::filesystem::path dir_;
  const std::size_t limit_;
  BackgroundLoop loop_;  //!< last: starts once the rest is ready
};

}  // namespace canrun::serve
