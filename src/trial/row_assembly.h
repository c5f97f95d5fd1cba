// The verdict row of a trial, assembled: the columns known before anything runs (start_row)
// and the run's measurements (record_measurements). The verdict's own columns are the verify
// step's (trial/verdict_rules.h). Internal to src/trial.
//
// Thread safety: functions of their arguments (start_row also reads the clock and host name).
#pragma once

#include <string>

#include "backend/profile.h"
#include "dataset/verdict_row.h"
#include "run/script_run.h"
#include "stack/stack.h"
#include "trial/trial.h"

namespace canrun::trial {

//! The `stack` column: every version, and what else changes results: the profile's compile
//! options ("compile:fullgraph") and the variables it sets for runs
//! ("env:NEURON_LOGICAL_NC_CONFIG", the neuron profile's LNC=2).
std::string stack_json(const stack::Stack& stack, const backend::BackendProfile& profile);

//! The row's columns that do not depend on how the run went.
dataset::VerdictRow start_row(const PreparedTrial& trial, const stack::Stack& stack);

//! The run's times, throughput, peak memory and compile cache counts, into the outcome; its
//! eager baseline (speedup, memory ratio, with `memory_measure`: the profile's peak_memory) and
//! long generation.
void record_measurements(const run::ScriptRun& run, std::string_view memory_measure,
                         TrialOutcome& outcome);

}  // namespace canrun::trial
