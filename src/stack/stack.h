// The stack under test, as the stack's own Python reports it: python and every package of the
// backend profile, the compiler's version (its compiler_package), transformers' and every
// task's library that is installed (sentence-transformers, diffusers).
//
// Thread safety: Stack is a value; the probes as StackPython.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backend/profile.h"
#include "core/result.h"
#include "stack/python.h"

namespace canrun::stack {

struct Stack {
  std::string python;                           //!< the interpreter that runs run.py
  std::map<std::string, std::string> versions;  //!< "python", "torch", "transformers", ...
  std::string compiler_version;
  std::string library_version;  //!< transformers

  std::string versions_json() const;
};

//! The installed versions of `names` (missing ones are left out), and "python"
//! (importlib.metadata: nothing is imported).
Result<std::map<std::string, std::string>> probe_versions(const StackPython& python,
                                                          const std::vector<std::string>& names);

//! The version of transformers in the stack; kNotFound naming the Python when it has none.
Result<std::string> probe_library_version(const StackPython& python);

//! The versions of the profile's packages. kNotFound when the compiler's package or
//! transformers is not installed there, naming it.
Result<Stack> probe_stack(const StackPython& python, const backend::BackendProfile& profile);

}  // namespace canrun::stack
