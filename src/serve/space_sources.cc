#include "serve/space_sources.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>

#include "backend/profile.h"
#include "catalog/exclusions.h"
#include "catalog/selected_list.h"
#include "core/atomic_file.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/text.h"
#include "dataset/dataset.h"

namespace canrun::serve {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

//! "size:mtime:inode" of a file, or "-" when it does not exist.
std::string stamp_text(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "-";
  return fmt::format("{}:{}.{}:{}", info.st_size, info.st_mtim.tv_sec, info.st_mtim.tv_nsec,
                     info.st_ino);
}

std::string folder_signature(const fs::path& dir, std::string_view extension) {
  std::map<std::string, std::string> stamps;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.') || !name.ends_with(extension)) continue;
    stamps.emplace(name, stamp_text(it->path()));
  }
  std::string out;
  for (const auto& [name, stamp] : stamps) out += name + "=" + stamp + ";";
  return out;
}

}  // namespace

std::map<std::string, SpaceSources::FileStamp> SpaceSources::list_stack_files(
    const fs::path& root) {
  std::map<std::string, FileStamp> out;
  const fs::path data_dir = root / "data";
  std::error_code error;
  for (fs::directory_iterator it(data_dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.') || !name.ends_with(".parquet")) continue;
    struct stat info {};
    if (::stat(it->path().c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    out.emplace(name, FileStamp{static_cast<std::uintmax_t>(info.st_size),
                                static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 +
                                    info.st_mtim.tv_nsec,
                                static_cast<std::uint64_t>(info.st_ino)});
  }
  return out;
}

std::vector<std::shared_ptr<const StackVerdicts>> SpaceSources::DatasetFiles::verdicts() const {
  std::vector<std::shared_ptr<const StackVerdicts>> out;
  for (const auto& [name, file] : stacks) out.push_back(file.verdicts);
  return out;
}

void SpaceSources::load_stacks(DatasetFiles& files) {
  // Stamps first: a file replaced while load_all reads it shows a new stamp at the next poll.
  const auto stamps = list_stack_files(files.root);
  dataset::DatasetSnapshot snapshot = dataset::DatasetDir(files.root).load_all();
  for (const auto& problem : snapshot.problems) {
    log::warning("{}: {}", problem.path.string(), problem.problem);
  }
  // The kept logs and images: a stat per file a row may have, on every core like the reads.
  std::vector<KeptFiles> kept(snapshot.stacks.size());
  parallel_for(snapshot.stacks.size(), [&](std::size_t idx) {
    const dataset::StackTable& table = snapshot.stacks[idx];
    kept[idx] = KeptFiles::find(files.root, table.key, table.rows);
  });
  for (std::size_t idx = 0; idx < snapshot.stacks.size(); ++idx) {
    dataset::StackTable& table = snapshot.stacks[idx];
    const std::string name = table.path.filename().string();
    const auto stamp = stamps.find(name);
    files.stacks[name] =
        StackFile{stamp == stamps.end() ? FileStamp{} : stamp->second,
                  std::make_shared<const StackVerdicts>(std::move(table.key), std::move(table.rows),
                                                        std::move(kept[idx]))};
  }
}

bool SpaceSources::reload_stacks(DatasetFiles& files) {
  bool changed = false;
  const auto stamps = list_stack_files(files.root);
  for (auto it = files.stacks.begin(); it != files.stacks.end();) {
    if (!stamps.contains(it->first)) {
      it = files.stacks.erase(it);
      changed = true;
    } else {
      ++it;
    }
  }
  const dataset::DatasetDir dataset(files.root);
  for (const auto& [name, stamp] : stamps) {
    const auto known = files.stacks.find(name);
    if (known != files.stacks.end() && known->second.stamp == stamp) {
      // The same rows; a log or image written just after them is found now.
      const StackVerdicts& same = *known->second.verdicts;
      if (same.kept_file_appeared()) {
        known->second.verdicts = std::make_shared<const StackVerdicts>(
            same.key(), same.rows(), KeptFiles::find(files.root, same.key(), same.rows()));
        changed = true;
      }
      continue;
    }
    auto key = dataset::StackKey::parse(name);
    if (!key.ok()) continue;
    auto rows = dataset.read_stack(*key);
    if (!rows.ok()) {
      ++reload_failures_;
      log::warning("reload: keeping the previous version of {}: {}", name, rows.error().message());
      continue;
    }
    // The file may have been replaced while it was read: keep the stamp seen before reading,
    // so that a newer version is read at the next poll.
    KeptFiles kept = KeptFiles::find(files.root, *key, *rows);
    files.stacks[name] = StackFile{stamp, std::make_shared<const StackVerdicts>(
                                              std::move(*key), std::move(*rows), std::move(kept))};
    changed = true;
  }
  return changed;
}

std::string SpaceSources::side_files_signature() const {
  std::string out;
  if (paths_.rankings) out += "rankings:" + folder_signature(*paths_.rankings, ".json") + "|";
  if (paths_.catalog) {
    out += "selected:" + stamp_text(*paths_.catalog / "selected.toml") + "|";
    out += "exclusions:" + stamp_text(*paths_.catalog / "exclusions.toml") + "|";
  }
  out += "backends:" + folder_signature(paths_.backends, ".toml");
  if (paths_.stack_cache) {
    // A campaign that probes a new model type adds a file to its version's parallel/ folder.
    std::error_code error;
    for (fs::directory_iterator it(*paths_.stack_cache, error), end; !error && it != end;
         it.increment(error)) {
      out += "|" + it->path().filename().string() + ":" +
             folder_signature(it->path() / "parallel", ".json");
    }
  }
  return out;
}

Status SpaceSources::load_side_inputs() {
  std::vector<RankingSnapshot> rankings;
  if (paths_.rankings) {
    if (!fs::is_directory(*paths_.rankings)) {
      return not_found(fmt::format("--rankings folder {} does not exist",
                                   quote_for_message(paths_.rankings->string())));
    }
    RankingsLoad loaded = load_rankings_dir(*paths_.rankings);
    for (const std::string& problem : loaded.problems) log::warning("rankings: {}", problem);
    rankings = std::move(loaded.snapshots);
  }
  CatalogFacts catalog;
  if (paths_.catalog) {
    if (!fs::is_directory(*paths_.catalog)) {
      return not_found(fmt::format("--catalog folder {} does not exist",
                                   quote_for_message(paths_.catalog->string())));
    }
    const fs::path selected_path = *paths_.catalog / "selected.toml";
    if (fs::exists(selected_path)) {
      CANRUN_ASSIGN_OR_RETURN(const catalog::SelectedList selected,
                              catalog::SelectedList::load(selected_path));
      for (const std::string& task : selected.tasks()) {
        auto& models = catalog.selected[task];
        for (const catalog::SelectedModel& model : selected.for_task(task)) {
          models.push_back({model.id.str(), model.note});
        }
      }
    }
    const fs::path exclusions_path = *paths_.catalog / "exclusions.toml";
    if (fs::exists(exclusions_path)) {
      CANRUN_ASSIGN_OR_RETURN(catalog::Exclusions exclusions,
                              catalog::Exclusions::load(exclusions_path));
      auto shared = std::make_shared<const catalog::Exclusions>(std::move(exclusions));
      catalog.exclusion = [shared](const ModelId& id) -> std::optional<CatalogExclusion> {
        auto found = shared->match(id);
        if (!found) return std::nullopt;
        return CatalogExclusion{found->reason, found->why};
      };
    }
  }
  std::map<std::string, std::string> templates;
  std::map<std::string, backend::Topology> topologies;
  std::error_code error;
  for (fs::directory_iterator it(paths_.backends, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() != ".toml") continue;
    auto profile = backend::load_profile(it->path());
    if (!profile.ok()) {
      log::warning("{}", profile.error().message());
      continue;
    }
    const std::string name = it->path().stem().string();
    // {cache_dir} filled from the profile now; a row's compiler version is filled per page.
    if (!profile->cache_prefetch.empty()) templates.emplace(name, profile->prefetch_template());
    topologies.emplace(name, profile->topology);
  }
  if (paths_.stack_cache)
    parallel_support_ = stack::read_cached_parallel_support(*paths_.stack_cache);
  rankings_ = std::move(rankings);
  catalog_ = std::move(catalog);
  prefetch_templates_ = std::move(templates);
  topologies_ = std::move(topologies);
  return ok_status();
}

std::shared_ptr<const SpaceIndex> SpaceSources::build_index() {
  IndexInputs inputs;
  inputs.stacks = dataset_.verdicts();
  if (census_) inputs.census = census_->verdicts();
  inputs.rankings = rankings_;
  inputs.catalog = catalog_;
  inputs.prefetch_templates = prefetch_templates_;
  inputs.topologies = topologies_;
  inputs.parallel_support = parallel_support_;
  return SpaceIndex::build(std::move(inputs));
}

Result<std::shared_ptr<const SpaceIndex>> SpaceSources::load() {
  const auto started = Clock::now();
  if (!fs::is_directory(paths_.dataset)) {
    return not_found(fmt::format("dataset folder {} does not exist",
                                 quote_for_message(paths_.dataset.string())));
  }
  if (paths_.census && !fs::is_directory(*paths_.census / "data")) {
    return not_found(
        fmt::format("census dataset folder {} does not exist or holds no data/ "
                    "(canrun census --out makes one)",
                    quote_for_message(paths_.census->string())));
  }
  side_signature_ = side_files_signature();
  CANRUN_RETURN_IF_ERROR(load_side_inputs());
  dataset_ = DatasetFiles{paths_.dataset, {}};
  load_stacks(dataset_);
  if (paths_.census) {
    census_ = DatasetFiles{*paths_.census, {}};
    load_stacks(*census_);
  }
  auto index = build_index();
  last_load_seconds_ = std::chrono::duration<double>(Clock::now() - started).count();
  return index;
}

std::shared_ptr<const SpaceIndex> SpaceSources::reload_if_changed() {
  const auto started = Clock::now();
  bool changed = false;
  if (std::string signature = side_files_signature(); signature != side_signature_) {
    if (auto status = load_side_inputs(); status.ok()) {
      side_signature_ = std::move(signature);
      changed = true;
    } else {
      ++reload_failures_;
      log::warning("reload: keeping the previous rankings and catalog: {}",
                   status.error().message());
    }
  }
  changed = reload_stacks(dataset_) || changed;
  if (census_) changed = reload_stacks(*census_) || changed;
  if (!changed) return nullptr;
  auto index = build_index();
  ++reloads_;
  last_load_seconds_ = std::chrono::duration<double>(Clock::now() - started).count();
  return index;
}

}  // namespace canrun::serve
