// The stack under test, as the stack's own Python reports it: python and every package of the
// backend profile, the compiler's version (its compiler_package) and transformers'.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "backend/profile.h"
#include "core/result.h"
#include "run/process.h"

namespace canrun::run {

struct Stack {
  std::string python;                           //!< the interpreter that runs run.py
  std::map<std::string, std::string> versions;  //!< "python", "torch", "transformers", ...
  std::string compiler_version;
  std::string library_version;  //!< transformers

  //! "name==version" for every package (not python): what to install on top of Python.
  std::vector<std::string> packages() const;
  std::string versions_json() const;
};

//! The Python canrun runs recipes with: $CANRUN_PYTHON, else the project venv beside the
//! executable's folder (.venv/bin/python), else python3 on PATH.
std::string default_python();

//! The installed versions of `names` in `python` (missing ones are left out), and "python".
Result<std::map<std::string, std::string>> probe_versions(const std::string& python,
                                                          const std::vector<std::string>& names,
                                                          ProcessLauncher& launcher);

//! Asks `python` for the versions of the profile's packages (importlib.metadata, no imports).
//! kNotFound when the compiler's package or transformers is not installed there, naming it.
Result<Stack> probe_stack(const std::string& python, const backend::BackendProfile& profile,
                          ProcessLauncher& launcher);

}  // namespace canrun::run
