// StackKey: which dataset file a verdict belongs to — one file per (backend, compiler
// version, library, library version), SPEC.md §8.
//
// File name: <backend>__<compiler>-<compiler_version>__<library>-<library_version>.parquet
// Names (backend, compiler, library) are lower-case words [a-z0-9] joined by '-' or '_'
// (never "__"), so they need no escaping. Versions are escaped so that the mapping is
// reversible: letters, digits, '.' and '+' stay as they are ("2.16.372.0+4a9b2326" is its own
// file name part); any other byte becomes %XX. The name ends at a version's last '-', since an
// escaped version holds no raw '-'.
//
// Thread safety: immutable value.
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "core/result.h"

namespace canrun::dataset {

struct StackKey {
  std::string backend;
  std::string compiler;
  std::string compiler_version;
  std::string library;
  std::string library_version;

  //! Checks each part; the error names the part and the rule.
  static Result<StackKey> make(std::string backend, std::string compiler,
                               std::string compiler_version, std::string library,
                               std::string library_version);

  //! Parses a file name ("...parquet") or its stem, as `dataset diff --from` accepts.
  static Result<StackKey> parse(std::string_view file_name_or_stem);

  //! "<backend>__<compiler>-<version>__<library>-<version>", escaped.
  std::string stem() const;
  std::string file_name() const { return stem() + ".parquet"; }
  //! For people: "neuron · neuronx-cc 2.16.372.0+4a9b2326 · transformers 5.18.0".
  std::string display() const;

  friend auto operator<=>(const StackKey&, const StackKey&) = default;
};

//! Version escaping used in file names, exposed for tests.
std::string escape_version(std::string_view version);
Result<std::string> unescape_version(std::string_view escaped);

}  // namespace canrun::dataset
