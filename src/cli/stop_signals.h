// Ctrl-C or SIGTERM as a request to stop that a campaign polls (it ends the running trials'
// process groups and records nothing half done), instead of the end of canrun, which would leave
// the trials' process groups running until a resume swept them; a second signal of the same kind
// ends canrun at once. SIGTERM is how `kill`, `timeout`, Slurm and Kubernetes stop a program.
//
// Thread safety: one StopSignals at a time in a process; the handler sets one process-wide
// flag, which any thread may read.
#pragma once

#include <signal.h>

#include <atomic>
#include <initializer_list>
#include <vector>

namespace canrun::cli {

class StopSignals {
 public:
  //! Clears the request and handles `signals` until restore() or the end of this object.
  explicit StopSignals(std::initializer_list<int> signals = {SIGINT, SIGTERM});
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  //! Set once one of the signals arrived.
  const std::atomic<bool>& requested() const;
  //! The signals' default actions again: what follows is ended by them at once.
  void restore();

 private:
  std::vector<int> signals_;
};

}  // namespace canrun::cli
