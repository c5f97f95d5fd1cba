#include "serve/kept_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dataset/dataset.h"

namespace canrun::serve {
namespace {

namespace fs = std::filesystem;
using dataset::VerdictRow;

bool is_file(const fs::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool is_folder(const fs::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

//! The image roles the row's output_files names.
std::vector<std::string_view> named_images(const VerdictRow& row) {
  std::vector<std::string_view> roles;
  if (!row.output_files) return roles;
  const auto named = nlohmann::json::parse(*row.output_files, nullptr, false);
  if (!named.is_object()) return roles;
  for (const std::string_view role : dataset::kImageRoles) {
    if (named.contains(role)) roles.push_back(role);
  }
  return roles;
}

//! The dataset's role of an image File, and back (KeptFiles::kImageFiles is in role order).
template <typename File, std::size_t N>
std::string_view role_of(const File (&files)[N], File file) {
  for (std::size_t idx = 0; idx < N; ++idx) {
    if (files[idx] == file) return dataset::kImageRoles[idx];
  }
  return {};
}

}  // namespace

std::optional<fs::path> KeptFiles::path_of(const VerdictRow& row, File file) const {
  // Never a path the row wrote: the dataset's layout, from the row's stack, model and task.
  auto relative = file == kLog ? dataset::log_relative_path(row)
                               : dataset::image_relative_path(row, role_of(kImageFiles, file));
  if (!relative.ok()) return std::nullopt;
  return root_ / *relative;
}

KeptFiles KeptFiles::find(const fs::path& dataset_root, const dataset::StackKey& key,
                          const std::vector<VerdictRow>& rows) {
  KeptFiles out;
  if (dataset_root.empty()) return out;
  out.root_ = dataset_root;
  // A stack's files all lie in its own folder of logs/ and of images/: without the folder, no
  // row's file is looked for, and the folder is watched instead.
  const fs::path logs_folder = dataset_root / "logs" / key.stem();
  const fs::path images_folder = dataset_root / "images" / key.stem();
  const bool has_logs = is_folder(logs_folder);
  const bool has_images = is_folder(images_folder);
  bool logs_wanted = false;
  bool images_wanted = false;
  const auto look = [&](std::size_t row_idx, File file) {
    const auto path = out.path_of(rows[row_idx], file);
    if (!path) return;
    if (is_file(*path)) {
      if (out.found_.empty()) out.found_.resize(rows.size());
      out.found_[row_idx] |= file;
    } else {
      out.missing_.push_back({static_cast<std::uint32_t>(row_idx), file});
    }
  };
  for (std::size_t row_idx = 0; row_idx < rows.size(); ++row_idx) {
    const VerdictRow& row = rows[row_idx];
    if (dataset::keeps_log(row)) {
      logs_wanted = true;
      if (has_logs) look(row_idx, kLog);
    }
    for (const std::string_view role : named_images(row)) {
      images_wanted = true;
      for (const File file : kImageFiles) {
        if (has_images && role_of(kImageFiles, file) == role) look(row_idx, file);
      }
    }
  }
  if (logs_wanted && !has_logs) out.missing_folders_.push_back(logs_folder);
  if (images_wanted && !has_images) out.missing_folders_.push_back(images_folder);
  return out;
}

std::optional<fs::path> KeptFiles::log(const std::vector<VerdictRow>& rows,
                                       std::size_t row_idx) const {
  if (row_idx >= found_.size() || !(found_[row_idx] & kLog)) return std::nullopt;
  return path_of(rows[row_idx], kLog);
}

KeptFiles::Images KeptFiles::images(const std::vector<VerdictRow>& rows,
                                    std::size_t row_idx) const {
  Images out;
  if (row_idx >= found_.size()) return out;
  for (const File file : kImageFiles) {
    if (!(found_[row_idx] & file)) continue;
    if (auto path = path_of(rows[row_idx], file)) {
      out.emplace(role_of(kImageFiles, file), std::move(*path));
    }
  }
  return out;
}

bool KeptFiles::appeared(const std::vector<VerdictRow>& rows) const {
  // What find() would now find: a folder that stands in a file's place is still no file.
  return std::any_of(missing_folders_.begin(), missing_folders_.end(), is_folder) ||
         std::any_of(missing_.begin(), missing_.end(), [&](const Missing& missing) {
           const auto path = path_of(rows[missing.row_idx], missing.file);
           return path && is_file(*path);
         });
}

}  // namespace canrun::serve
