// Packages on top of the stack (SPEC.md §10): a run that fails to load because a Python module
// is missing gets the package that provides it installed into an overlay folder (put first on
// its PYTHONPATH), and is tried again (trial/packages_retry.h: again for each new package asked
// for, a few times at most). The stack itself is never touched.
//
// Safety: the error text only ever selects entries of a reviewed module → distribution map
// compiled into canrun (kReviewedPackages); a repository cannot make canrun install a name of
// its choosing. pip installs wheels only (--only-binary=:all:), resolved against the stack's
// own frozen versions as constraints (so nothing of the stack is shadowed or upgraded), then
// exactly the resolved wheels with --no-deps into the overlay. pip's own configuration
// (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX, pip.conf) says where wheels come from.
//
// Thread safety: missing_modules and reviewed_distribution are pure; install_on_top may run
// from several threads and processes at once (one file lock per overlay).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "stack/python.h"

namespace canrun::run {

//! Module (import name) → the distribution that provides it. Reviewed by hand: add an entry
//! only for a well-known package that checkpoints' tokenizers or processors need.
struct ReviewedPackage {
  std::string_view module;
  std::string_view distribution;
};
inline constexpr ReviewedPackage kReviewedPackages[] = {
    {"sentencepiece", "sentencepiece"},
    {"tiktoken", "tiktoken"},
    {"google.protobuf", "protobuf"},
    {"protobuf", "protobuf"},
    {"einops", "einops"},
    {"timm", "timm"},
    {"blobfile", "blobfile"},
    {"sacremoses", "sacremoses"},
    {"ftfy", "ftfy"},
};

//! The modules a Python traceback says are missing, in order of first mention, each once:
//! "No module named 'x.y'", transformers' "requires the X library but it was not found",
//! "requires the following packages that were not found in your environment: a, b" and
//! "`x` is required". Names are lowercased; nothing here is trusted (see the map).
std::vector<std::string> missing_modules(std::string_view error_text);

//! The reviewed distribution for `module` (or for its top-level package); nullopt when the
//! map has none.
std::optional<std::string_view> reviewed_distribution(std::string_view module);

//! What a load failure asks for: the reviewed distributions to install (each once), and the
//! missing modules outside the map (reported, never installed).
struct PackageRequest {
  std::vector<std::string> distributions;
  std::vector<std::string> unreviewed;
};
PackageRequest packages_for(std::string_view error_text);

struct Overlay {
  std::filesystem::path site;         //!< the folder to put first on PYTHONPATH
  std::vector<std::string> packages;  //!< "name==version" of every wheel in it, sorted
};

//! The overlay holding `distributions` (and whatever they need that the stack lacks) for the
//! stack's Python, built once under `overlays_root` and reused. An error (kNotFound when pip
//! finds no acceptable wheel, kFailedPrecondition when everything is already in the stack)
//! names the distributions and ends with pip's own words.
Result<Overlay> install_on_top(const stack::StackPython& python,
                               const std::vector<std::string>& distributions,
                               const std::filesystem::path& overlays_root);

//! install_on_top of what a load failure asks for: all of `distributions`, or, when they cannot
//! all be had, those that can (a traceback may name what a failed fallback also wanted:
//! transformers 4 mentions protobuf after tiktoken is missing). The error of the whole set when
//! none can be installed.
Result<Overlay> install_what_can_be_had(const stack::StackPython& python,
                                        const std::vector<std::string>& distributions,
                                        const std::filesystem::path& overlays_root);

}  // namespace canrun::run
