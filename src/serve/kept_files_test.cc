#include "serve/kept_files.h"

#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "core/test_temp_dir.h"
#include "dataset/dataset.h"
#include "dataset/test_rows.h"

namespace canrun::serve {
namespace {

namespace fs = std::filesystem;
using dataset::VerdictRow;

VerdictRow failed(std::string model) {
  VerdictRow row = dataset::testing::full_row(std::move(model));
  row.result = VerdictResult::kFailCompile;
  row.error = "RuntimeError: boom";
  return row;
}

//! A dataset folder of the test's own, written by the dataset's own writers.
class KeptFilesTest : public ::testing::Test {
 protected:
  //! A text-to-image row whose two images are kept (PNG bytes need not be real here).
  VerdictRow painted(std::string model) {
    VerdictRow row = dataset::testing::full_row(std::move(model));
    row.task = "text-to-image";
    const std::map<std::string, fs::path> images = {{"image", source("image.png")},
                                                    {"reference_image", source("reference.png")}};
    EXPECT_TRUE(dataset::name_output_files(row, images).ok());
    EXPECT_TRUE(data_.record_images(row, images).ok());
    return row;
  }

  fs::path source(const std::string& name) {
    const fs::path path = temp_.path() / name;
    EXPECT_TRUE(write_file_atomically(path, "PNG " + name).ok());
    return path;
  }

  canrun::testing::TempDir temp_{"kept-files"};
  const fs::path root_ = temp_.path() / "dataset";
  const dataset::DatasetDir data_{root_};
  const dataset::StackKey key_ = *dataset::stack_key_of(dataset::testing::full_row());
};

TEST_F(KeptFilesTest, FindsTheLogsOfFailuresAndTheImagesRowsName) {
  std::vector<VerdictRow> rows = {dataset::testing::full_row("org/passed"), failed("org/failed"),
                                  failed("org/silent"), painted("org/painter")};
  ASSERT_TRUE(data_.record_log(rows[1], "the run's output").ok());
  const KeptFiles kept = KeptFiles::find(root_, key_, rows);
  EXPECT_EQ(kept.log(rows, 0), std::nullopt);  // a PASS keeps no log
  EXPECT_EQ(kept.log(rows, 1), root_ / *dataset::log_relative_path(rows[1]));
  EXPECT_EQ(kept.log(rows, 2), std::nullopt);  // a failure whose run printed nothing
  EXPECT_TRUE(kept.images(rows, 1).empty());
  const KeptFiles::Images images = kept.images(rows, 3);
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images.at("reference_image"),
            root_ / *dataset::image_relative_path(rows[3], "reference_image"));
  EXPECT_FALSE(kept.appeared(rows));

  // The writers keep a log just after its row: a stack read in between learns of it later.
  ASSERT_TRUE(data_.record_log(rows[2], "late").ok());
  EXPECT_TRUE(kept.appeared(rows));
  EXPECT_NE(KeptFiles::find(root_, key_, rows).log(rows, 2), std::nullopt);
}

TEST_F(KeptFilesTest, AStackWithoutALogsFolderNoticesItsFirstLog) {
  const std::vector<VerdictRow> rows = {failed("org/failed")};
  const KeptFiles kept = KeptFiles::find(root_, key_, rows);
  EXPECT_EQ(kept.log(rows, 0), std::nullopt);
  EXPECT_FALSE(kept.appeared(rows));
  ASSERT_TRUE(data_.record_log(rows[0], "output").ok());
  EXPECT_TRUE(kept.appeared(rows));
}

TEST_F(KeptFilesTest, NothingIsKeptWithoutADatasetFolderOrAFileToKeep) {
  const std::vector<VerdictRow> rows = {failed("org/failed")};
  ASSERT_TRUE(data_.record_log(rows[0], "output").ok());
  const KeptFiles without_root = KeptFiles::find({}, key_, rows);
  EXPECT_EQ(without_root.log(rows, 0), std::nullopt);
  EXPECT_FALSE(without_root.appeared(rows));
  // Rows that keep nothing look for nothing, even when the folders are missing.
  const std::vector<VerdictRow> passes = {dataset::testing::full_row()};
  EXPECT_FALSE(KeptFiles::find(temp_.path() / "elsewhere", key_, passes).appeared(passes));
  EXPECT_EQ(KeptFiles().log(rows, 0), std::nullopt);
  EXPECT_TRUE(KeptFiles().images(rows, 0).empty());
}

}  // namespace
}  // namespace canrun::serve
