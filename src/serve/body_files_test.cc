#include "serve/body_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace canrun::serve {
namespace {

namespace fs = std::filesystem;

//! Files in a fresh folder of the temporary directory (emptied by the test's end).
class BodyFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("canrun-body-files-" + std::to_string(::getpid()));
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  BodyFileOptions options(std::size_t max_total_bytes = 1 << 20) const {
    return {.min_bytes = 1024, .max_total_bytes = max_total_bytes, .directory = directory_};
  }

  fs::path directory_;
};

std::shared_ptr<const std::string> body_of(std::size_t size, char fill = 'x') {
  return std::make_shared<const std::string>(size, fill);
}

std::string contents(const BodyFile& file) {
  std::string bytes(file.size(), '\0');
  EXPECT_EQ(pread(file.fd(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  return bytes;
}

TEST_F(BodyFilesTest, ABodyGetsItsFileOnItsSecondSendAndKeepsIt) {
  BodyFiles files(options());
  auto body = std::make_shared<const std::string>(std::string(3000, 'a') + "the end");
  EXPECT_EQ(files.file_for(body), nullptr);
  auto file = files.file_for(body);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(contents(*file), *body);
  EXPECT_EQ(files.file_for(body), file);
  EXPECT_EQ(files.total_bytes(), body->size());
  // Unnamed: nothing in the folder to see, open or clean up.
  EXPECT_TRUE(fs::is_empty(directory_));
}

TEST_F(BodyFilesTest, WithoutAFolderTheFileIsASealedMemfd) {
  for (const fs::path& directory : {fs::path(), directory_ / "missing"}) {
    BodyFiles files({.min_bytes = 1024, .max_total_bytes = 1 << 20, .directory = directory});
    auto body = body_of(4096, 'm');
    files.file_for(body);
    auto file = files.file_for(body);
    ASSERT_NE(file, nullptr) << directory;
    EXPECT_EQ(contents(*file), *body);
    // Sealed: nothing can change the bytes a send has handed to the kernel.
    const int seals = fcntl(file->fd(), F_GET_SEALS);
    EXPECT_TRUE(seals & F_SEAL_WRITE) << directory;
    EXPECT_TRUE(seals & F_SEAL_SHRINK) << directory;
    EXPECT_EQ(pwrite(file->fd(), "x", 1, 0), -1);
  }
}

TEST_F(BodyFilesTest, SmallBodiesAreNeverFiles) {
  BodyFiles files(options());
  auto body = body_of(1023);
  for (int send = 0; send < 3; ++send) EXPECT_EQ(files.file_for(body), nullptr);
  EXPECT_EQ(files.total_bytes(), 0u);
}

TEST_F(BodyFilesTest, EqualBytesInAnotherBodyAreAnotherBody) {
  BodyFiles files(options());
  auto first = body_of(2048);
  auto second = body_of(2048);
  EXPECT_EQ(files.file_for(first), nullptr);
  EXPECT_EQ(files.file_for(second), nullptr);
  EXPECT_NE(files.file_for(first), nullptr);
}

TEST_F(BodyFilesTest, AFileIsDroppedWhenItsBodyIsGoneButOutlivesItsSends) {
  BodyFiles files(options());
  auto old_body = body_of(4096, 'o');
  files.file_for(old_body);
  auto in_flight = files.file_for(old_body);
  ASSERT_NE(in_flight, nullptr);
  old_body.reset();  // e.g. a reload cleared the answer cache

  auto new_body = body_of(2048, 'n');
  files.file_for(new_body);
  ASSERT_NE(files.file_for(new_body), nullptr);
  EXPECT_EQ(files.total_bytes(), 2048u);
  EXPECT_EQ(contents(*in_flight), std::string(4096, 'o'));  // a send still holding it reads on
}

TEST_F(BodyFilesTest, FilesStayWithinTheirTotal) {
  BodyFiles files(options(5000));
  auto first = body_of(3000);
  auto second = body_of(3000);
  files.file_for(first);
  files.file_for(second);
  EXPECT_NE(files.file_for(first), nullptr);
  EXPECT_EQ(files.file_for(second), nullptr);  // would make 6000 bytes
  EXPECT_EQ(files.total_bytes(), 3000u);
  first.reset();
  EXPECT_EQ(files.file_for(second), nullptr);  // tried once per body
  auto third = body_of(3000);
  files.file_for(third);
  EXPECT_NE(files.file_for(third), nullptr);  // room again once the first body is gone
  EXPECT_EQ(files.total_bytes(), 3000u);
}

TEST_F(BodyFilesTest, SweepsOfBodiesSentOnceKeepTheLiveOnes) {
  BodyFiles files(options());
  auto kept = body_of(2048);
  files.file_for(kept);
  for (int idx = 0; idx < 10'000; ++idx) files.file_for(body_of(2048));  // each gone at once
  EXPECT_NE(files.file_for(kept), nullptr);
  EXPECT_EQ(files.total_bytes(), 2048u);
}

}  // namespace
}  // namespace canrun::serve
