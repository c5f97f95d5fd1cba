// Curated exclusions (catalog/exclusions.toml): models not to test, each with a reason.
//
//   [[exclude]]
//   match = "meta-llama/*"   # a model id, or a glob with * and ?
//   reason = "gated"         # a category of SPEC.md §7, or "note" for a curator's note
//   why = "Gated: needs a Hub token and accepting the license."
//
// Rules are tried in file order; the first that matches wins.
// Thread safety: immutable after load; const methods may be called from many threads.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"

namespace canrun::catalog {

struct Exclusion {
  std::string reason;  //!< a category of SPEC.md §7 (e.g. "gated") or "note"
  std::string why;     //!< one sentence for people
};

class Exclusions {
 public:
  //! Reads the file; errors name the file, the entry and what is wrong (bad TOML, a missing
  //! key, an unknown reason, a pattern with characters no model id has).
  static Result<Exclusions> load(const std::filesystem::path& path);
  static Result<Exclusions> parse(std::string_view toml_text, std::string_view source_name);

  //! The first rule matching `id`, if any.
  std::optional<Exclusion> match(const ModelId& id) const;
  std::size_t size() const { return rules_.size(); }

 private:
  struct Rule {
    std::string pattern;
    Exclusion exclusion;
  };
  std::vector<Rule> rules_;
};

//! Whether `text` matches `pattern`, where * matches any run of characters ('/' included)
//! and ? any one character.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace canrun::catalog
