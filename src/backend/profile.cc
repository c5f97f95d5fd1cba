#include "backend/profile.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <set>
#include <utility>

#include "backend/pinning.h"
#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/text.h"
#include "core/toml_file.h"

namespace canrun::backend {
namespace {

namespace fs = std::filesystem;

//! Reads typed keys of one table, collecting the first error with file and key.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, std::string source)
      : table_(table), prefix_(std::move(prefix)), source_(std::move(source)) {}

  std::string string(std::string_view key, bool required = true) {
    const auto node = table_[key];
    if (!node) {
      if (required) fail(key, "is missing");
      return {};
    }
    if (!node.is_string()) {
      fail(key, "must be a string");
      return {};
    }
    return *node.value<std::string>();
  }
  //! The number at `key`; `fallback` when it is absent and one is given.
  double number(std::string_view key, std::optional<double> fallback = std::nullopt) {
    const auto node = table_[key];
    if (!node && fallback) return *fallback;
    if (!node || !(node.is_floating_point() || node.is_integer())) {
      fail(key, node ? "must be a number" : "is missing");
      return 0;
    }
    return *node.value<double>();
  }
  int integer(std::string_view key) {
    const auto node = table_[key];
    if (!node || !node.is_integer()) {
      fail(key, node ? "must be an integer" : "is missing");
      return 0;
    }
    return static_cast<int>(*node.value<std::int64_t>());
  }
  template <typename T>
  std::vector<T> list(std::string_view key, bool required = true) {
    std::vector<T> out;
    const auto node = table_[key];
    if (!node) {
      if (required) fail(key, "is missing");
      return out;
    }
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      fail(key, "must be a list");
      return out;
    }
    for (const toml::node& item : *array) {
      auto value = item.value<T>();
      if (!value) {
        fail(key, "has an item of the wrong type");
        return out;
      }
      out.push_back(*value);
    }
    return out;
  }
  const toml::table* subtable(std::string_view key) {
    const auto node = table_[key];
    if (!node) return nullptr;
    if (!node.is_table()) fail(key, "must be a table");
    return node.as_table();
  }
  void fail(std::string_view key, std::string_view why) {
    if (error_.empty()) error_ = fmt::format("{}: {}{} {}", source_, prefix_, key, why);
  }
  const std::string& error() const { return error_; }

 private:
  const toml::table& table_;
  std::string prefix_;
  std::string source_;
  std::string error_;
};

bool is_identifier_path(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.';
  });
}

//! A name the shell and Python take as an environment variable's: letters, digits and '_', not
//! starting with a digit.
bool is_variable_name(std::string_view text) {
  return !text.empty() && !std::isdigit(static_cast<unsigned char>(text.front())) &&
         std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

//! `text` with every `placeholder` replaced by `value`.
std::string replace_all(std::string text, std::string_view placeholder, std::string_view value) {
  for (std::size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size())) {
    text.replace(at, placeholder.size(), value);
  }
  return text;
}

constexpr std::string_view kCacheDirPlaceholder = "{cache_dir}";

}  // namespace

std::string BackendProfile::cache_dir_for_shell() const {
  if (cache_default_dir.empty()) return {};
  if (cache_env.empty()) return cache_default_dir;
  return fmt::format("\"${{{}:-{}}}\"", cache_env, cache_default_dir);
}

std::string BackendProfile::prefetch_template() const {
  if (cache_default_dir.empty()) return cache_prefetch;
  return replace_all(cache_prefetch, kCacheDirPlaceholder, cache_dir_for_shell());
}

std::string BackendProfile::prefetch_command(std::string_view compiler_version) const {
  if (cache_prefetch.empty()) return {};
  return replace_all(prefetch_template(), "{compiler_version}", compiler_version);
}

std::map<std::string, std::string> BackendProfile::run_folder_env(const fs::path& run_dir) const {
  if (compile_artifacts_env.empty()) return {};
  return {{compile_artifacts_env, (run_dir / "compile-artifacts").string()}};
}

Result<BackendProfile> parse_profile(std::string_view toml_text, const fs::path& source) {
  CANRUN_ASSIGN_OR_RETURN(toml::table root, parse_toml(toml_text, source.string()));
  BackendProfile profile;
  profile.source = source;
  TableReader top(root, "", source.string());
  profile.name = top.string("name");
  profile.description = top.string("description", false);
  profile.device = top.string("device");
  profile.torch_device = top.string("torch_device");
  profile.compile_backend = top.string("compile_backend");
  profile.distributed_backend = top.string("distributed_backend");
  profile.dtype = top.string("dtype");
  profile.compiler = top.string("compiler");
  profile.compiler_package = top.string("compiler_package");
  profile.packages = top.list<std::string>("packages");
  profile.imports = top.list<std::string>("import", false);
  profile.compile_artifacts_env = top.string("compile_artifacts_env", false);
  if (const toml::table* options = top.subtable("compile_options")) {
    for (const auto& [key, value] : *options) {
      if (!value.is_boolean())
        top.fail("compile_options." + std::string(key.str()), "must be true or false");
      profile.compile_options[std::string(key.str())] = value.value_or(false);
    }
  }
  if (const toml::table* env = top.subtable("env")) {
    for (const auto& [key, value] : *env) {
      if (!value.is_string()) top.fail("env." + std::string(key.str()), "must be a string");
      profile.env[std::string(key.str())] = value.value_or(std::string());
    }
  }
  static const toml::table kEmpty;
  const toml::table* topology_table = top.subtable("topology");
  const toml::table* pinning_table = top.subtable("pinning");
  const toml::table* memory_table = top.subtable("memory");
  const toml::table* cache_table = top.subtable("cache");
  const toml::table* perf_table = top.subtable("perf");
  if (topology_table == nullptr) top.fail("[topology]", "is missing");
  if (!top.error().empty()) return invalid_argument(top.error());

  TableReader topology(topology_table ? *topology_table : kEmpty, "topology.", source.string());
  profile.topology.cores_per_device = topology.integer("cores_per_device");
  profile.topology.devices = topology.integer("devices");
  profile.topology.memory_per_core_gib = topology.number("memory_per_core_gib");
  profile.topology.reserve_gib = topology.number("reserve_gib");
  profile.topology.degrees = topology.list<int>("degrees");
  profile.topology.max_cores = topology.integer("max_cores");
  if (!topology.error().empty()) return invalid_argument(topology.error());
  TableReader pinning(pinning_table ? *pinning_table : kEmpty, "pinning.", source.string());
  profile.pinning_env = pinning.string("env");
  profile.pinning_syntax = pinning.string("syntax");
  if (!pinning.error().empty()) return invalid_argument(pinning.error());
  TableReader memory(memory_table ? *memory_table : kEmpty, "memory.", source.string());
  profile.peak_memory = memory.string("peak");
  if (!memory.error().empty()) return invalid_argument(memory.error());
  TableReader perf(perf_table ? *perf_table : kEmpty, "perf.", source.string());
  profile.eager_max_s = perf.number("eager_max_s", kDefaultEagerMaxSeconds);
  if (perf.error().empty() && !(profile.eager_max_s > 0)) perf.fail("eager_max_s", "must be > 0");
  if (!perf.error().empty()) return invalid_argument(perf.error());
  TableReader cache(cache_table ? *cache_table : kEmpty, "cache.", source.string());
  profile.cache_env = cache.string("env", false);
  profile.cache_default_dir = cache.string("default_dir", false);
  profile.cache_local_env = cache.string("local_env", false);
  profile.cache_prefetch = cache.string("prefetch", false);
  if (!cache.error().empty()) return invalid_argument(cache.error());

  // Values that end up in run.py or the environment are checked here, once.
  auto bad = [&](std::string_view key, const std::string& why) {
    return invalid_argument(fmt::format("{}: {} {}", source.string(), key, why));
  };
  if (profile.name.empty() ||
      !std::all_of(profile.name.begin(), profile.name.end(), [](unsigned char c) {
        return std::islower(c) || std::isdigit(c) || c == '-' || c == '_';
      })) {
    return bad("name", fmt::format("{} must be lower-case letters, digits, '-' or '_'",
                                   quote_for_message(profile.name)));
  }
  static const std::set<std::string> kDtypes = {"float32", "bfloat16", "float16"};
  if (!kDtypes.contains(profile.dtype)) {
    return bad("dtype", fmt::format("{} is not float32, bfloat16 or float16",
                                    quote_for_message(profile.dtype)));
  }
  if (!profile.compile_backend.empty()) {
    const auto colon = profile.compile_backend.find(':');
    const bool ok = colon == std::string::npos
                        ? is_identifier_path(profile.compile_backend)
                        : is_identifier_path(profile.compile_backend.substr(0, colon)) &&
                              is_identifier_path(profile.compile_backend.substr(colon + 1));
    if (!ok) {
      return bad("compile_backend", fmt::format("{} is neither a backend name nor module:function",
                                                quote_for_message(profile.compile_backend)));
    }
  }
  for (const auto& module : profile.imports) {
    if (!is_identifier_path(module))
      return bad("import", fmt::format("{} is not a module name", quote_for_message(module)));
  }
  for (const auto& [key, name] :
       {std::pair{"compile_artifacts_env", &profile.compile_artifacts_env},
        std::pair{"cache.env", &profile.cache_env},
        std::pair{"cache.local_env", &profile.cache_local_env}}) {
    if (!name->empty() && !is_variable_name(*name)) {
      return bad(key,
                 fmt::format("{} is not an environment variable's name", quote_for_message(*name)));
    }
  }
  // The default folder is written into run.py and, in double quotes, into a shell command.
  const std::string& default_dir = profile.cache_default_dir;
  if (!default_dir.empty() && (!fs::path(default_dir).is_absolute() ||
                               default_dir.find_first_of("\"\\$`\n") != std::string::npos)) {
    return bad("cache.default_dir",
               fmt::format("{} must be an absolute path without '\"', '\\', '$' or '`'",
                           quote_for_message(default_dir)));
  }
  if (profile.cache_prefetch.find(kCacheDirPlaceholder) != std::string::npos &&
      default_dir.empty()) {
    return bad("cache.prefetch", "names {cache_dir} but cache.default_dir is not set");
  }
  if (profile.peak_memory != "rss" && profile.peak_memory != "cuda" &&
      profile.peak_memory != "neuron") {
    return bad("memory.peak", "must be rss, cuda or neuron");
  }
  if (!is_pinning_syntax(profile.pinning_syntax)) {
    return bad("pinning.syntax",
               fmt::format("{} is not {}", quote_for_message(profile.pinning_syntax),
                           fmt::join(pinning_syntaxes(), ", ")));
  }
  auto& degrees = profile.topology.degrees;
  if (degrees.empty() || degrees.front() < 1 || !std::is_sorted(degrees.begin(), degrees.end()) ||
      std::adjacent_find(degrees.begin(), degrees.end()) != degrees.end()) {
    return bad("topology.degrees", "must be distinct positive integers in increasing order");
  }
  if (profile.topology.memory_per_core_gib <= 0 || profile.topology.reserve_gib < 0 ||
      profile.topology.reserve_gib >= profile.topology.memory_per_core_gib) {
    return bad("topology",
               "needs memory_per_core_gib > 0 and 0 <= reserve_gib < memory_per_core_gib");
  }
  return profile;
}

Result<BackendProfile> load_profile(const fs::path& path) {
  auto text = read_file(path);
  if (!text.ok())
    return not_found(fmt::format("backend profile {}: {}", path.string(), text.error().message()));
  return parse_profile(*text, path);
}

std::vector<fs::path> profile_search_path() {
  std::vector<fs::path> folders;
  if (const char* env = std::getenv("CANRUN_BACKENDS"); env != nullptr && *env != '\0') {
    std::string_view rest = env;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      if (colon != 0) folders.emplace_back(std::string(rest.substr(0, colon)));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  const fs::path exe_dir = executable_dir();
  folders.push_back(exe_dir.parent_path() / "backends");
  folders.push_back(exe_dir.parent_path() / "share" / "canrun" / "backends");
  return folders;
}

Result<BackendProfile> find_profile(std::string_view name_or_path) {
  if (name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".toml")) {
    return load_profile(fs::path(name_or_path));
  }
  if (name_or_path.empty() ||
      !std::all_of(name_or_path.begin(), name_or_path.end(),
                   [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; })) {
    return invalid_argument(fmt::format("backend {} is neither a profile name nor a .toml path",
                                        quote_for_message(name_or_path)));
  }
  std::vector<std::string> searched;
  for (const fs::path& folder : profile_search_path()) {
    const fs::path candidate = folder / (std::string(name_or_path) + ".toml");
    if (fs::is_regular_file(candidate)) return load_profile(candidate);
    searched.push_back(folder.string());
  }
  return not_found(fmt::format("no backend profile {} (looked for {}.toml in {})",
                               quote_for_message(name_or_path), name_or_path,
                               fmt::join(searched, ", ")));
}

Status override_memory(Topology& topology, double memory_per_core_gib, double reserve_gib) {
  if (memory_per_core_gib < 0) return invalid_argument("--memory-per-core must be positive");
  if (memory_per_core_gib > 0) topology.memory_per_core_gib = memory_per_core_gib;
  if (reserve_gib >= 0) topology.reserve_gib = reserve_gib;
  if (topology.reserve_gib >= topology.memory_per_core_gib) {
    return invalid_argument(
        fmt::format("the reserve ({:g} GiB) leaves nothing of {:g} GiB per core",
                    topology.reserve_gib, topology.memory_per_core_gib));
  }
  return ok_status();
}

}  // namespace canrun::backend
