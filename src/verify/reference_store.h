// The CPU reference store: the output of one eager CPU run (tokens, embeddings, or the files
// of logits or an image run.py wrote, copied beside the JSON), kept once
// per (model, revision, task, prompt, tokens, dtype, library version, and the reference backend
// when it is not the shipped one) and reused by every later
// test of that model. A revision that is a full commit sha names the files whatever the repo id
// (git's commit hashes cover the tree), so it is keyed without the model: a snapshot under two
// ids (the census's one-core and sharded ids) has one reference. One JSON file per key under DIR,
// written atomically; a file is only used when the key it holds equals the one asked for.
//
// Thread and process safety: concurrent readers and writers are fine (atomic replace); two
// writers of one key both write the same content.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace canrun::verify {

struct ReferenceKey {
  std::string model_id;
  std::string revision;
  std::string task;
  std::string prompt;
  int new_tokens = 0;
  std::string dtype;
  std::string library_version;
  //! What the reference backend computes differently from the shipped reference profile;
  //! empty for that one (trial::reference_for).
  std::string reference_backend = {};
  //! The long generation's tokens the reference generates too (0: none; a key without them is
  //! the key of references stored before canrun generated long).
  int long_tokens = 0;

  friend bool operator==(const ReferenceKey&, const ReferenceKey&) = default;
};

struct Reference {
  std::vector<std::int64_t> tokens;  //!< text generation: the check's new tokens
  std::string text;                  //!< their text
  //! Embedding tasks: the sentences' embeddings (encoded in batches) and how many of the
  //! sentences are queries (see run::RunReport).
  std::vector<std::vector<double>> embeddings;
  std::int64_t queries = 0;
  //! Logits and image tasks: run.py's outputs.safetensors and image.png. Given to save() as
  //! the run's files, which it copies into the store; find() gives the store's copies.
  std::filesystem::path outputs_file, image_file;
  //! Text generation: each position's gap between its two best logits (run::RunReport's
  //! margins), over long_tokens when there are; empty in references stored before canrun
  //! measured it.
  std::vector<double> margins;
  //! With a long generation (ReferenceKey::long_tokens): all its tokens, the first of which are
  //! `tokens` (one generation of the longest length serves both).
  std::vector<std::int64_t> long_tokens = {};
};

class ReferenceStore {
 public:
  explicit ReferenceStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  std::optional<Reference> find(const ReferenceKey& key) const;
  Status save(const ReferenceKey& key, const Reference& reference) const;
  std::filesystem::path path_of(const ReferenceKey& key) const;

 private:
  std::filesystem::path dir_;
};

//! Single-core verification: how many leading tokens equal the reference, and whether all N do.
struct TokenMatch {
  int match_tokens = 0;
  bool identical = false;
};
TokenMatch compare_tokens(const std::vector<std::int64_t>& tokens,
                          const std::vector<std::int64_t>& reference);

}  // namespace canrun::verify
