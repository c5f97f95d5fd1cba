// The canrun command line: one CLI::App with a subcommand per pipeline stage. Each
// subcommand lives in its own file and registers itself through a register_*_command
// function declared in commands.h.
#pragma once

namespace canrun::cli {

//! Parses argv, runs the chosen command and returns the process exit code:
//! 0 success, 1 a failed verdict or check, 2 bad usage or input (SPEC.md §3).
int run(int argc, char** argv);

}  // namespace canrun::cli
