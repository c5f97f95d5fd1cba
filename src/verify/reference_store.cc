#include "verify/reference_store.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/text.h"

namespace canrun::verify {
namespace {

//! A full commit sha: it names a tree of files, whichever repo id it is found under.
bool is_commit(std::string_view revision) {
  return revision.size() == 40 && revision.find_first_not_of("0123456789abcdef") == revision.npos;
}

nlohmann::json key_json(const ReferenceKey& key) {
  nlohmann::json json = {{"revision", key.revision}, {"task", key.task},
                         {"prompt", key.prompt},     {"new_tokens", key.new_tokens},
                         {"dtype", key.dtype},       {"library_version", key.library_version}};
  // A commit is the files themselves (the census's sharded id names the one-core id's snapshot):
  // one reference for both. Anything else (a branch, a folder's) needs the model to name it.
  if (!is_commit(key.revision)) json["model_id"] = key.model_id;
  if (!key.reference_backend.empty()) json["reference_backend"] = key.reference_backend;
  if (key.long_tokens > 0) json["long_tokens"] = key.long_tokens;
  return json;
}

}  // namespace

std::filesystem::path ReferenceStore::path_of(const ReferenceKey& key) const {
  return dir_ / fmt::format("{:016x}.json", fnv1a(key_json(key).dump()));
}

std::optional<Reference> ReferenceStore::find(const ReferenceKey& key) const {
  auto text = read_file(path_of(key));
  if (!text.ok()) return std::nullopt;
  const auto json = nlohmann::json::parse(*text, nullptr, false);
  if (!json.is_object() || json.value("key", nlohmann::json()) != key_json(key) ||
      !json.contains("tokens") || !json["tokens"].is_array()) {
    return std::nullopt;
  }
  Reference reference;
  for (auto [name, tokens] :
       {std::pair{"tokens", &reference.tokens}, std::pair{"long_tokens", &reference.long_tokens}}) {
    const auto found = json.find(name);
    if (found == json.end()) continue;
    if (!found->is_array()) return std::nullopt;
    for (const auto& token : *found) {
      if (!token.is_number_integer()) return std::nullopt;
      tokens->push_back(token.get<std::int64_t>());
    }
  }
  if (key.long_tokens > 0 && reference.long_tokens.empty() && !reference.tokens.empty()) {
    return std::nullopt;  // a generation's reference without its long tokens: computed again
  }
  reference.text = json.value("text", "");
  if (const auto found = json.find("margins"); found != json.end() && found->is_array()) {
    for (const auto& margin : *found) {
      if (!margin.is_number()) return std::nullopt;
      reference.margins.push_back(margin.get<double>());
    }
  }
  for (auto [name, field] : {std::pair{"outputs_file", &Reference::outputs_file},
                             std::pair{"image_file", &Reference::image_file}}) {
    if (const auto found = json.find(name); found != json.end() && found->is_string()) {
      const std::filesystem::path file = dir_ / found->get<std::string>();
      if (!std::filesystem::is_regular_file(file)) return std::nullopt;  // computed again
      reference.*field = file;
    }
  }
  if (const auto found = json.find("embeddings"); found != json.end()) {
    if (!found->is_array()) return std::nullopt;
    for (const auto& row : *found) {
      if (!row.is_array()) return std::nullopt;
      std::vector<double>& values = reference.embeddings.emplace_back();
      for (const auto& value : row) {
        if (!value.is_number()) return std::nullopt;
        values.push_back(value.get<double>());
      }
    }
    reference.queries = json.value("queries", std::int64_t{0});
  }
  return reference;
}

Status ReferenceStore::save(const ReferenceKey& key, const Reference& reference) const {
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", dir_.string(), error.message()));
  nlohmann::json json = {
      {"key", key_json(key)}, {"tokens", reference.tokens}, {"text", reference.text}};
  if (!reference.long_tokens.empty()) json["long_tokens"] = reference.long_tokens;
  if (!reference.margins.empty()) json["margins"] = reference.margins;
  if (!reference.embeddings.empty()) {
    json["embeddings"] = reference.embeddings;
    json["queries"] = reference.queries;
  }
  // The files first, under the key's name: the JSON naming them is written last.
  const std::string stem = path_of(key).stem().string();
  for (auto [name, source, suffix] :
       {std::tuple{"outputs_file", &reference.outputs_file, ".outputs.safetensors"},
        std::tuple{"image_file", &reference.image_file, ".png"}}) {
    if (source->empty()) continue;
    const std::string stored = stem + suffix;
    CANRUN_ASSIGN_OR_RETURN(std::string bytes, read_file(*source));
    CANRUN_RETURN_IF_ERROR(write_file_atomically(dir_ / stored, bytes));
    json[name] = stored;
  }
  return write_file_atomically(path_of(key),
                               json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

TokenMatch compare_tokens(const std::vector<std::int64_t>& tokens,
                          const std::vector<std::int64_t>& reference) {
  TokenMatch match;
  while (static_cast<std::size_t>(match.match_tokens) < std::min(tokens.size(), reference.size()) &&
         tokens[match.match_tokens] == reference[match.match_tokens]) {
    ++match.match_tokens;
  }
  match.identical = tokens.size() == reference.size() &&
                    static_cast<std::size_t>(match.match_tokens) == tokens.size();
  return match;
}

}  // namespace canrun::verify
