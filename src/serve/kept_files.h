// KeptFiles: which of a stack's rows have files kept beside the dataset (dataset/dataset.h):
// the log of a failure (logs/...) and the output images a row names (images/...). They are
// looked for once, when the stack file is read, so the Space's queries know which exist without
// looking at the disk. It holds a few bits per row; a file's path follows from its row by the
// dataset's layout (dataset::log_relative_path), and its bytes stay on disk (a log is up to
// 256 KiB, an image up to 8 MiB) for the one query that serves each.
//
// The dataset's writers keep a row's log and images just after the row itself (upsert, then
// record_log and record_images), so a stack read in between finds them missing: appeared()
// tells the reloader when a file looked for then is there now.
//
// Thread safety: immutable after find(); const methods may be called from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dataset/stack_key.h"
#include "dataset/verdict_row.h"

namespace canrun::serve {

class KeptFiles {
 public:
  //! role ("image", "reference_image", "input_image", "input_audio") → the file's path.
  using Images = std::map<std::string, std::filesystem::path, std::less<>>;

  KeptFiles() = default;  //!< nothing kept

  //! Looks under `dataset_root` for the files of `rows`, the rows of stack `key`: the log of
  //! each failure (not PASS, not EXCLUDED) and each image its output_files names. One stat per
  //! such file, none when the stack has no logs/ or images/ folder.
  static KeptFiles find(const std::filesystem::path& dataset_root, const dataset::StackKey& key,
                        const std::vector<dataset::VerdictRow>& rows);

  // The methods below take `rows`, the rows given to find(), and an index into them.

  //! The path of the row's kept log, or nullopt when none was found.
  std::optional<std::filesystem::path> log(const std::vector<dataset::VerdictRow>& rows,
                                           std::size_t row_idx) const;
  //! The paths of the row's kept images; empty when none was found.
  Images images(const std::vector<dataset::VerdictRow>& rows, std::size_t row_idx) const;

  //! Whether a file that find() looked for and did not find is there now: looks at the disk,
  //! one stat per such file (one per folder when the folder was missing).
  bool appeared(const std::vector<dataset::VerdictRow>& rows) const;

 private:
  //! The files a row may have, as bits.
  enum File : std::uint8_t {
    kLog = 1,
    kImage = 2,
    kReferenceImage = 4,
    kInputImage = 8,
    kInputAudio = 16
  };
  //! The File of an image role (dataset::kImageRoles), in their order.
  static constexpr File kImageFiles[] = {kImage, kReferenceImage, kInputImage, kInputAudio};
  //! A file of a row looked for and not found.
  struct Missing {
    std::uint32_t row_idx;
    File file;
  };

  //! The path of `file` of `row` under the root; nullopt when the row cannot have one.
  std::optional<std::filesystem::path> path_of(const dataset::VerdictRow& row, File file) const;

  std::filesystem::path root_;
  std::vector<std::uint8_t> found_;  //!< per row, the File bits found; empty: none at all
  std::vector<Missing> missing_;     //!< looked for in a folder that was there, not found
  //! The stack's logs/ or images/ folders that were missing while a row could have a file
  //! there (its files were not looked for).
  std::vector<std::filesystem::path> missing_folders_;
};

}  // namespace canrun::serve
