#include "run/packages_on_top.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/text.h"
#include "process/environment.h"

namespace canrun::run {
namespace {

namespace fs = std::filesystem;

//! PEP 503: lower case, runs of -_. as one '-'.
std::string normalized_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool separator = c == '-' || c == '_' || c == '.';
    if (separator) {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// Every installed distribution of the stack's Python as a pip constraint (name==version).
constexpr std::string_view kFrozenScript = R"(
import importlib.metadata as m, json
pins = sorted({f"{d.metadata['Name']}=={d.version}" for d in m.distributions() if d.metadata['Name']})
print(json.dumps(pins))
)";

//! Runs `python -m pip ARGS` in `dir`; an error carries the end of what pip said.
Status run_pip(const stack::StackPython& python, const std::vector<std::string>& args,
               const fs::path& dir, std::string_view what) {
  process::ProcessSpec spec;
  spec.argv = {python.python(), "-m", "pip"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = process::environment_for(process::Audience::kPip);
  spec.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  spec.env["PIP_NO_INPUT"] = "1";
  spec.cwd = dir;
  spec.timeout = std::chrono::minutes(10);
  spec.output_limit = 64 * 1024;
  CANRUN_ASSIGN_OR_RETURN(process::ProcessOutcome outcome, python.launcher().run(spec));
  if (outcome.exit_code == 0) return ok_status();
  std::string said = outcome.stderr_tail.empty() ? outcome.stdout_tail : outcome.stderr_tail;
  if (said.size() > 2000) said = said.substr(said.size() - 2000);
  return not_found(fmt::format("pip could not {}: {}", what, said));
}

//! The wheels a dry run would install ("name==version"), refusing any the stack has.
Result<std::vector<std::string>> resolved_pins(const fs::path& report_path,
                                               const std::set<std::string>& stack_names) {
  CANRUN_ASSIGN_OR_RETURN(std::string text, read_file(report_path));
  const auto report = nlohmann::json::parse(text, nullptr, false);
  if (!report.is_object() || !report.contains("install") || !report["install"].is_array())
    return corrupt(fmt::format("{}: not a pip installation report", report_path.string()));
  std::vector<std::string> pins;
  for (const auto& item : report["install"]) {
    const auto& metadata = item.value("metadata", nlohmann::json::object());
    const std::string name = metadata.value("name", "");
    const std::string version = metadata.value("version", "");
    if (name.empty() || version.empty())
      return corrupt(fmt::format("{}: an entry without name or version", report_path.string()));
    if (stack_names.contains(normalized_name(name)))
      return invalid_argument(fmt::format(
          "pip would replace {} of the stack with {}; nothing is installed", name, version));
    pins.push_back(name + "==" + version);
  }
  std::sort(pins.begin(), pins.end());
  return pins;
}

Result<Overlay> read_overlay(const fs::path& dir) {
  CANRUN_ASSIGN_OR_RETURN(std::string text, read_file(dir / "packages.json"));
  const auto pins = nlohmann::json::parse(text, nullptr, false);
  if (!pins.is_array())
    return corrupt(fmt::format("{}: not a list", (dir / "packages.json").string()));
  Overlay overlay{dir / "site", {}};
  for (const auto& pin : pins) overlay.packages.push_back(pin.get<std::string>());
  return overlay;
}

Result<Overlay> build_overlay(const stack::StackPython& python,
                              const std::vector<std::string>& distributions, const fs::path& dir) {
  const fs::path partial = dir.string() + ".partial";
  std::error_code error;
  fs::remove_all(partial, error);
  fs::create_directories(partial, error);
  if (error)
    return io_error(fmt::format("cannot create {}: {}", partial.string(), error.message()));
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json frozen,
                          python.ask("the stack's installed distributions", kFrozenScript));
  std::string constraints;
  std::set<std::string> stack_names;
  for (const auto& pin : frozen) {
    const std::string line = pin.get<std::string>();
    constraints += line + "\n";
    stack_names.insert(normalized_name(line.substr(0, line.find("=="))));
  }
  CANRUN_RETURN_IF_ERROR(write_file_atomically(partial / "constraints.txt", constraints));
  const std::string wanted = fmt::format("{}", fmt::join(distributions, " "));
  std::vector<std::string> resolve = {
      "install",  "--dry-run",   "--quiet",      "--only-binary=:all:",
      "--report", "report.json", "--constraint", "constraints.txt"};
  resolve.insert(resolve.end(), distributions.begin(), distributions.end());
  CANRUN_RETURN_IF_ERROR(
      run_pip(python, resolve, partial, fmt::format("resolve {} on top of the stack", wanted)));
  CANRUN_ASSIGN_OR_RETURN(std::vector<std::string> pins,
                          resolved_pins(partial / "report.json", stack_names));
  if (pins.empty())
    return invalid_argument(fmt::format("{} is already installed in the stack", wanted));
  std::vector<std::string> install = {
      "install", "--quiet", "--no-deps", "--only-binary=:all:", "--target", "site"};
  install.insert(install.end(), pins.begin(), pins.end());
  CANRUN_RETURN_IF_ERROR(run_pip(python, install, partial, fmt::format("install {}", wanted)));
  CANRUN_RETURN_IF_ERROR(
      write_file_atomically(partial / "packages.json", nlohmann::json(pins).dump()));
  fs::rename(partial, dir, error);
  if (error)
    return io_error(
        fmt::format("cannot move {} to {}: {}", partial.string(), dir.string(), error.message()));
  log::info("installed on top of the stack: {} ({})", fmt::join(pins, " "), dir.string());
  return Overlay{dir / "site", pins};
}

}  // namespace

std::vector<std::string> missing_modules(std::string_view error_text) {
  // Each pattern captures one name, or a list of them (remote code's imports).
  static const std::regex kPatterns[] = {
      std::regex(R"(No module named '([A-Za-z_][\w.]*)')"),
      std::regex(R"(requires the ([A-Za-z_][\w.]*) library but it was not found)"),
      std::regex(R"(`([A-Za-z_][\w.]*)` is required)"),
      std::regex(
          R"(requires the following packages that were not found in your environment: ([\w.,\s-]+?)\.?(\n|$| Run))"),
  };
  static const std::regex kName(R"([A-Za-z_][\w.-]*)");
  std::vector<std::pair<std::size_t, std::string>> found;  // (position, name)
  const std::string text(error_text);
  for (const auto& pattern : kPatterns) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
         it != std::sregex_iterator(); ++it) {
      const std::string names = (*it)[1];
      const auto at = static_cast<std::size_t>(it->position(1));
      for (auto name = std::sregex_iterator(names.begin(), names.end(), kName);
           name != std::sregex_iterator(); ++name) {
        found.emplace_back(at + static_cast<std::size_t>(name->position()),
                           ascii_lower(name->str()));
      }
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> modules;
  for (auto& [position, name] : found) {
    if (std::find(modules.begin(), modules.end(), name) == modules.end())
      modules.push_back(std::move(name));
  }
  return modules;
}

std::optional<std::string_view> reviewed_distribution(std::string_view module) {
  for (std::string_view candidate : {module, module.substr(0, module.find('.'))}) {
    for (const ReviewedPackage& entry : kReviewedPackages) {
      if (entry.module == candidate) return entry.distribution;
    }
  }
  return std::nullopt;
}

PackageRequest packages_for(std::string_view error_text) {
  PackageRequest request;
  for (const std::string& module : missing_modules(error_text)) {
    if (auto distribution = reviewed_distribution(module)) {
      const std::string name(*distribution);
      if (std::find(request.distributions.begin(), request.distributions.end(), name) ==
          request.distributions.end())
        request.distributions.push_back(name);
    } else {
      request.unreviewed.push_back(module);
    }
  }
  return request;
}

Result<Overlay> install_on_top(const stack::StackPython& python,
                               const std::vector<std::string>& distributions,
                               const fs::path& overlays_root) {
  if (distributions.empty()) return invalid_argument("no package to install on top");
  for (const std::string& name : distributions) {
    const bool reviewed =
        std::any_of(std::begin(kReviewedPackages), std::end(kReviewedPackages),
                    [&](const ReviewedPackage& p) { return p.distribution == name; });
    if (!reviewed)
      return invalid_argument(fmt::format("{} is not a reviewed package to install on top", name));
  }
  std::vector<std::string> sorted = distributions;
  std::sort(sorted.begin(), sorted.end());
  // One overlay per (stack Python, set of distributions), shared by every model that needs it.
  const std::string key = fmt::format("{}-{:016x}", fmt::join(sorted, "+"),
                                      fnv1a(fs::weakly_canonical(python.python()).string() + "\n" +
                                            fmt::format("{}", fmt::join(sorted, " "))));
  const fs::path dir = overlays_root / key;
  CANRUN_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(overlays_root / (key + ".lock")));
  if (fs::is_regular_file(dir / "packages.json")) return read_overlay(dir);
  return build_overlay(python, sorted, dir);
}

Result<Overlay> install_what_can_be_had(const stack::StackPython& python,
                                        const std::vector<std::string>& distributions,
                                        const fs::path& overlays_root) {
  auto overlay = install_on_top(python, distributions, overlays_root);
  if (overlay.ok() || distributions.size() < 2) return overlay;
  std::vector<std::string> installable;
  for (const std::string& name : distributions) {
    if (install_on_top(python, {name}, overlays_root).ok()) installable.push_back(name);
  }
  if (installable.empty()) return overlay;
  log::info("{} could not all be installed on top of the stack; trying with {}",
            fmt::join(distributions, ", "), fmt::join(installable, ", "));
  return install_on_top(python, installable, overlays_root);
}

}  // namespace canrun::run
