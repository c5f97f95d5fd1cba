// Ctrl-C as a request to stop that a campaign polls (it ends the running trials' process
// groups and records nothing half done), instead of the end of canrun; a second Ctrl-C ends
// canrun at once. Fleet workers add SIGTERM, which Slurm and Kubernetes stop a task with.
//
// Thread safety: one StopSignals at a time in a process; the handler sets one process-wide
// flag, which any thread may read.
#pragma once

#include <atomic>
#include <initializer_list>
#include <vector>

namespace canrun::cli {

class StopSignals {
 public:
  //! Clears the request and handles `signals` until restore() or the end of this object.
  explicit StopSignals(std::initializer_list<int> signals);
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
