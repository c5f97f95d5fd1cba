// StackVerdicts: one stack file's rows with a lookup by (model id, task), and the files the
// dataset keeps beside them (kept_files.h). Shared between successive indexes while its file is
// unchanged.
//
// Thread safety: immutable after construction; const methods may be called from many threads.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dataset/stack_key.h"
#include "dataset/verdict_row.h"
#include "serve/kept_files.h"

namespace canrun::serve {

class StackVerdicts {
 public:
  //! `kept`: what KeptFiles::find found for these rows; none by default.
  StackVerdicts(dataset::StackKey key, std::vector<dataset::VerdictRow> rows, KeptFiles kept = {});

  const dataset::StackKey& key() const { return key_; }
  const std::vector<dataset::VerdictRow>& rows() const { return rows_; }
  //! The row of (model, task), or nullptr.
  const dataset::VerdictRow* find(std::string_view model_id, std::string_view task) const;

  //! The path of the kept log of `row`, one of rows(), or nullopt.
  std::optional<std::filesystem::path> kept_log(const dataset::VerdictRow& row) const {
    return kept_.log(rows_, index_of(row));
  }
  //! The paths of the kept images of `row`, one of rows(); empty when none.
  KeptFiles::Images kept_images(const dataset::VerdictRow& row) const {
    return kept_.images(rows_, index_of(row));
  }
  //! Whether a kept file missing when the rows were read is there now (KeptFiles::appeared).
  bool kept_file_appeared() const { return kept_.appeared(rows_); }

 private:
  std::size_t index_of(const dataset::VerdictRow& row) const {
    return static_cast<std::size_t>(&row - rows_.data());
  }

  dataset::StackKey key_;
  std::vector<dataset::VerdictRow> rows_;
  std::unordered_map<std::string, std::size_t> by_model_task_;  //!< "model\ntask" → row
  KeptFiles kept_;
};

}  // namespace canrun::serve
