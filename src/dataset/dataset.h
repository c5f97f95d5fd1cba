// A results dataset on disk (SPEC.md §8):
//   DATASET/README.md        the dataset card, regenerated after every write
//   DATASET/data/<stack>.parquet   one file per stack, all in one schema
//   DATASET/.locks/          flock files that serialise writers of the same stack
//
// Thread and process safety: any number of processes and threads may upsert and read at
// once. Upserts of one stack are serialised by a lock file and every file is replaced
// atomically, so readers (which take no lock) see the old file or the new one, never a part.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "dataset/stack_key.h"
#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! One stack file read whole.
struct StackTable {
  StackKey key;
  std::filesystem::path path;
  std::vector<VerdictRow> rows;
};

//! A file under data/ that is not a good stack file, and why.
struct FileProblem {
  std::filesystem::path path;
  std::string problem;
};

//! Everything under data/ in memory: the good files, and what was wrong with the others.
struct DatasetSnapshot {
  std::vector<StackTable> stacks;  //!< sorted by stack key
  std::vector<FileProblem> problems;
};

class DatasetDir {
 public:
  explicit DatasetDir(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path data_dir() const { return root_ / "data"; }
  std::filesystem::path file_of(const StackKey& key) const { return data_dir() / key.file_name(); }

  //! Merges `rows` into the file of their stack, keyed by (model_id, task): a row replaces the
  //! stored one unless the stored one started later. Every row must pass check_row and belong
  //! to one stack; otherwise nothing is written. An existing file that cannot be read is not
  //! overwritten (its rows would be lost): the error says so. Regenerates README.md.
  Status upsert(std::vector<VerdictRow> rows) const;

  //! The rows of one stack; kNotFound when it has no file.
  Result<std::vector<VerdictRow>> read_stack(const StackKey& key) const;

  //! Loads every file under data/, in parallel. Bad files are listed, not fatal.
  DatasetSnapshot load_all() const;

  //! Checks every entry under data/: name, Parquet, schema, and each row (check_row, the
  //! row's stack matching the file name, no duplicate (model_id, task)). Problems per file.
  std::vector<FileProblem> validate() const;

  //! Writes README.md from what is under data/ now.
  Status write_card() const;

 private:
  std::filesystem::path root_;
};

}  // namespace canrun::dataset
