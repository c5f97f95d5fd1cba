// Where canrun keeps what it computes and may reuse (CPU references, compile caches, run
// folders, parallel-plan probes, rankings snapshots), and where it finds what it ships
// (the curated catalog, backend profiles) beside its executable.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "core/result.h"

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

//! The default path of a file canrun ships (`shipped_file("catalog", "exclusions.toml")`):
//! inside shipped_dir(folder), whatever the current folder; else folder/name relative to the
//! current folder, so that the error of opening it names what was looked for. A path the user
//! gives instead is taken as given (relative to the current folder).
std::filesystem::path shipped_file(std::string_view folder, std::string_view name);

//! The file an option names (`--models FILE`), from the working folder; kNotFound naming the
//! option and the working folder when it is not there.
Result<std::filesystem::path> given_file(std::string_view option, std::string_view given);

//! The file an option names (`--exclusions`): given_file(option, given), or when `given` is
//! empty shipped_file(folder, name).
Result<std::filesystem::path> given_or_shipped(std::string_view option, std::string_view given,
                                               std::string_view folder, std::string_view name);

}  // namespace canrun
