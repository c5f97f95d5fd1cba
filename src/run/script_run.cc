#include "run/script_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <ranges>

#include "cache/cache_tree.h"
#include "core/atomic_file.h"
#include "core/log.h"
#include "process/box.h"
#include "process/environment.h"

namespace canrun::run {

namespace fs = std::filesystem;

std::map<std::string, std::string> script_environment(const backend::BackendProfile& profile,
                                                      const ScriptPlace& place) {
  auto env = process::environment_for(process::Audience::kRun);
  env["PYTHONUNBUFFERED"] = "1";
  env["TOKENIZERS_PARALLELISM"] = "false";
  if (!place.python_path.empty()) {
    std::string path;
    for (const fs::path& folder : place.python_path) path += folder.string() + ":";
    const auto existing = env.find("PYTHONPATH");
    if (existing != env.end() && !existing->second.empty())
      path += existing->second;
    else
      path.pop_back();
    env["PYTHONPATH"] = path;
  }
  if (!profile.cache_env.empty()) {
    env[profile.cache_env] = cache::compiler_cache_dir(place.cache_dir, profile.name,
                                                       profile.compiler, place.compiler_version)
                                 .string();
  }
  if (!profile.cache_local_env.empty()) {
    env[profile.cache_local_env] =
        cache::local_compiler_cache_dir(place.cache_dir, profile.name, profile.compiler,
                                        place.compiler_version)
            .string();
  }
  if (auto pinning = place.pinning ? place.pinning : backend::pinning_value(profile, place.cores)) {
    env[profile.pinning_env] = *pinning;
  }
  const std::string profile_dir = profile.source.parent_path().string();
  for (const auto& [key, value] : profile.env) {
    std::string expanded = value;
    for (auto at = expanded.find("{profile_dir}"); at != std::string::npos;
         at = expanded.find("{profile_dir}")) {
      expanded.replace(at, std::string_view("{profile_dir}").size(), profile_dir);
    }
    env[key] = expanded;
  }
  return env;
}

std::vector<fs::path> script_caches(const backend::BackendProfile& profile,
                                    const ScriptPlace& place) {
  std::vector<fs::path> folders;
  if (!profile.cache_env.empty()) {
    folders.push_back(cache::compiler_cache_dir(place.cache_dir, profile.name, profile.compiler,
                                                place.compiler_version));
  }
  if (!profile.cache_local_env.empty()) {
    folders.push_back(cache::local_compiler_cache_dir(place.cache_dir, profile.name,
                                                      profile.compiler, place.compiler_version));
  }
  for (fs::path& folder : folders) {
    std::error_code ignored;  // a run that cannot write its cache still runs
    fs::create_directories(folder, ignored);
    folder = fs::absolute(folder);
  }
  return folders;
}

Result<fs::path> make_run_dir(const fs::path& work_dir, std::string_view model_id,
                              std::string_view what) {
  static std::atomic<int> counter{0};
  std::string name(model_id);
  for (char& c : name) c = c == '/' ? '_' : c;
  const auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const fs::path dir =
      work_dir / fmt::format("{}-{}-{}-{}-{}", name, what, stamp, ::getpid(), counter++);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    return io_error(fmt::format("cannot create run folder {}: {}", dir.string(), error.message()));
  return dir;
}

Result<ScriptRun> run_script(const std::string& script, const fs::path& dir,
                             const std::string& python, std::map<std::string, std::string> env,
                             std::chrono::seconds timeout, process::ProcessLauncher& launcher,
                             const std::vector<fs::path>& caches) {
  CANRUN_RETURN_IF_ERROR(write_file_atomically(dir / "run.py", script));
  CANRUN_ASSIGN_OR_RETURN(const process::OwnFolders own, process::OwnFolders::make(dir, env));
  process::ProcessSpec spec;
  spec.argv = {python, "run.py"};
  std::vector<fs::path> writable = {fs::absolute(dir), env.at("TMPDIR")};
  writable.insert(writable.end(), caches.begin(), caches.end());
  spec.box = process::box_if_isolated(std::move(writable));
  spec.env = std::move(env);
  spec.cwd = dir;
  spec.timeout = timeout;
  CANRUN_ASSIGN_OR_RETURN(process::ProcessOutcome outcome, launcher.run(spec));
  // Keep what it printed beside the script, for whoever looks into a failure.
  (void)write_file_atomically(dir / "stdout.txt", outcome.stdout_tail);
  (void)write_file_atomically(dir / "stderr.txt", outcome.stderr_tail);
  auto report = parse_result_line(outcome.stdout_tail);
  ScriptRun result{std::move(outcome), std::nullopt};
  if (report.ok()) {
    result.report = std::move(*report);
  } else {
    log::warning("{}: {}", dir.string(), report.error().message());
  }
  return result;
}

std::string run_log(const std::filesystem::path& dir) {
  std::string log;
  std::string reported;  // the traceback run.py caught, from its result line
  for (const char* name : {"stdout.txt", "stderr.txt"}) {
    auto text = read_file(dir / name);
    if (!text.ok()) continue;
    log += fmt::format("[canrun: run.py's {}{}]\n{}", std::string_view(name).substr(0, 6),
                       text->empty() ? ", empty" : "", *text);
    if (!log.ends_with('\n')) log += '\n';
    for (const auto line : std::views::split(std::string_view(*text), '\n')) {
      const std::string_view view(line.begin(), line.end());
      if (!view.starts_with(kResultMarker)) continue;
      const auto json = nlohmann::json::parse(view.substr(kResultMarker.size()), nullptr, false);
      if (json.is_object() && json.value("error", nlohmann::json()).is_string()) {
        reported = json["error"].get<std::string>();
      }
    }
  }
  if (!reported.empty()) {
    log += "[canrun: the error run.py caught, from its result line]\n" + reported;
    if (!log.ends_with('\n')) log += '\n';
  }
  return log;
}

}  // namespace canrun::run
