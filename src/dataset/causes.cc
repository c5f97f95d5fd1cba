#include "dataset/causes.h"

#include <algorithm>
#include <regex>
#include <set>

namespace canrun::dataset {
namespace {

//! `error` up to the end of the paragraph of its last exception line ("ValueError: ..." up to
//! the next blank line): a library's advice after it is not the failure. All of it when it has
//! no such line.
std::string_view through_last_exception(std::string_view error) {
  static const std::regex kExceptionLine(
      R"(^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failed|Failure)\b[^\n]*:)");
  std::size_t last = std::string_view::npos;
  for (std::size_t at = 0; at < error.size();) {
    const std::size_t end = std::min(error.find('\n', at), error.size());
    const std::string line(error.substr(at, end - at));
    if (std::regex_search(line, kExceptionLine)) last = at;
    at = end + 1;
  }
  if (last == std::string_view::npos) return error;
  const std::size_t blank = error.find("\n\n", last);
  return blank == std::string_view::npos ? error : error.substr(0, blank);
}

//! The last lines of `error` within kCauseExcerptBytes, starting on a line boundary when one
//! is near (a traceback ends with what went wrong).
std::string excerpt_of(std::string_view error) {
  error = through_last_exception(error);
  while (!error.empty() && (error.back() == '\n' || error.back() == ' ')) error.remove_suffix(1);
  if (error.size() <= kCauseExcerptBytes) return std::string(error);
  std::string_view tail = error.substr(error.size() - kCauseExcerptBytes);
  if (const auto newline = tail.find('\n'); newline != std::string_view::npos) {
    tail.remove_prefix(newline + 1);
  } else {
    // Not inside a UTF-8 sequence: skip continuation bytes.
    while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80) {
      tail.remove_prefix(1);
    }
  }
  while (!tail.empty() && tail.front() == '\n') tail.remove_prefix(1);
  return "…" + std::string(tail);
}

}  // namespace

std::vector<std::string> model_types_in(std::string_view error) {
  static const std::regex kNamed(R"(model type `([^`]+)`)");
  static const std::regex kCode(R"(transformers/models/([A-Za-z0-9_]+)/)");
  const std::string text(error);
  std::set<std::string> named;
  for (std::sregex_iterator it(text.begin(), text.end(), kNamed), end; it != end; ++it)
    named.insert((*it)[1].str());
  if (!named.empty()) return {named.begin(), named.end()};
  std::string last;
  for (std::sregex_iterator it(text.begin(), text.end(), kCode), end; it != end; ++it) {
    if ((*it)[1].str() != "auto") last = (*it)[1].str();
  }
  if (last.empty()) return {};
  return {last};
}

std::vector<FailureCause> failure_causes(const std::vector<VerdictRow>& rows) {
  // The task most rows have: other tasks' models are named with theirs.
  std::map<std::string, std::size_t> tasks;
  for (const VerdictRow& row : rows) ++tasks[row.task];
  std::string main_task;
  std::size_t most = 0;
  for (const auto& [task, count] : tasks) {
    if (count > most) std::tie(main_task, most) = std::pair{task, count};
  }

  std::map<std::string, std::vector<const VerdictRow*>> groups;
  for (const VerdictRow& row : rows) {
    if (row.result == VerdictResult::kPass || row.result == VerdictResult::kExcluded) continue;
    const std::string signature = row.error_signature && !row.error_signature->empty()
                                      ? *row.error_signature
                                      : std::string(kNoSignature);
    groups[signature].push_back(&row);
  }
  std::vector<FailureCause> causes;
  for (auto& [signature, members] : groups) {
    std::sort(members.begin(), members.end(), [](const VerdictRow* a, const VerdictRow* b) {
      return std::tie(a->model_id, a->task) < std::tie(b->model_id, b->task);
    });
    FailureCause cause;
    cause.signature = signature;
    cause.count = members.size();
    std::set<std::string> types;
    for (const VerdictRow* row : members) {
      // The row's own model_type (schema 8); else those its traceback names.
      if (row->model_type) {
        types.insert(*row->model_type);
      } else if (row->error) {
        for (std::string& type : model_types_in(*row->error)) types.insert(std::move(type));
      }
      ++cause.results[std::string(to_string(row->result))];
      cause.models.push_back(row->task == main_task ? row->model_id
                                                    : row->model_id + " (" + row->task + ")");
      if (cause.excerpt.empty() && row->error) cause.excerpt = excerpt_of(*row->error);
    }
    cause.model_types.assign(types.begin(), types.end());
    causes.push_back(std::move(cause));
  }
  std::stable_sort(causes.begin(), causes.end(),
                   [](const FailureCause& a, const FailureCause& b) { return a.count > b.count; });
  return causes;
}

}  // namespace canrun::dataset
