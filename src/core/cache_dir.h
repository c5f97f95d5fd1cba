// Where canrun keeps what it computes and may reuse: CPU references, compile caches, run
// folders, parallel-plan probes, rankings snapshots.
#pragma once

#include <filesystem>

namespace canrun {

//! $CANRUN_CACHE, else $XDG_CACHE_HOME/canrun, else ~/.cache/canrun.
std::filesystem::path default_cache_dir();

}  // namespace canrun
