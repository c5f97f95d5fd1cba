#include "cache/sync.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/test_temp_dir.h"

namespace canrun::cache {
namespace {

namespace fs = std::filesystem;

using canrun::testing::write_file;

CacheLocation local(const fs::path& path) {
  auto location = parse_location(path.string());
  EXPECT_TRUE(location.ok());
  return *location;
}

TEST(CacheLocationTest, ParsesFoldersFileUrlsAndBuckets) {
  EXPECT_EQ(parse_location("cache/neuron")->local, "cache/neuron");
  EXPECT_EQ(parse_location("cache/neuron/")->local, "cache/neuron");
  EXPECT_EQ(parse_location("/")->local, "/");
  EXPECT_EQ(parse_location("file:///var/cache/x")->local, "/var/cache/x");
  EXPECT_EQ(parse_location("file://localhost/var/cache/x")->local, "/var/cache/x");
  const auto bucket =
      parse_location("hf://buckets/aws-neuron/torch-neuronx-neff-cache/neuronxcc-2.16.372.0+4a9/");
  ASSERT_TRUE(bucket.ok()) << bucket.error().message();
  EXPECT_TRUE(bucket->is_bucket());
  EXPECT_EQ(bucket->bucket_uri,
            "hf://buckets/aws-neuron/torch-neuronx-neff-cache/neuronxcc-2.16.372.0+4a9");
  EXPECT_TRUE(parse_location("hf://buckets/org/bucket")->is_bucket());
}

TEST(CacheLocationTest, NamesWhatIsWrong) {
  const auto expect_error = [](std::string_view text, std::string_view says) {
    const auto parsed = parse_location(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find(says), std::string::npos) << parsed.error().message();
  };
  expect_error("hf://buckets/org", "no bucket name");
  expect_error("hf://buckets/org/bad--name/x", "bad bucket id");
  expect_error("hf://buckets/org/b/../x", "'..'");
  expect_error("hf://datasets/org/name", "Storage Buckets");
  expect_error("file://server/share", "host \"server\"");
  expect_error("s3://bucket/x", "not a location canrun can sync");
}

TEST(CacheSyncTest, CopiesCompleteEntriesAtomicallyAndASecondSyncCopiesNothing) {
  testing::TempDir dir("cache-sync");
  const fs::path source = dir.path() / "src";
  const fs::path destination = dir.path() / "dst";
  write_file(source / "neuronxcc-2.16/MODULE_ok/model.neff", "neff bytes");
  write_file(source / "neuronxcc-2.16/MODULE_ok/model.done", "");
  write_file(source / "neuronxcc-2.16/MODULE_failed/model.log", "error");
  const auto launcher = process::make_posix_launcher();
  SyncRequest request{local(source), local(destination)};

  const auto first = sync_cache(request, *launcher);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(first->count(SyncAction::kCopy), 2u);
  EXPECT_TRUE(fs::exists(destination / "neuronxcc-2.16/MODULE_ok/model.done"));
  EXPECT_FALSE(fs::exists(destination / "neuronxcc-2.16/MODULE_failed"));
  EXPECT_EQ(fs::last_write_time(destination / "neuronxcc-2.16/MODULE_ok/model.neff"),
            fs::last_write_time(source / "neuronxcc-2.16/MODULE_ok/model.neff"));
  for (const auto& entry : fs::recursive_directory_iterator(destination)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(kPartialPrefix)) << entry.path();
  }

  const auto second = sync_cache(request, *launcher);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(second->count(SyncAction::kCopy), 0u);
  EXPECT_EQ(second->count(SyncAction::kSkip), 2u);
}

TEST(CacheSyncTest, DryRunAndDeleteChangeOnlyWhatTheyShould) {
  testing::TempDir dir("cache-sync-delete");
  const fs::path source = dir.path() / "src";
  const fs::path destination = dir.path() / "dst";
  write_file(source / "v/MODULE_a/model.done", "");
  write_file(destination / "v/MODULE_old/model.done", "");
  write_file(destination / "v/MODULE_old/model.neff", "old");
  const auto launcher = process::make_posix_launcher();
  SyncRequest request{local(source), local(destination)};
  request.delete_extra = true;
  request.dry_run = true;

  const auto planned = sync_cache(request, *launcher);
  ASSERT_TRUE(planned.ok()) << planned.error().message();
  EXPECT_EQ(planned->count(SyncAction::kCopy), 1u);
  EXPECT_EQ(planned->count(SyncAction::kDelete), 2u);
  EXPECT_FALSE(fs::exists(destination / "v/MODULE_a"));
  EXPECT_TRUE(fs::exists(destination / "v/MODULE_old/model.neff"));

  request.dry_run = false;
  ASSERT_TRUE(sync_cache(request, *launcher).ok());
  EXPECT_TRUE(fs::exists(destination / "v/MODULE_a/model.done"));
  EXPECT_FALSE(fs::exists(destination / "v/MODULE_old"));  // emptied folders go too
}

TEST(CacheSyncTest, RefusesAMissingSourceAndADestinationInsideTheSource) {
  testing::TempDir dir("cache-sync-bad");
  const auto launcher = process::make_posix_launcher();
  const auto missing =
      sync_cache({local(dir.path() / "absent"), local(dir.path() / "dst")}, *launcher);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("source: cache folder"), std::string::npos);
  EXPECT_NE(missing.error().message().find("absent"), std::string::npos);

  write_file(dir.path() / "src/v/f", "x");
  const auto nested =
      sync_cache({local(dir.path() / "src"), local(dir.path() / "src/v/copy")}, *launcher);
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(nested.error().message().find("inside it"), std::string::npos);
}

}  // namespace
}  // namespace canrun::cache
