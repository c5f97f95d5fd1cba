#include "serve/space_reloader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <thread>

#include "core/test_temp_dir.h"
#include "dataset/dataset.h"
#include "dataset/test_rows.h"
#include "serve/static_assets.h"

namespace canrun::serve {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

//! A dataset folder of the test's own.
class SpaceReloaderTest : public ::testing::Test {
 protected:
  //! Writes one row of a stack whose library is at `library_version`: a stack file of its own.
  void write_stack(const std::string& library_version) {
    auto status =
        dataset::DatasetDir(root_).upsert({dataset::testing::full_row("org/a", library_version)});
    ASSERT_TRUE(status.ok()) << status.error().message();
  }

  //! Sources over the dataset only (no rankings, no catalog, no backend profiles).
  SpaceSources sources() const {
    SourcePaths paths;
    paths.dataset = root_;
    paths.backends = root_ / "no-backends";
    return SpaceSources(paths);
  }

  canrun::testing::TempDir temp_{"reloader"};
  const fs::path root_ = temp_.path() / "dataset";
};

SpaceService service_of(std::shared_ptr<const SpaceIndex> index) {
  return SpaceService(StaticAssets::from_contents({}), std::move(index), nullptr);
}

//! Whether `condition` holds within `limit`, looking every few milliseconds.
bool becomes_true(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

TEST_F(SpaceReloaderTest, ANewStackFileReachesTheService) {
  write_stack("5.18.0");
  SpaceSources loaded = sources();
  auto index = loaded.load();
  ASSERT_TRUE(index.ok()) << index.error().message();
  ASSERT_EQ((*index)->stack_count(), 1u);
  SpaceService service = service_of(*index);
  SpaceReloader reloader(std::move(loaded), service, 10ms);
  const std::uint64_t generation = service.generation();

  write_stack("5.19.0");
  ASSERT_TRUE(becomes_true([&] { return service.index()->stack_count() == 2; }, 10s));
  EXPECT_GT(service.generation(), generation);
  IndexGauges gauges;
  reloader.read_gauges(gauges);
  EXPECT_GE(gauges.reloads, 1u);
  EXPECT_EQ(gauges.reload_failures, 0u);

  // Once stopped (twice is fine), it looks no more.
  reloader.stop();
  reloader.stop();
  write_stack("5.20.0");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(service.index()->stack_count(), 2u);
}

TEST_F(SpaceReloaderTest, NothingChangedLeavesTheIndexAlone) {
  write_stack("5.18.0");
  SpaceSources loaded = sources();
  auto index = loaded.load();
  ASSERT_TRUE(index.ok()) << index.error().message();
  SpaceService service = service_of(*index);
  const std::uint64_t generation = service.generation();
  {
    SpaceReloader reloader(std::move(loaded), service, 5ms);
    std::this_thread::sleep_for(100ms);
    IndexGauges gauges;
    reloader.read_gauges(gauges);
    EXPECT_EQ(gauges.reloads, 0u);
    EXPECT_GT(gauges.last_load_seconds, 0.0);  // the first load's time, until a reload
  }                                            // the destructor stops the thread
  EXPECT_EQ(service.generation(), generation);
  EXPECT_EQ(service.index(), *index);
}

// The dataset's writers keep a failure's log just after its row: a reload that read the row
// before the log was there finds the log at a later poll, though the stack file is unchanged.
TEST_F(SpaceReloaderTest, ALogKeptAfterItsRowReachesTheService) {
  dataset::VerdictRow row = dataset::testing::full_row("org/a");
  row.result = VerdictResult::kFailCompile;
  row.error = "RuntimeError: boom";
  ASSERT_TRUE(dataset::DatasetDir(root_).upsert({row}).ok());
  SpaceSources loaded = sources();
  auto index = loaded.load();
  ASSERT_TRUE(index.ok()) << index.error().message();
  SpaceService service = service_of(*index);
  const auto log_url = [&] {
    return (*service.index()->model_json(*ModelId::parse("org/a"), {}))["log_url"];
  };
  ASSERT_TRUE(log_url().is_null());
  SpaceReloader reloader(std::move(loaded), service, 10ms);

  ASSERT_TRUE(dataset::DatasetDir(root_).record_log(row, "the run's output").ok());
  ASSERT_TRUE(becomes_true([&] { return !log_url().is_null(); }, 10s));
  const QueryParams params = {{"task", "text-generation"}};
  EXPECT_EQ(*service.index()->log_text(*ModelId::parse("org/a"), params), "the run's output");
  EXPECT_EQ(service.index()->stack_count(), 1u);
}

}  // namespace
}  // namespace canrun::serve
