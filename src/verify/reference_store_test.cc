#include "verify/reference_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace canrun::verify {
namespace {

TEST(ReferenceStoreTest, SavesAndFindsByTheWholeKey) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("canrun-refs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const ReferenceStore store(dir);
  const ReferenceKey key{
      "org/m", "c1b7e3d4a5f60718293a4b5c6d7e8f9012345678", "text-generation", "Hi", 32, "float32",
      "5.18.0"};
  EXPECT_FALSE(store.find(key).has_value());
  ASSERT_TRUE(store.save(key, {{1, 2, 3}, "a b c", {}, 0, {}, {}, {0.25, 3e-5, 0.5}}).ok());
  const auto found = store.find(key);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->tokens, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(found->text, "a b c");
  EXPECT_EQ(found->margins, (std::vector<double>{0.25, 3e-5, 0.5}));
  for (auto changed :
       {ReferenceKey{key.model_id, key.revision, key.task, key.prompt, 16, key.dtype,
                     key.library_version},
        ReferenceKey{key.model_id, key.revision, key.task, key.prompt, 32, "bfloat16",
                     key.library_version},
        ReferenceKey{key.model_id, key.revision, key.task, key.prompt, 32, key.dtype, "4.57.6"},
        ReferenceKey{key.model_id, key.revision, "sentence-similarity", key.prompt, 32, key.dtype,
                     key.library_version},
        ReferenceKey{key.model_id, key.revision, key.task, key.prompt, 32, key.dtype,
                     key.library_version, "cuda None [] "}}) {
    EXPECT_FALSE(store.find(changed).has_value());
  }
  // A commit names the files: the same snapshot under another id has the same reference; a
  // branch name does not.
  EXPECT_TRUE(store
                  .find(ReferenceKey{"org/m-second-id", key.revision, key.task, key.prompt, 32,
                                     key.dtype, key.library_version})
                  .has_value());
  const ReferenceKey on_main{"org/m", "main",    key.task,           key.prompt,
                             32,      key.dtype, key.library_version};
  ASSERT_TRUE(store.save(on_main, {{4, 5}, "d e", {}, 0, {}, {}, {}}).ok());
  EXPECT_TRUE(store.find(on_main).has_value());
  EXPECT_FALSE(store
                   .find(ReferenceKey{"org/other", "main", key.task, key.prompt, 32, key.dtype,
                                      key.library_version})
                   .has_value());
  std::ofstream(store.path_of(key)) << "{ broken";
  EXPECT_FALSE(store.find(key).has_value());
  std::filesystem::remove_all(dir);
}

//! A task whose output is a file (logits, an image): the store keeps its own copy of the
//! reference run's files, and a key whose files went missing is computed again.
TEST(ReferenceStoreTest, KeepsCopiesOfTheRunsFiles) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("canrun-refs-files-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "run");
  std::ofstream(dir / "run" / "outputs.safetensors") << "tensors";
  std::ofstream(dir / "run" / "image.png") << "png";
  const ReferenceStore store(dir / "refs");
  const ReferenceKey key{"org/pipe", "",        "text-to-image",          "An apple",
                         32,         "float32", "5.18.0 diffusers 0.42.1"};
  Reference reference;
  reference.outputs_file = dir / "run" / "outputs.safetensors";
  reference.image_file = dir / "run" / "image.png";
  ASSERT_TRUE(store.save(key, reference).ok());
  std::filesystem::remove_all(dir / "run");  // the run's folder may go: the store has copies
  const auto found = store.find(key);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->outputs_file.parent_path(), dir / "refs");
  std::ifstream outputs(found->outputs_file), image(found->image_file);
  std::string text;
  outputs >> text;
  EXPECT_EQ(text, "tensors");
  image >> text;
  EXPECT_EQ(text, "png");
  std::filesystem::remove(found->image_file);
  EXPECT_FALSE(store.find(key).has_value());
  std::filesystem::remove_all(dir);
}

TEST(ReferenceStoreTest, KeepsEmbeddingsAndTheirQueries) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("canrun-refs-emb-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const ReferenceStore store(dir);
  const ReferenceKey key{"org/e", "main", "sentence-similarity", "", 32, "float32", "5.18.0"};
  Reference reference;
  reference.embeddings = {{0.5, -0.25}, {1.0, 0.0}};
  reference.queries = 1;
  ASSERT_TRUE(store.save(key, reference).ok());
  const auto found = store.find(key);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->embeddings, reference.embeddings);
  EXPECT_EQ(found->queries, 1);
  EXPECT_TRUE(found->tokens.empty());
  std::filesystem::remove_all(dir);
}

TEST(CompareTokensTest, CountsLeadingMatches) {
  EXPECT_EQ(compare_tokens({1, 2, 3}, {1, 2, 3}).match_tokens, 3);
  EXPECT_TRUE(compare_tokens({1, 2, 3}, {1, 2, 3}).identical);
  EXPECT_EQ(compare_tokens({1, 9, 3}, {1, 2, 3}).match_tokens, 1);
  EXPECT_FALSE(compare_tokens({1, 2}, {1, 2, 3}).identical);
  EXPECT_EQ(compare_tokens({}, {1}).match_tokens, 0);
}

}  // namespace
}  // namespace canrun::verify
