// The stack's Python: the one way canrun asks the interpreter under test a question — which
// versions it has, which architectures its transformers knows, which parallel plans it offers.
// Every question is a short script run with the launcher (in a scratch folder, the caller's
// environment, a time limit) whose last line of stdout is one JSON value; answers that depend
// only on a library version are cached as JSON files under one root (cache_root(), by default
// stack/ in canrun's cache folder, which honours CANRUN_CACHE).
//
// Thread safety: const methods may be called from several threads; a cache file is replaced
// atomically, so concurrent writers of one answer leave one whole file.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "process/process.h"

namespace canrun::stack {

//! The Python canrun runs recipes with: $CANRUN_PYTHON, else the project venv beside the
//! executable's folder (.venv/bin/python), else python3 on PATH.
std::string default_python();

class StackPython {
 public:
  //! `python` empty: default_python(); `cache_root` empty: default_cache_dir()/"stack".
  StackPython(std::string python, std::filesystem::path cache_root,
              process::ProcessLauncher& launcher);

  const std::string& python() const { return python_; }
  const std::filesystem::path& cache_root() const { return cache_root_; }
  process::ProcessLauncher& launcher() const { return launcher_; }

  //! Runs `script` (python -c) with `args`; the answer is the JSON value on its last line of
  //! stdout. `what` names the question in errors ("the parallel probe"). A script that fails
  //! is kNotFound (the stack cannot answer: a missing package), with the end of its stderr.
  Result<nlohmann::json> ask(std::string_view what, std::string_view script,
                             const std::vector<std::string>& args = {},
                             std::chrono::seconds timeout = std::chrono::seconds(120)) const;

  //! Stores `answer` at cache_root()/`key` (atomically), as cached() does with what it computed;
  //! a failure to write is logged, not returned: the cache is an optimisation.
  void store(const std::filesystem::path& key, const nlohmann::json& answer) const;
  //! The cached answer at cache_root()/`key` when `valid` accepts it, else `compute`'s,
  //! which is then stored there.
  Result<nlohmann::json> cached(const std::filesystem::path& key,
                                const std::function<bool(const nlohmann::json&)>& valid,
                                const std::function<Result<nlohmann::json>()>& compute) const;

 private:
  std::string python_;
  std::filesystem::path cache_root_;
  process::ProcessLauncher& launcher_;
};

//! A name safe as a cache path part and a script argument: [A-Za-z0-9_.-], no "..", at most
//! 100 characters (model types, library versions).
bool is_safe_name(std::string_view text);

}  // namespace canrun::stack
