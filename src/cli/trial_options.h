// The options that name a trial — MODEL and how it is planned and rendered — shared by canrun
// test, render and plan, so that the same words give the same checkpoint, plan and run.py.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "core/result.h"
#include "trial/trial.h"

namespace canrun::cli {

struct TrialOptions {
  trial::TrialRequest request;
  std::string cache;       //!< --cache: the request's cache_dir
  std::string exclusions;  //!< --exclusions; empty: the shipped catalog's
  int cores = 0;           //!< --cores: 0 = plan
  std::string parallelism;
  int timeout_s = 1800;
};

//! What names the stack and how models are planned on it (every command that plans):
//! --backend, --memory-per-core, --reserve, --python, --cache.
void add_stack_options(CLI::App& command, TrialOptions& options);

//! What names the model, its task and its plan (canrun plan, render, test): MODEL, --revision,
//! --task, --exclusions and the stack options.
void add_model_options(CLI::App& command, TrialOptions& options);

//! What names the model, its plan and its run.py (canrun render, test): the model options and
//! --tokens, --prompt, --cores, --parallelism. Returns `command`.
CLI::App* add_trial_options(CLI::App* command, TrialOptions& options);

//! The request the options describe (the curated exclusions: --exclusions, else the shipped
//! catalog's exclusions.toml when there is one); kInvalidArgument naming the option that is
//! wrong.
Result<trial::TrialRequest> trial_request(const TrialOptions& options);

}  // namespace canrun::cli
