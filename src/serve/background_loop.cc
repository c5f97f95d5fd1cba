#include "serve/background_loop.h"

namespace canrun::serve {

BackgroundLoop::BackgroundLoop(std::chrono::milliseconds period, FirstRun first,
                               std::function<void()> work)
    : thread_([this, period, first, work = std::move(work)] { run(period, first, work); }) {}

BackgroundLoop::~BackgroundLoop() { stop(); }

void BackgroundLoop::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool BackgroundLoop::stopping() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

bool BackgroundLoop::wait_or_stop(std::chrono::milliseconds wait) const {
  std::unique_lock lock(mutex_);
  return stop_signal_.wait_for(lock, wait, [this] { return stopping_; });
}

void BackgroundLoop::run(std::chrono::milliseconds period, FirstRun first,
                         const std::function<void()>& work) {
  if (first == FirstRun::kAfterPeriod && wait_or_stop(period)) return;
  while (true) {
    work();
    if (wait_or_stop(period)) return;
  }
}

}  // namespace canrun::serve
