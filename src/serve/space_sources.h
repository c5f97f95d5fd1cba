// Where the Space's index comes from, and how it is (re)built: the dataset's stack files, a
// census dataset's (served beside it: the Architectures view, the census line of untested
// models), the rankings snapshots, the catalog (curated list, exclusions), the backend profiles
// (cache prefetch commands, topologies) and the stack answers behind predicted plans.
//
// Reading a stack file includes finding the logs and images the dataset keeps beside its rows
// (kept_files.h), so the index knows them without looking at the disk.
//
// Reloads are incremental: only stack files whose (size, mtime, inode) changed are read again,
// the others are shared with the previous index. Of an unchanged stack, only the kept files
// that were missing are looked for again (a writer keeps them just after the row); when one
// has appeared, the stack's rows are copied beside the files found again. A file that cannot
// be read on a reload (a writer's temp file, a file replaced mid-read) keeps its previous
// version and is retried at the next poll, so a reload never turns a good answer into an error.
//
// Thread safety: one thread at a time (the service's reload thread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/result.h"
#include "serve/space_index.h"

namespace canrun::serve {

struct SourcePaths {
  std::filesystem::path dataset;                  //!< DATASET (holds data/)
  std::optional<std::filesystem::path> census;    //!< a census dataset (canrun census --out)
  std::optional<std::filesystem::path> rankings;  //!< DIR of <task>__<sort>.json
  std::optional<std::filesystem::path> catalog;   //!< DIR of selected.toml, exclusions.toml
  std::filesystem::path backends = "backends";    //!< DIR of <backend>.toml
  //! The stack answers canrun keeps (StackPython's cache: transformers-<v>/parallel/*.json),
  //! for predicted plans; absent: predictions leave the parallelism open.
  std::optional<std::filesystem::path> stack_cache;
};

class SpaceSources {
 public:
  explicit SpaceSources(SourcePaths paths) : paths_(std::move(paths)) {}

  //! The first build: every stack file (in parallel), rankings, catalog, profiles. A missing
  //! dataset folder or an unreadable catalog file is an error; a bad stack file is logged.
  Result<std::shared_ptr<const SpaceIndex>> load();

  //! A new index when anything changed since the last build, else nullptr.
  std::shared_ptr<const SpaceIndex> reload_if_changed();

  std::uint64_t reloads() const { return reloads_; }
  std::uint64_t reload_failures() const { return reload_failures_; }
  double last_load_seconds() const { return last_load_seconds_; }

 private:
  struct FileStamp {
    std::uintmax_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t inode = 0;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
  };
  struct StackFile {
    FileStamp stamp;
    std::shared_ptr<const StackVerdicts> verdicts;
  };
  //! A dataset folder's stack files, by file name.
  struct DatasetFiles {
    std::filesystem::path root;
    std::map<std::string, StackFile> stacks;
    std::vector<std::shared_ptr<const StackVerdicts>> verdicts() const;
  };

  static std::map<std::string, FileStamp> list_stack_files(const std::filesystem::path& root);
  //! Reads every stack file of `files.root` (in parallel, with their kept files).
  static void load_stacks(DatasetFiles& files);
  //! Reads again the stack files that changed; whether any did.
  bool reload_stacks(DatasetFiles& files);
  std::string side_files_signature() const;
  Status load_side_inputs();
  std::shared_ptr<const SpaceIndex> build_index();

  SourcePaths paths_;
  DatasetFiles dataset_;
  std::optional<DatasetFiles> census_;
  std::vector<RankingSnapshot> rankings_;
  CatalogFacts catalog_;
  std::map<std::string, std::string> prefetch_templates_;
  std::map<std::string, backend::Topology> topologies_;
  stack::ParallelSupportTable parallel_support_;
  std::string side_signature_;
  std::uint64_t reloads_ = 0;
  std::uint64_t reload_failures_ = 0;
  double last_load_seconds_ = 0;
};

}  // namespace canrun::serve
