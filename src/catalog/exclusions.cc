#include "catalog/exclusions.h"

#include <algorithm>

#include "core/atomic_file.h"
#include "core/text.h"
#include "core/toml_file.h"
#include "core/verdict_result.h"

namespace canrun::catalog {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point: linear in practice, no recursion.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<Exclusions> Exclusions::load(const std::filesystem::path& path) {
  CANRUN_ASSIGN_OR_RETURN(std::string text, read_file(path));
  return parse(text, path.string());
}

Result<Exclusions> Exclusions::parse(std::string_view toml_text, std::string_view source_name) {
  CANRUN_ASSIGN_OR_RETURN(toml::table root, parse_toml(toml_text, source_name));
  Exclusions exclusions;
  for (const auto& [key, value] : root) {
    if (key.str() != "exclude") {
      return invalid_argument(fmt::format("{}: unknown key {}; entries are [[exclude]] tables",
                                          where(source_name, value), key.str()));
    }
  }
  const toml::array* entries = root["exclude"].as_array();
  if (entries == nullptr) return exclusions;
  for (const toml::node& node : *entries) {
    const toml::table* entry = node.as_table();
    if (entry == nullptr)
      return invalid_argument(
          fmt::format("{}: [[exclude]] must be a table", where(source_name, node)));
    for (const auto& [key, value] : *entry) {
      if (key.str() != "match" && key.str() != "reason" && key.str() != "why") {
        return invalid_argument(
            fmt::format("{}: unknown key {}; an exclusion has match, reason, why",
                        where(source_name, value), key.str()));
      }
    }
    const auto pattern = (*entry)["match"].value<std::string>();
    const auto reason = (*entry)["reason"].value<std::string>();
    const auto why = (*entry)["why"].value<std::string>();
    if (!pattern || pattern->empty() || !reason || !why || why->empty()) {
      return invalid_argument(
          fmt::format("{}: an exclusion needs match, reason and why, all non-empty strings",
                      where(source_name, node)));
    }
    const bool known = *reason == "note" ||
                       std::find(kExclusionReasons.begin(), kExclusionReasons.end(), *reason) !=
                           kExclusionReasons.end();
    if (!known) {
      return invalid_argument(fmt::format("{}: reason {} is not one of {}, or note",
                                          where(source_name, node), quote_for_message(*reason),
                                          fmt::join(kExclusionReasons, ", ")));
    }
    for (unsigned char c : *pattern) {
      if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/' || c == '*' ||
            c == '?')) {
        return invalid_argument(fmt::format("{}: match {}: {} is in no model id",
                                            where(source_name, node), quote_for_message(*pattern),
                                            describe_byte(c)));
      }
    }
    exclusions.rules_.push_back({*pattern, {*reason, *why}});
  }
  return exclusions;
}

std::optional<Exclusion> Exclusions::match(const ModelId& id) const {
  for (const Rule& rule : rules_) {
    if (glob_match(rule.pattern, id.str())) return rule.exclusion;
  }
  return std::nullopt;
}

}  // namespace canrun::catalog
