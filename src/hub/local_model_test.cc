#include "hub/local_model.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;

TEST(NamesFolderTest, APathOrAnExistingDirectoryIsAFolderAndAnIdIsNot) {
  for (const char* path : {"./nope/folder", "../nope", "/nope/at/all", "~/nope", "~", ".", ".."}) {
    EXPECT_TRUE(names_folder(path)) << path;
  }
  EXPECT_FALSE(names_folder("Qwen/Qwen3-0.6B"));
  EXPECT_FALSE(names_folder("gpt2"));
  EXPECT_FALSE(names_folder(""));
  const fs::path dir = fs::temp_directory_path() / "canrun-names-folder-test";
  fs::create_directories(dir / "org" / "model");
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  EXPECT_TRUE(names_folder("org/model"));  // a directory here, though it reads as an id
  EXPECT_TRUE(names_folder("org"));
  fs::current_path(before);
  fs::remove_all(dir);
}

TEST(ModelFolderTest, AMissingFolderIsNotFoundByTheNameGiven) {
  auto missing = model_folder("./nope/folder");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message(), "no such folder: \"./nope/folder\"");
  auto here = model_folder(".");
  ASSERT_TRUE(here.ok()) << here.error().message();
  EXPECT_EQ(*here, fs::path("."));
}

}  // namespace
}  // namespace canrun::hub
