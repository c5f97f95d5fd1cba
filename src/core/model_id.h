// ModelId and Revision: validated names of a Hub model and of one of its versions.
//
// Every model id and revision that enters canrun (command line, catalog files, Hub answers)
// is parsed into these types first, so that no later stage — file names, URLs, the rendered
// run.py — ever sees a string that could escape its place. The rules follow the Hub's own
// (huggingface_hub's validate_repo_id) but are stricter where the Hub is lenient:
//   ModelId:  namespace/name; each part 1..96 characters from [A-Za-z0-9-_.]; no "--" or "..";
//             a part neither starts nor ends with '-' or '.'; the name does not end in ".git".
//   Revision: a branch or tag ([A-Za-z0-9-_./+], git's ref-name rules, at most 255 characters)
//             or a commit (40 hex digits, kept lower-case).
//
// Thread safety: immutable values.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace canrun {

class ModelId {
 public:
  static constexpr std::size_t kMaxPartLength = 96;

  //! Parse "namespace/name"; the error says which rule the input breaks and where.
  static Result<ModelId> parse(std::string_view text);

  const std::string& str() const { return text_; }
  std::string_view owner() const { return std::string_view(text_).substr(0, slash_); }
  std::string_view name() const { return std::string_view(text_).substr(slash_ + 1); }

  //! The folder name the HF cache uses for this model: "models--owner--name".
  std::string cache_folder_name() const;

  friend auto operator<=>(const ModelId&, const ModelId&) = default;
  friend bool operator==(const ModelId&, const ModelId&) = default;

 private:
  ModelId(std::string text, std::size_t slash) : text_(std::move(text)), slash_(slash) {}
  std::string text_;
  std::size_t slash_;
};

class Revision {
 public:
  enum class Kind { kRef, kCommit };
  static constexpr std::size_t kMaxLength = 255;
  static constexpr std::size_t kCommitLength = 40;

  //! Parse a branch, tag or 40-hex commit.
  static Result<Revision> parse(std::string_view text);
  //! The Hub's default branch.
  static Revision main_branch() { return Revision("main", Kind::kRef); }

  const std::string& str() const { return text_; }
  Kind kind() const { return kind_; }
  bool is_commit() const { return kind_ == Kind::kCommit; }

  friend bool operator==(const Revision&, const Revision&) = default;

 private:
  Revision(std::string text, Kind kind) : text_(std::move(text)), kind_(kind) {}
  std::string text_;
  Kind kind_;
};

}  // namespace canrun

template <>
struct std::hash<canrun::ModelId> {
  std::size_t operator()(const canrun::ModelId& id) const noexcept {
    return std::hash<std::string>{}(id.str());
  }
};
