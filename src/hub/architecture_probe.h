// Which model architectures the stack's transformers knows: a model whose config names a class
// transformers lacks can only load with remote code, which canrun never enables. The answer
// comes from the stack's own Python (`hasattr(transformers, name)`) and is cached on disk per
// transformers version, so a later run with the same version starts no Python that imports
// transformers.
//
// Thread safety: one thread at a time.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "run/process.h"

namespace canrun::hub {

struct ArchitectureAnswers {
  std::string library_version;        //!< transformers' version in the stack
  std::map<std::string, bool> known;  //!< architecture → present in transformers
};

class ArchitectureSupport {
 public:
  virtual ~ArchitectureSupport() = default;
  //! Whether each architecture is a class of the stack's transformers.
  virtual Result<ArchitectureAnswers> check(const std::vector<std::string>& architectures) = 0;
};

//! Asks `python` (importlib.metadata for the version, then one import of transformers for the
//! names not cached) and keeps the answers in `cache_file` (JSON: version → name → bool).
class TransformersProbe final : public ArchitectureSupport {
 public:
  TransformersProbe(std::string python, std::filesystem::path cache_file,
                    run::ProcessLauncher& launcher)
      : python_(std::move(python)), cache_file_(std::move(cache_file)), launcher_(launcher) {}
  Result<ArchitectureAnswers> check(const std::vector<std::string>& architectures) override;

  //! $XDG_CACHE_HOME/canrun/transformers_architectures.json (else under ~/.cache).
  static std::filesystem::path default_cache_file();
  //! How many times Python imported transformers (for tests and logs).
  int imports() const { return imports_; }

 private:
  std::string python_;
  std::filesystem::path cache_file_;
  run::ProcessLauncher& launcher_;
  int imports_ = 0;
};

//! A Python class name: [A-Za-z_][A-Za-z0-9_]*, at most 200 characters.
bool is_python_identifier(std::string_view name);

}  // namespace canrun::hub
