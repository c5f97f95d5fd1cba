// Where canrun keeps what it computes and may reuse (CPU references, compile caches, run
// folders, parallel-plan probes, rankings snapshots), and where it finds what it ships
// (the curated catalog, backend profiles) beside its executable.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace canrun {

//! $CANRUN_CACHE, else $XDG_CACHE_HOME/canrun, else ~/.cache/canrun.
std::filesystem::path default_cache_dir();

//! Where `canrun hub` keeps rankings snapshots and `canrun serve` reads them by default:
//! $CANRUN_RANKINGS_DIR, else default_cache_dir()/rankings.
std::filesystem::path default_rankings_dir();

//! The folder of the running canrun executable (the current folder if it cannot be told).
std::filesystem::path executable_dir();

//! A folder canrun ships (`catalog`, `backends`): <executable>/../NAME in a build or checkout,
//! else <executable>/../share/canrun/NAME when installed; nullopt when neither exists.
std::optional<std::filesystem::path> shipped_dir(std::string_view name);

}  // namespace canrun
