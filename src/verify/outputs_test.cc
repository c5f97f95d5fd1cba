// The arrays of run.py's outputs.safetensors read back, and the logits, ranking and image
// comparisons.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/test_temp_dir.h"
#include "verify/image.h"
#include "verify/logits.h"
#include "verify/ranking.h"
#include "verify/tensor_file.h"

namespace canrun::verify {
namespace {

namespace fs = std::filesystem;

//! A safetensors file of one tensor, laid out as the format says (8-byte little-endian header
//! length, the JSON header, the data).
void write_safetensors(const fs::path& path, const std::string& name, const std::string& dtype,
                       std::vector<std::int64_t> shape, const std::string& data) {
  const std::string header = nlohmann::json{
      {name, {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {0, data.size()}}}},
      {"__metadata__",
       {{"format", "pt"}}}}.dump();
  std::ofstream file(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) file.put(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  file << header << data;
}

std::string float_bytes(const std::vector<float>& values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

Tensor matrix(std::vector<std::vector<double>> rows) {
  Tensor t;
  t.shape = {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())};
  for (const auto& row : rows) t.values.insert(t.values.end(), row.begin(), row.end());
  return t;
}

TEST(TensorFileTest, ReadsFloatAndByteTensorsBack) {
  testing::TempDir dir("tensor-file");
  write_safetensors(dir.path() / "logits.safetensors", "logits", "F32", {2, 3},
                    float_bytes({1.5f, -2.0f, 0.25f, 3.0f, 0.0f, -1.0f}));
  auto logits = read_tensor(dir.path() / "logits.safetensors", "logits");
  ASSERT_TRUE(logits.ok()) << logits.error().message();
  EXPECT_EQ(logits->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(logits->row_size(), 3u);
  EXPECT_EQ(logits->values, (std::vector<double>{1.5, -2.0, 0.25, 3.0, 0.0, -1.0}));

  write_safetensors(dir.path() / "image.safetensors", "image", "U8", {1, 2, 3},
                    std::string("\x00\x01\x02\xff\x80\x7f", 6));
  auto image = read_tensor(dir.path() / "image.safetensors", "image");
  ASSERT_TRUE(image.ok()) << image.error().message();
  EXPECT_EQ(image->values, (std::vector<double>{0, 1, 2, 255, 128, 127}));
  // bfloat16 1.0 is 0x3f80; float16 -2.0 is 0xc000.
  write_safetensors(dir.path() / "half.safetensors", "x", "BF16", {1}, std::string("\x80\x3f", 2));
  EXPECT_EQ(read_tensor(dir.path() / "half.safetensors", "x")->values, std::vector<double>{1.0});
  write_safetensors(dir.path() / "f16.safetensors", "x", "F16", {1}, std::string("\x00\xc0", 2));
  EXPECT_EQ(read_tensor(dir.path() / "f16.safetensors", "x")->values, std::vector<double>{-2.0});
}

TEST(TensorFileTest, BadFilesAreErrorsNamingTheFile) {
  testing::TempDir dir("tensor-file-bad");
  const fs::path path = dir.path() / "outputs.safetensors";
  auto missing = read_tensor(path, "logits");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  write_safetensors(path, "logits", "F32", {2, 3}, float_bytes({1, 2, 3}));  // too few bytes
  auto short_data = read_tensor(path, "logits");
  ASSERT_FALSE(short_data.ok());
  EXPECT_EQ(short_data.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(short_data.error().message().find("outputs.safetensors"), std::string::npos);
  write_safetensors(path, "logits", "F32", {1}, float_bytes({1}));
  auto other = read_tensor(path, "image");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code(), ErrorCode::kNotFound);
  std::ofstream(path, std::ios::binary) << "not a safetensors file at all";
  EXPECT_EQ(read_tensor(path, "logits").error().code(), ErrorCode::kCorrupt);
}

TEST(LogitsTest, SameLogitsPassAndAnOtherBestClassIsFound) {
  const Tensor reference = matrix({{2.0, 0.5, -1.0}, {0.1, 0.2, 3.0}});
  const LogitsComparison same = compare_logits(reference, reference, "float32");
  EXPECT_TRUE(same.shape_error.empty());
  EXPECT_EQ(same.rows, 2u);
  EXPECT_EQ(same.max_relative_error, 0.0);
  EXPECT_FALSE(same.argmax_differs);

  Tensor got = reference;
  got.values[4] = 3.5;  // row 1 now prefers class 1
  const LogitsComparison differs = compare_logits(got, reference, "float32");
  ASSERT_TRUE(differs.argmax_differs);
  EXPECT_EQ(*differs.argmax_differs, 1u);
  EXPECT_EQ(differs.argmax, 1);
  EXPECT_EQ(differs.reference_argmax, 2);
  EXPECT_EQ(differs.worst, 1u);
  EXPECT_NEAR(differs.max_relative_error, 3.3 / std::sqrt(0.01 + 0.04 + 9.0), 1e-12);
}

TEST(LogitsTest, ANearTieMayFlipButNotBeyondTheDtypesTolerance) {
  // The reference's two best 1e-5 apart, of a row whose largest magnitude is 3: a tie.
  EXPECT_FALSE(
      compare_logits(matrix({{0.99999, 1.0, -3.0}}), matrix({{1.0, 0.99999, -3.0}}), "float32")
          .argmax_differs);
  // 0.1 apart: beyond float32's 1e-4 of 3, within bfloat16's 0.05 of 3.
  const Tensor reference = matrix({{1.0, 0.9, -3.0}});
  const Tensor got = matrix({{0.9, 1.0, -3.0}});
  EXPECT_TRUE(compare_logits(got, reference, "float32").argmax_differs);
  EXPECT_FALSE(compare_logits(got, reference, "bfloat16").argmax_differs);
}

TEST(LogitsTest, NaNAndShapesAreMismatches) {
  const Tensor reference = matrix({{1.0, 2.0}});
  const LogitsComparison nan = compare_logits(matrix({{NAN, 2.0}}), reference, "float32");
  EXPECT_EQ(nan.shape_error, "they hold NaN or infinite values (1 of 2)");
  const LogitsComparison inf = compare_logits(matrix({{1.0, -INFINITY}}), reference, "float32");
  EXPECT_EQ(inf.shape_error, "they hold NaN or infinite values (1 of 2)");
  // The reference's NaN: as far from it as can be.
  const LogitsComparison nan_reference = compare_logits(reference, matrix({{NAN, 2.0}}), "float32");
  EXPECT_TRUE(std::isinf(nan_reference.max_relative_error));
  const LogitsComparison shape = compare_logits(matrix({{1.0, 2.0, 3.0}}), reference, "float32");
  EXPECT_EQ(shape.shape_error, "logits of shape [1, 3], the reference's [1, 2]");
}

Tensor gradient_image(int size, int shift) {
  Tensor image;
  image.shape = {size, size, 3};
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < size; ++j)
      for (int c = 0; c < 3; ++c) image.values.push_back((i * 7 + j * 3 + c * 40 + shift) % 256);
  return image;
}

TEST(ImageTest, IdenticalImagesHaveInfinitePsnrAndSsimOne) {
  const Tensor image = gradient_image(16, 0);
  const ImageComparison same = compare_images(image, image);
  EXPECT_TRUE(same.shape_error.empty());
  EXPECT_TRUE(std::isinf(same.psnr_db));
  EXPECT_DOUBLE_EQ(same.ssim, 1.0);
  EXPECT_GT(same.pixel_std, kBlankPixelStd);
}

TEST(ImageTest, PsnrFollowsTheMeanSquaredError) {
  const Tensor image = gradient_image(16, 0);
  Tensor off = image;
  for (double& value : off.values) value = std::min(255.0, value + 2);  // mostly +2
  double squared = 0;
  for (std::size_t i = 0; i < image.values.size(); ++i)
    squared += (off.values[i] - image.values[i]) * (off.values[i] - image.values[i]);
  const double mse = squared / static_cast<double>(image.values.size());
  EXPECT_NEAR(psnr_db(off, image), 10 * std::log10(255.0 * 255.0 / mse), 1e-9);
  EXPECT_GT(psnr_db(off, image), 40);
}

TEST(ImageTest, SsimSeesStructureNotBrightness) {
  const Tensor image = gradient_image(16, 0);
  Tensor brighter = image, scrambled = image, blank = image;
  for (double& value : brighter.values) value = std::min(255.0, value + 10);
  for (std::size_t i = 0; i < scrambled.values.size(); ++i)
    scrambled.values[i] = static_cast<double>((i * 97) % 256);
  for (double& value : blank.values) value = 128;
  EXPECT_GT(ssim(brighter, image), 0.9);
  EXPECT_LT(ssim(scrambled, image), 0.2);
  const ImageComparison flat = compare_images(blank, image);
  EXPECT_LT(flat.pixel_std, kBlankPixelStd);
  Tensor small = gradient_image(8, 0);
  EXPECT_EQ(compare_images(small, image).shape_error,
            "an image of shape [8, 8, 3], the reference's [16, 16, 3]");
}

TEST(RankingTest, SameScoresAndOrderPass) {
  const Tensor reference = matrix({{2.0, -1.0, 0.5, 0.0}, {-0.5, 1.5, 1.0, -2.0}});
  Tensor got = reference;
  got.values[0] += 1e-6;
  const RankingComparison same = compare_ranking(got, reference, "float32");
  EXPECT_TRUE(same.shape_error.empty());
  EXPECT_EQ(same.queries, 2u);
  EXPECT_EQ(same.documents, 4u);
  EXPECT_FALSE(same.order_differs);
  EXPECT_LT(same.max_relative_error, 1e-4);
  EXPECT_EQ(ranked_documents(reference.values.data() + 4, 4),
            (std::vector<std::size_t>{1, 2, 0, 3}));
}

TEST(RankingTest, TwoDocumentsSwappedInOneQueryIsAnOrderThatDiffers) {
  const Tensor reference = matrix({{2.0, -1.0, 0.5, 0.0}, {-0.5, 1.5, 1.0, -2.0}});
  // The second query's documents 2 and 3 (0-based 1 and 2) swapped: the scores stay close
  // in bfloat16's bound, but the order is not the reference's.
  const Tensor got = matrix({{2.0, -1.0, 0.5, 0.0}, {-0.5, 1.2, 1.3, -2.0}});
  const RankingComparison swapped = compare_ranking(got, reference, "bfloat16");
  ASSERT_TRUE(swapped.order_differs);
  EXPECT_EQ(*swapped.order_differs, 1u);
  EXPECT_EQ(swapped.order, (std::vector<std::size_t>{2, 1, 0, 3}));
  EXPECT_EQ(swapped.reference_order, (std::vector<std::size_t>{1, 2, 0, 3}));
  EXPECT_EQ(swapped.worst, 1u);
  EXPECT_LT(swapped.max_relative_error, 0.25);
}

TEST(RankingTest, ANearTieOfTheReferenceMayGoEitherWay) {
  // The reference's documents 1 and 2 are 0.02 apart, within bfloat16's near-tie of a row whose
  // largest score is 2 (0.05 × 2): the run may order them either way; not in float32.
  const Tensor reference = matrix({{2.0, 1.01, 0.99, -1.0}});
  const Tensor got = matrix({{2.0, 0.99, 1.01, -1.0}});
  EXPECT_FALSE(compare_ranking(got, reference, "bfloat16").order_differs);
  EXPECT_TRUE(compare_ranking(got, reference, "float32").order_differs);
}

TEST(RankingTest, NanShapesAndFarScoresAreCaught) {
  const Tensor reference = matrix({{2.0, -1.0, 0.5}});
  Tensor nan = reference;
  nan.values[1] = std::nan("");
  EXPECT_NE(compare_ranking(nan, reference, "float32").shape_error.find("NaN"), std::string::npos);
  EXPECT_NE(compare_ranking(matrix({{2.0, -1.0}}), reference, "float32").shape_error.find("[1, 2]"),
            std::string::npos);
  EXPECT_FALSE(compare_ranking(matrix({{1.0}}), matrix({{1.0}}), "float32").shape_error.empty());
  // Same order, scores doubled: the order holds, the error (1.0) does not.
  const RankingComparison doubled =
      compare_ranking(matrix({{4.0, -2.0, 1.0}}), reference, "float32");
  EXPECT_FALSE(doubled.order_differs);
  EXPECT_NEAR(doubled.max_relative_error, 1.0, 1e-12);
}

}  // namespace
}  // namespace canrun::verify
