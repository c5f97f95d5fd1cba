// BackgroundLoop: a thread of its own that does one piece of work every `period` until stopped,
// for the Space's jobs that run beside the server (the reloader, the rankings refresher).
// Stopping wakes the wait between two runs at once; a run in progress finishes first, and may
// end sooner by asking stopping() between its steps or by waiting with wait_or_stop().
//
// Thread safety: stopping() and wait_or_stop() may be called from any thread (the work's
// included). The constructor, stop() and the destructor belong to the owning thread. The
// thread starts with the signal mask of the thread that makes the loop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace canrun::serve {

class BackgroundLoop {
 public:
  //! When the first run comes: at once, or one period from now.
  enum class FirstRun { kAtOnce, kAfterPeriod };

  //! Starts the thread. An owner whose work uses its own members declares the loop after them,
  //! so the thread starts once they are ready and is stopped before they go.
  BackgroundLoop(std::chrono::milliseconds period, FirstRun first, std::function<void()> work);
  ~BackgroundLoop();  //!< stop()
  BackgroundLoop(const BackgroundLoop&) = delete;
  BackgroundLoop& operator=(const BackgroundLoop&) = delete;

  //! Returns once the thread has ended; a run in progress finishes first. Idempotent.
  void stop();

  //! Whether stop() has been called.
  bool stopping() const;
  //! Waits `wait`, or less when stop() is called meanwhile; returns stopping().
  bool wait_or_stop(std::chrono::milliseconds wait) const;

 private:
  void run(std::chrono::milliseconds period, FirstRun first, const std::function<void()>& work);

  mutable std::mutex mutex_;                     //!< guards stopping_
  mutable std::condition_variable stop_signal_;  //!< wakes the waits to stop
  bool stopping_ = false;
  std::thread thread_;  //!< last: starts once the rest is ready
};

}  // namespace canrun::serve
