#include "cli/stop_signals.h"

#include <signal.h>

namespace canrun::cli {
namespace {

std::atomic<bool> stop_requested{false};

extern "C" void on_stop_signal(int signal) {
  stop_requested = true;
  ::signal(signal, SIG_DFL);  // a second one ends canrun at once
}

}  // namespace

StopSignals::StopSignals(std::initializer_list<int> signals) : signals_(signals) {
  stop_requested = false;
  for (const int signal : signals_) ::signal(signal, on_stop_signal);
}

StopSignals::~StopSignals() { restore(); }

const std::atomic<bool>& StopSignals::requested() const { return stop_requested; }

void StopSignals::restore() {
  for (const int signal : signals_) ::signal(signal, SIG_DFL);
  signals_.clear();
}

}  // namespace canrun::cli
