// A results dataset on disk (SPEC.md §8):
//   DATASET/README.md        the dataset card, regenerated after every write
//   DATASET/data/<stack>.parquet   one file per stack, all in one schema version
//   DATASET/logs/<stack>/<model id>/<task>.log   the bounded log of a non-PASS run
//   DATASET/.locks/          flock files that serialise writers of the same stack
//
// Thread and process safety: any number of processes and threads may upsert and read at
// once. Upserts of one stack are serialised by a lock file and every file is replaced
// atomically, so readers (which take no lock) see the old file or the new one, never a part.
//
// Schema versions (schema.h): readers take files of every version up to the current one. Since
// `pd.read_parquet(data/)` takes its schema from one file, every file of a folder is kept at
// one version: an upsert writes its file in the current version and upgrades the folder's
// older files too, and migrate() upgrades them all.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "dataset/parquet_codec.h"
#include "dataset/stack_key.h"
#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! One stack file read whole.
struct StackTable {
  StackKey key;
  std::filesystem::path path;
  std::vector<VerdictRow> rows;
  FileSchema schema;  //!< the file's schema version
};

//! A file under data/ that is not a good stack file, and why.
struct FileProblem {
  std::filesystem::path path;
  std::string problem;
};

//! The schema version of one stack file, or why it could not be read.
struct FileVersion {
  std::filesystem::path path;
  std::optional<FileSchema> schema;  //!< nullopt when the file could not be read
  std::string problem;               //!< why not; empty when schema is set
};

//! What migrate() did with one entry of data/.
struct MigrationStep {
  std::filesystem::path path;
  std::optional<FileSchema> from;  //!< the file's version before; nullopt when unreadable
  bool rewritten = false;          //!< rewritten in the current version
  std::string problem;             //!< why it was left untouched; empty when it was not
};

//! Everything under data/ in memory: the good files, and what was wrong with the others.
struct DatasetSnapshot {
  std::vector<StackTable> stacks;  //!< sorted by stack key
  std::vector<FileProblem> problems;
};

//! The most of a run's log kept beside the dataset (its end: where the failure is).
inline constexpr std::size_t kMaxLogBytes = 256 * 1024;

//! logs/<stack stem>/<owner>/<name>/<task>.log, relative to the dataset folder.
Result<std::filesystem::path> log_relative_path(const VerdictRow& row);

//! The largest output image kept (a PNG of 1024 × 1024 is 1–3 MiB); a larger one is left out.
inline constexpr std::uintmax_t kMaxImageBytes = 8 * 1024 * 1024;
//! The roles of a task's kept files, as `output_files` names them: the backend's output image,
//! the CPU reference's, and the input the recipe made (the image a classifier was shown, PNG;
//! the clip a speech recognizer heard, WAV). They all live under images/.
inline constexpr std::string_view kImageRole = "image";
inline constexpr std::string_view kReferenceImageRole = "reference_image";
inline constexpr std::string_view kInputImageRole = "input_image";
inline constexpr std::string_view kInputAudioRole = "input_audio";
inline constexpr std::string_view kImageRoles[] = {kImageRole, kReferenceImageRole, kInputImageRole,
                                                   kInputAudioRole};

//! A role's file extension ("wav" for input_audio, else "png") and media type ("audio/wav",
//! "image/png").
std::string_view output_file_extension(std::string_view role);
std::string_view output_file_media_type(std::string_view role);

//! images/<stack stem>/<owner>/<name>/<task>.<role>.<extension>, relative to the dataset folder.
Result<std::filesystem::path> image_relative_path(const VerdictRow& row, std::string_view role);

//! Sets row.output_files to the dataset paths of `images` (role → a PNG file) that
//! DatasetDir::record_images keeps: each present, of at most kMaxImageBytes, of a known role.
Status name_output_files(VerdictRow& row,
                         const std::map<std::string, std::filesystem::path>& images);

//! Whether a row's run keeps its log beside the dataset: failures only (not PASS, not
//! EXCLUDED); DatasetDir::record_log writes it, the Space links it.
bool keeps_log(const VerdictRow& row);

//! The file that marks a census dataset (src/census writes it): its card says what a census
//! verdict means.
inline constexpr std::string_view kCensusMarker = "census.json";

class DatasetDir {
 public:
  explicit DatasetDir(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path data_dir() const { return root_ / "data"; }
  std::filesystem::path file_of(const StackKey& key) const { return data_dir() / key.file_name(); }

  //! Merges `rows` into the file of their stack, keyed by (model_id, task): a row replaces the
  //! stored one unless the stored one started later. Every row must pass check_row and belong
  //! to one stack; otherwise nothing is written. An existing file that cannot be read (or is of
  //! a newer schema version) is not overwritten (its rows would be lost): the error says so.
  //! The file is written in the current schema version, whatever version it had; then every
  //! other stack file of an older version is upgraded too, so the folder keeps one version
  //! (one that cannot be upgraded is logged and left as it is). Regenerates README.md.
  Status upsert(std::vector<VerdictRow> rows) const;

  //! The rows of one stack; kNotFound when it has no file.
  Result<std::vector<VerdictRow>> read_stack(const StackKey& key) const;

  //! Loads every file under data/, in parallel. Bad files are listed, not fatal.
  DatasetSnapshot load_all() const;

  //! The stacks with a file under data/ (by name: the file is not read), sorted.
  std::vector<StackKey> stacks() const;

  //! Checks every entry under data/: name, Parquet, schema, and each row (check_row, the
  //! row's stack matching the file name, no duplicate (model_id, task)). Problems per file.
  std::vector<FileProblem> validate() const;

  //! The schema version of every stack file under data/, read from footers only, sorted by
  //! path. Entries that are not stack files are left out (validate() reports them).
  std::vector<FileVersion> schema_versions() const;

  //! Rewrites every stack file of an older schema version, or without a recorded version, in
  //! the current version, atomically each under its stack's lock. Idempotent. A file that
  //! cannot be read, is of a newer version or is not a stack file is left untouched and
  //! reported. One step per entry of data/, sorted by path; regenerates README.md when it
  //! rewrote anything.
  std::vector<MigrationStep> migrate() const;

  //! Keeps the log of the run behind `row` (a run's stdout and stderr, see run::run_log) when
  //! the row is a failure (not PASS, not EXCLUDED) and the log is not empty: its last
  //! kMaxLogBytes, made valid UTF-8, written atomically. Otherwise removes a log kept for an
  //! earlier verdict of the same (stack, model, task), which no longer applies.
  Status record_log(const VerdictRow& row, std::string_view log) const;

  //! Copies the images `row.output_files` names from `images` (role → PNG file, as
  //! name_output_files chose them) to their places under images/, and removes the images of an
  //! earlier verdict of the same (stack, model, task) that the row no longer names.
  Status record_images(const VerdictRow& row,
                       const std::map<std::string, std::filesystem::path>& images) const;

  //! Writes README.md from what is under data/ now.
  Status write_card() const;

 private:
  //! What upgrade_file did: the version the file had, and whether it rewrote it.
  struct Upgrade {
    FileSchema before;
    bool rewritten = false;
  };
  //! Under the stack's lock, rewrites its file in the current schema version when it is older
  //! (or, with `record_version`, when its version is not recorded).
  Result<Upgrade> upgrade_file(const StackKey& key, bool record_version) const;

  std::filesystem::path root_;
};

}  // namespace canrun::dataset
