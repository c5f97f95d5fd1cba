#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/test_temp_dir.h"
#include "trial/checkpoint.h"

namespace canrun::trial {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

//! An HF cache (HF_HUB_CACHE for the test's length) holding org/model's snapshot at kCommit.
class KeptCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* before = std::getenv("HF_HUB_CACHE")) before_ = before;
    ::setenv("HF_HUB_CACHE", cache_.path().c_str(), 1);
    testing::write_file(snapshot() / "config.json", "{}");
    testing::write_file(snapshot() / "model-1.safetensors", "weights");
    testing::write_file(snapshot() / "model-2.safetensors", "weights");
  }
  void TearDown() override {
    if (before_) {
      ::setenv("HF_HUB_CACHE", before_->c_str(), 1);
    } else {
      ::unsetenv("HF_HUB_CACHE");
    }
  }
  fs::path snapshot() const { return cache_.path() / "models--org--model" / "snapshots" / kCommit; }
  KeptCheckpoint kept() const {
    return {"org/model", "org/model", kCommit,
            kCommit,     false,       {"model-1.safetensors", "model-2.safetensors"}};
  }

  testing::TempDir cache_{"kept-checkpoint"};
  std::optional<std::string> before_;
};

TEST_F(KeptCheckpointTest, AHubCheckpointIsFoundInThisMachinesCacheWithoutTheHub) {
  const Checkpoint here = located(kept());
  EXPECT_EQ(here.model_id, "org/model");
  EXPECT_EQ(here.load_from, "org/model");
  EXPECT_EQ(here.commit, kCommit);
  ASSERT_TRUE(here.folder.has_value());
  EXPECT_EQ(*here.folder, snapshot());
  EXPECT_TRUE(here.in_hf_cache());
  EXPECT_TRUE(require_local_files(here).ok());
}

TEST_F(KeptCheckpointTest, AWeightsFileMissingHereLeavesItOnTheHub) {
  fs::remove(snapshot() / "model-2.safetensors");
  const Checkpoint here = located(kept());
  EXPECT_FALSE(here.folder.has_value());
  EXPECT_FALSE(here.in_hf_cache());
  const Status missing = require_local_files(here);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().has_reason(reason::kNotCached));
  EXPECT_THAT(missing.error().message(), HasSubstr("hf download org/model --revision " + kCommit));
}

TEST_F(KeptCheckpointTest, AFolderIsWhereItWasAndRoundTripsThroughJson) {
  const KeptCheckpoint folder{"local/m", snapshot().string(), "main", std::nullopt, true, {}};
  const Checkpoint here = located(folder);
  EXPECT_EQ(here.source, CheckpointSource::kFolder);
  EXPECT_EQ(here.folder, snapshot());
  EXPECT_TRUE(require_local_files(here).ok());
  for (const KeptCheckpoint& each : {folder, kept()}) {
    auto back = kept_checkpoint_from_json(
        nlohmann::json::parse(kept_checkpoint_to_json(each).dump()), "item");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(*back, each);
  }
  auto bad = kept_checkpoint_from_json(
      {{"model_id", "not an id"}, {"load_from", "x"}, {"revision", "main"}}, "item");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(bad.error().message(), ::testing::StartsWith("item: "));
  EXPECT_THAT(bad.error().message(), HasSubstr("not an id"));
}

}  // namespace
}  // namespace canrun::trial
