// The curated list of models per task (catalog/selected.toml), in the curator's order:
//
//   [text-generation]
//   models = [
//     { id = "Qwen/Qwen3-0.6B" },
//     { id = "meta-llama/Llama-3.1-8B-Instruct", note = "Gated: needs a token." },
//   ]
//
// Thread safety: immutable after load; const methods may be called from many threads.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"

namespace canrun::catalog {

struct SelectedModel {
  ModelId id;
  std::string note;  //!< the curator's note; empty when none
};

class SelectedList {
 public:
  //! Reads the file; errors name the file, the line and what is wrong (bad TOML, a model id
  //! that does not validate, an unknown key, the same id twice in one task).
  static Result<SelectedList> load(const std::filesystem::path& path);
  static Result<SelectedList> parse(std::string_view toml_text, std::string_view source_name);

  //! The models of `task` in order; empty for a task the file does not list.
  const std::vector<SelectedModel>& for_task(std::string_view task) const;
  std::vector<std::string> tasks() const;

 private:
  std::map<std::string, std::vector<SelectedModel>, std::less<>> by_task_;
};

}  // namespace canrun::catalog
