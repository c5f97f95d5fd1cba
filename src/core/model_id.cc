#include "core/model_id.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/text.h"

namespace canrun {
namespace {

bool is_id_char(unsigned char byte) {
  return std::isalnum(byte) || byte == '-' || byte == '_' || byte == '.';
}

bool is_revision_char(unsigned char byte) { return is_id_char(byte) || byte == '/' || byte == '+'; }

bool is_hex(unsigned char byte) { return std::isxdigit(byte) != 0; }

//! The first byte `allowed` refuses, described with its position, or an empty string.
template <typename Allowed>
std::string first_refused_byte(std::string_view text, Allowed allowed) {
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (!allowed(byte)) return fmt::format("{} at position {}", describe_byte(byte), pos + 1);
  }
  return {};
}

Status check_id_part(std::string_view part, std::string_view what) {
  if (part.empty()) return invalid_argument(fmt::format("its {} is empty", what));
  if (part.size() > ModelId::kMaxPartLength) {
    return invalid_argument(fmt::format("its {} is {} characters long; at most {} are allowed",
                                        what, part.size(), ModelId::kMaxPartLength));
  }
  if (part.find("..") != std::string_view::npos) {
    return invalid_argument(fmt::format("its {} contains \"..\"", what));
  }
  if (part.find("--") != std::string_view::npos) {
    return invalid_argument(fmt::format("its {} contains \"--\"", what));
  }
  for (char edge : {part.front(), part.back()}) {
    if (edge == '-' || edge == '.') {
      return invalid_argument(
          fmt::format("its {} {} with '{}'", what, edge == part.front() ? "starts" : "ends", edge));
    }
  }
  return ok_status();
}

}  // namespace

Result<ModelId> ModelId::parse(std::string_view text) {
  auto refuse = [&](const std::string& why) -> Error {
    return invalid_argument(fmt::format("invalid model id {}: {}", quote_for_message(text), why));
  };
  if (text.empty()) return refuse("it is empty; expected namespace/name, e.g. Qwen/Qwen3-0.6B");
  if (auto refused =
          first_refused_byte(text, [](unsigned char b) { return is_id_char(b) || b == '/'; });
      !refused.empty()) {
    return refuse(
        fmt::format("{} is not allowed; use letters, digits, '-', '_', '.' and one '/'", refused));
  }
  const auto slashes = std::count(text.begin(), text.end(), '/');
  if (slashes != 1) {
    return refuse(
        fmt::format("it has {} '/'; expected exactly one, as in namespace/name", slashes));
  }
  const std::size_t slash = text.find('/');
  if (auto status = check_id_part(text.substr(0, slash), "namespace"); !status.ok()) {
    return refuse(status.error().message());
  }
  const std::string_view name = text.substr(slash + 1);
  if (auto status = check_id_part(name, "name"); !status.ok()) {
    return refuse(status.error().message());
  }
  if (name.ends_with(".git")) return refuse("its name ends with \".git\"");
  return ModelId(std::string(text), slash);
}

std::string ModelId::cache_folder_name() const {
  return fmt::format("models--{}--{}", owner(), name());
}

Result<Revision> Revision::parse(std::string_view text) {
  auto refuse = [&](const std::string& why) -> Error {
    return invalid_argument(fmt::format("invalid revision {}: {}", quote_for_message(text), why));
  };
  if (text.empty()) return refuse("it is empty; expected a branch, a tag or a 40-hex commit");
  if (text.size() > kMaxLength) {
    return refuse(
        fmt::format("it is {} characters long; at most {} are allowed", text.size(), kMaxLength));
  }
  if (auto refused = first_refused_byte(text, is_revision_char); !refused.empty()) {
    return refuse(
        fmt::format("{} is not allowed; use letters, digits, '-', '_', '.', '+', '/'", refused));
  }
  if (text.size() == kCommitLength && std::all_of(text.begin(), text.end(), is_hex)) {
    std::string commit(text);
    std::transform(commit.begin(), commit.end(), commit.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return Revision(std::move(commit), Kind::kCommit);
  }
  // git check-ref-format's rules that the character set leaves open.
  if (text.front() == '-') return refuse("it starts with '-'");
  if (text.front() == '/' || text.back() == '/') return refuse("it starts or ends with '/'");
  if (text.find("..") != std::string_view::npos) return refuse("it contains \"..\"");
  if (text.find("//") != std::string_view::npos) return refuse("it contains \"//\"");
  if (text.back() == '.') return refuse("it ends with '.'");
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('/', start), text.size());
    const std::string_view component = text.substr(start, end - start);
    if (component.starts_with('.')) return refuse("a part of it starts with '.'");
    if (component.ends_with(".lock")) return refuse("a part of it ends with \".lock\"");
    start = end + 1;
  }
  return Revision(std::string(text), Kind::kRef);
}

}  // namespace canrun
