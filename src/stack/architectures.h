// Which model architectures the stack's transformers knows: a model whose config names a class
// transformers lacks can only load with remote code, which canrun never enables. The answer
// comes from the stack's own Python (`hasattr(transformers, name)`) and is cached per
// transformers version (StackPython's cache: transformers-<version>/architectures.json, name →
// bool), so a later run with the same version starts no Python that imports transformers.
//
// Thread safety: one thread at a time per TransformersArchitectures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "stack/python.h"

namespace canrun::stack {

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

//! Asks the stack's Python (importlib.metadata for the version, then one import of
//! transformers for the names not cached).
class TransformersArchitectures final : public ArchitectureSupport {
 public:
  explicit TransformersArchitectures(const StackPython& python) : python_(python) {}
  Result<ArchitectureAnswers> check(const std::vector<std::string>& architectures) override;

  //! How many times Python imported transformers (for tests and logs).
  int imports() const { return imports_; }

 private:
  const StackPython& python_;
  int imports_ = 0;
};

//! A Python class name: [A-Za-z_][A-Za-z0-9_]*, at most 200 characters.
bool is_python_identifier(std::string_view name);

}  // namespace canrun::stack
