// The verdict rules of the verify step, called with plain values: a RunReport, a Reference, and
// for logits and images the safetensors files run.py would have written in its run folder.
#include "trial/verdict_rules.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/test_temp_dir.h"
#include "verify/embeddings.h"
#include "verify/image.h"
#include "verify/verification.h"

namespace canrun::trial {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

//! A safetensors file of one tensor, as run.py writes outputs.safetensors.
void write_safetensors(const fs::path& path, const std::string& name, const std::string& dtype,
                       const std::vector<std::int64_t>& shape, const std::string& data) {
  const std::string header =
      nlohmann::json{
          {name, {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {0, data.size()}}}}}
          .dump();
  std::ofstream file(path, std::ios::binary);
  for (int shift = 0; shift < 64; shift += 8)
    file.put(static_cast<char>((header.size() >> shift) & 0xff));
  file << header << data;
}

//! Logits rows as an F32 tensor "logits" in `path`.
void write_matrix(const fs::path& path, const std::string& name,
                  const std::vector<std::vector<float>>& rows) {
  std::string data;
  for (const auto& row : rows) {
    data.append(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(float));
  }
  write_safetensors(
      path, name, "F32",
      {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows.front().size())},
      data);
}

void write_logits(const fs::path& path, const std::vector<std::vector<float>>& rows) {
  write_matrix(path, "logits", rows);
}

//! An H × W × 3 image of 8-bit pixels, as run.py writes it.
struct Image {
  std::int64_t height = 0, width = 0;
  std::vector<std::uint8_t> pixels;
};

//! Every channel of pixel (row, column) is `value(row, column)`.
template <typename Value>
Image make_image(std::int64_t height, std::int64_t width, Value value) {
  Image image{height, width, {}};
  for (std::int64_t row = 0; row < height; ++row) {
    for (std::int64_t column = 0; column < width; ++column) {
      for (int channel = 0; channel < 3; ++channel) {
        image.pixels.push_back(static_cast<std::uint8_t>(value(row, column)));
      }
    }
  }
  return image;
}

void write_image(const fs::path& path, const Image& image) {
  write_safetensors(path, "image", "U8", {image.height, image.width, 3},
                    std::string(image.pixels.begin(), image.pixels.end()));
}

verify::Tensor tensor_of(const Image& image) {
  return {{image.height, image.width, 3}, {image.pixels.begin(), image.pixels.end()}};
}

//! A run folder holding run.py's outputs.safetensors, and the reference's file beside it.
class FileVerdictTest : public ::testing::Test {
 protected:
  FileVerdictTest() : dir_("trial-verdict") {
    fs::create_directories(run_dir());
    report_.outputs_file = "outputs.safetensors";
    reference_.outputs_file = dir_.path() / "reference.safetensors";
  }
  fs::path run_dir() const { return dir_.path() / "run"; }
  fs::path outputs() const { return run_dir() / "outputs.safetensors"; }

  testing::TempDir dir_;
  run::RunReport report_;
  verify::Reference reference_;
  dataset::VerdictRow row_;
};

// --- run_file and the reference's failure ----------------------------------------------------

TEST(RunFileTest, NamedFileThatIsThereIsItsPath) {
  testing::TempDir dir("trial-run-file");
  std::ofstream(dir.path() / "outputs.safetensors") << "x";
  auto found = run_file(dir.path(), "outputs.safetensors", "outputs");
  ASSERT_TRUE(found.ok()) << found.error().message();
  EXPECT_EQ(*found, dir.path() / "outputs.safetensors");
}

TEST(RunFileTest, MissingOrUnnamedFileIsCorruptSayingWhich) {
  testing::TempDir dir("trial-run-file");
  auto missing = run_file(dir.path(), "image.png", "image");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(missing.error().message(),
            "run.py named image.png as its image file, but it is not there");
  fs::create_directories(dir.path() / "image.png");  // a folder is not the file
  EXPECT_EQ(run_file(dir.path(), "image.png", "image").error().code(), ErrorCode::kCorrupt);
  auto unnamed = run_file(dir.path(), "", "outputs");
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(unnamed.error().message(), "run.py did not name its outputs file");
}

TEST(ReferenceFailureTest, IsReferenceFailNamingTheReferenceRun) {
  dataset::VerdictRow row;
  fail_for_reference({VerdictResult::kFailLoad, "ImportError: no module named x",
                      "ImportError: no module named x"},
                     fs::path("runs") / "tiny-reference", row);
  EXPECT_EQ(row.result, VerdictResult::kReferenceFail);
  EXPECT_EQ(row.error,
            "the CPU reference failed (FAIL_LOAD), so there is no verdict on the backend "
            "(runs/tiny-reference/run.py):\nImportError: no module named x");
  EXPECT_EQ(row.error_signature, "REFERENCE_FAIL | ImportError: no module named x");
}

// --- tokens (one core) -----------------------------------------------------------------------

TEST(TokensVerdictTest, EqualTokensPass) {
  run::RunReport report;
  report.tokens = {10, 11, 12, 13};
  dataset::VerdictRow row;
  compare_tokens_with_reference(report, {{10, 11, 12, 13}, "a b c d", {}, 0, {}, {}, {}}, "float32",
                                row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.verification, "reference");
  EXPECT_EQ(row.match_tokens, 4);
  EXPECT_EQ(row.error, std::nullopt);
  EXPECT_EQ(row.error_signature, std::nullopt);
}

TEST(TokensVerdictTest, ATranslationShowsWhatWasReadAndBothTexts) {
  run::RunReport report;
  report.text = "La maison";
  report.source = "translate English to French: The house (T5 task prefix)";
  const verify::Reference reference{{10, 11}, "La maison", {}, 0, {}, {}, {}};
  // A decoder's row keeps its text alone.
  EXPECT_EQ(predictions_text(*task::find_task("text-generation"), report, reference), "La maison");
  EXPECT_EQ(predictions_text(*task::find_task("translation"), report, reference),
            "source: translate English to French: The house (T5 task prefix)\n"
            "this run: La maison\nCPU reference: La maison");
  // Each text keeps its line: a line break or a control byte the model generated is escaped.
  report.text = "La\nmai\x0fson";
  EXPECT_EQ(predictions_text(*task::find_task("translation"), report, reference),
            "source: translate English to French: The house (T5 task prefix)\n"
            "this run: La\\nmai\\x0fson\nCPU reference: La maison");
}

TEST(TokensVerdictTest, DifferentTokenIsMismatchNamingTheFirstOne) {
  run::RunReport report;
  report.tokens = {10, 11, 99, 13};
  report.text = "a b x d";
  dataset::VerdictRow row;
  compare_tokens_with_reference(report, {{10, 11, 12, 13}, "a b c d", {}, 0, {}, {}, {}}, "float32",
                                row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.verification, "reference");
  EXPECT_EQ(row.match_tokens, 2);
  EXPECT_EQ(row.error,
            "token 3 of 4 differs from the CPU reference\nreference: a b c d\ngot:       a b x d");
  EXPECT_EQ(row.error_signature, "FAIL_MISMATCH");
}

TEST(TokensVerdictTest, FewerOrMoreTokensAreMismatch) {
  const verify::Reference reference{{10, 11, 12, 13}, "a b c d", {}, 0, {}, {}, {}};
  run::RunReport shorter;
  shorter.tokens = {10, 11};
  dataset::VerdictRow row;
  compare_tokens_with_reference(shorter, reference, "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.match_tokens, 2);
  EXPECT_EQ(row.error,
            "token 3 of 4 differs from the CPU reference\nreference: a b c d\ngot:       ");
  // Every reference token matched and more followed: the message counts past the reference.
  run::RunReport longer;
  longer.tokens = {10, 11, 12, 13, 14};
  compare_tokens_with_reference(longer, reference, "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.match_tokens, 4);
  EXPECT_EQ(row.error,
            "token 5 of 4 differs from the CPU reference\nreference: a b c d\ngot:       ");
}

TEST(TokensVerdictTest, ATokenThatPartsAtANearTieIsToldFromAWrongOne) {
  // The reference's best two logits at position 3 were 3e-5 of its largest apart (a near-tie in
  // float32); elsewhere they were far apart.
  const verify::Reference reference{{10, 11, 12, 13},     "a b c d", {}, 0, {}, {},
                                    {0.2, 0.1, 3e-5, 0.3}};
  run::RunReport report;
  report.tokens = {10, 11, 99, 98};
  report.text = "a b x y";
  report.agreement = 1.0;  // fed the reference's tokens, it predicts each one
  dataset::VerdictRow row;
  compare_tokens_with_reference(report, reference, "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.near_tie, true);
  EXPECT_EQ(row.match_tokens, 2);
  EXPECT_EQ(row.error, std::nullopt);

  // A near-tie, but the agreement says the model predicts other tokens too.
  report.agreement = 0.5;
  row = {};
  compare_tokens_with_reference(report, reference, "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.near_tie, true);
  EXPECT_THAT(*row.error, HasSubstr("within 3e-05 of its largest (a near-tie), but the "
                                    "teacher-forced agreement 0.500 is below 0.90"));

  // Parting where the reference was sure is a mismatch whatever the agreement.
  report.tokens = {10, 99, 12, 13};
  report.agreement = 1.0;
  row = {};
  compare_tokens_with_reference(report, reference, "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.near_tie, std::nullopt);
  // bfloat16 keeps 8 bits: 0.1 apart is not a tie there either, 0.03 is.
  row = {};
  compare_tokens_with_reference(report, reference, "bfloat16", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  const verify::Reference bf16{{10, 11, 12, 13}, "a b c d", {}, 0, {}, {}, {0.2, 0.03, 0.1, 0.1}};
  row = {};
  compare_tokens_with_reference(report, bf16, "bfloat16", row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.near_tie, true);
}

TEST(ShardedAgreementVerdictTest, TheAgreementDecidesAndANearTieIsSaid) {
  const verify::Reference reference{{10, 11, 12, 13},     "a b c d", {}, 0, {}, {},
                                    {0.2, 0.1, 3e-5, 0.3}};
  run::RunReport report;
  report.tokens = {10, 11, 99, 98};  // parts at token 3, a near-tie of the reference
  report.text = "a b x y";
  report.agreement = 0.95;
  report.agreement_positions = 20;
  dataset::VerdictRow row;
  ASSERT_TRUE(agree_sharded_run(report, reference, "float32", row).ok());
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.verification, "agreement");
  EXPECT_EQ(row.near_tie, true);
  EXPECT_EQ(row.match_tokens, 2);

  report.agreement = 0.5;
  row = {};
  ASSERT_TRUE(agree_sharded_run(report, reference, "float32", row).ok());
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.near_tie, true);
  EXPECT_THAT(*row.error, HasSubstr("at 10 of 20 positions; the free-running tokens part from "
                                    "the reference's at token 3, where its two best logits were "
                                    "within 3e-05 of its largest (a near-tie)"));

  // Parting where the reference was sure: no near-tie, the same failure.
  report.tokens = {10, 99, 12, 13};
  row = {};
  ASSERT_TRUE(agree_sharded_run(report, reference, "float32", row).ok());
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.near_tie, std::nullopt);
  EXPECT_THAT(*row.error, HasSubstr("at 10 of 20 positions\nreference: a b c d"));

  // Without a measured agreement there is nothing to decide by.
  report.agreement.reset();
  EXPECT_FALSE(agree_sharded_run(report, reference, "float32", row).ok());
}

// --- logits (one core, encoder tasks) --------------------------------------------------------

class LogitsVerdictTest : public FileVerdictTest {
 protected:
  LogitsVerdictTest() {
    spec_.name = "text-classification";
    spec_.logits_row = "sentence";
    report_.text = "2 sentences classified";
  }
  Status compare(const std::vector<std::vector<float>>& got,
                 const std::vector<std::vector<float>>& reference, const std::string& dtype) {
    write_logits(outputs(), got);
    write_logits(reference_.outputs_file, reference);
    return compare_logits_with_reference(spec_, run_dir(), report_, reference_, dtype, row_);
  }
  task::TaskSpec spec_;
};

TEST_F(LogitsVerdictTest, EqualLogitsPassWithTheirSummary) {
  report_.throughput = 12.5;
  report_.throughput_unit = "sentences/s";
  ASSERT_TRUE(compare({{1, 2, 3}, {3, 1, 0}}, {{1, 2, 3}, {3, 1, 0}}, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kPass);
  EXPECT_EQ(row_.verification, "reference");
  EXPECT_EQ(row_.error, std::nullopt);
  EXPECT_EQ(row_.output_text,
            "2 sentences classified\n2 rows of logits; largest relative error against the CPU "
            "reference 0 (threshold 0.0001); 12.5 sentences/s");
}

TEST_F(LogitsVerdictTest, RelativeErrorBeyondTheDtypesThresholdIsMismatch) {
  // Sentence 2 is 0.5 away from [3, 0, 4] (norm 5): relative error 0.1, its argmax unchanged.
  ASSERT_TRUE(compare({{1, 2, 3}, {3, 0, 4.5}}, {{1, 2, 3}, {3, 0, 4}}, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error,
            "sentence 2: the logits are 0.1 away from the CPU reference's (relative error), above "
            "the float32 threshold 0.0001");
  EXPECT_EQ(row_.error_signature, "FAIL_MISMATCH | logits differ from the CPU reference");
  EXPECT_EQ(row_.output_text,
            "2 sentences classified\n2 rows of logits; largest relative error against the CPU "
            "reference 0.1 (threshold 0.0001)");
}

TEST_F(LogitsVerdictTest, RelativeErrorWithinTheDtypesThresholdPasses) {
  ASSERT_TRUE(compare({{1, 2, 3}, {3, 0, 4.5}}, {{1, 2, 3}, {3, 0, 4}}, "bfloat16").ok());
  EXPECT_EQ(row_.result, VerdictResult::kPass);
  EXPECT_EQ(row_.error, std::nullopt);
  EXPECT_EQ(row_.output_text,
            "2 sentences classified\n2 rows of logits; largest relative error against the CPU "
            "reference 0.1 (threshold 0.25)");
}

TEST_F(LogitsVerdictTest, OtherBestClassIsMismatchNamingRowAndClasses) {
  ASSERT_TRUE(compare({{1, 2, 3}, {0, 1, 5}}, {{1, 2, 3}, {0, 5, 1}}, "bfloat16").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error, "sentence 2: the logits pick class 2, the CPU reference's class 1");
  EXPECT_EQ(row_.error_signature, "FAIL_MISMATCH | logits differ from the CPU reference");
}

TEST_F(LogitsVerdictTest, NearTieOfTheReferenceMayFlipItsBestClass) {
  // The reference's two best are 0.125 apart, within bfloat16's tie tolerance (0.05 of the
  // largest, 4) but not float32's (1e-4 of it).
  ASSERT_TRUE(compare({{3.875f, 4, 0}}, {{4, 3.875f, 0}}, "bfloat16").ok());
  EXPECT_EQ(row_.result, VerdictResult::kPass);
  ASSERT_TRUE(compare({{3.875f, 4, 0}}, {{4, 3.875f, 0}}, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error, "sentence 1: the logits pick class 1, the CPU reference's class 0");
}

TEST_F(LogitsVerdictTest, RowNamedRowWhenTheTaskDoesNotSay) {
  spec_.logits_row = {};
  ASSERT_TRUE(compare({{0, 1, 5}}, {{0, 5, 1}}, "float32").ok());
  EXPECT_EQ(row_.error, "row 1: the logits pick class 2, the CPU reference's class 1");
}

TEST_F(LogitsVerdictTest, NaNOrInfinityIsAMismatchThatSaysSo) {
  // Wherever it is (even where the reference's best class is, so that no argmax differs): what
  // a broken backend computes is named, not measured.
  ASSERT_TRUE(compare({{NAN, 0, 0}}, {{5, 0, 0}}, "bfloat16").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error,
            "the logits do not match the CPU reference's: they hold NaN or infinite values (1 of "
            "3)");
  ASSERT_TRUE(compare({{5, INFINITY, 0}}, {{5, 0, 0}}, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error,
            "the logits do not match the CPU reference's: they hold NaN or infinite values (1 of "
            "3)");
}

TEST_F(LogitsVerdictTest, OtherShapeIsMismatch) {
  ASSERT_TRUE(compare({{1, 2, 3}, {3, 2, 1}}, {{1, 2, 3}}, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error,
            "the logits do not match the CPU reference's: logits of shape [2, 3], the "
            "reference's [1, 3]");
  EXPECT_EQ(row_.output_text,
            "2 sentences classified\n0 rows of logits; largest relative error against the CPU "
            "reference 0 (threshold 0.0001)");
}

TEST_F(LogitsVerdictTest, MissingFilesAreErrorsNotVerdicts) {
  write_logits(reference_.outputs_file, {{1, 2, 3}});
  Status missing =
      compare_logits_with_reference(spec_, run_dir(), report_, reference_, "float32", row_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(missing.error().message(),
            "run.py named outputs.safetensors as its outputs file, but it is not there");
  EXPECT_EQ(row_.result, VerdictResult::kCrash);  // untouched: no verdict

  write_safetensors(outputs(), "image", "F32", {1}, std::string(4, '\0'));  // not logits
  Status no_tensor =
      compare_logits_with_reference(spec_, run_dir(), report_, reference_, "float32", row_);
  ASSERT_FALSE(no_tensor.ok());
  EXPECT_EQ(no_tensor.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(no_tensor.error().message(), outputs().string() + " has no tensor logits");

  write_logits(outputs(), {{1, 2, 3}});
  fs::remove(reference_.outputs_file);
  Status no_reference =
      compare_logits_with_reference(spec_, run_dir(), report_, reference_, "float32", row_);
  ASSERT_FALSE(no_reference.ok());
  EXPECT_EQ(no_reference.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(row_.result, VerdictResult::kCrash);
}

// --- ranking (one core, text-ranking) --------------------------------------------------------

class RankingVerdictTest : public FileVerdictTest {
 protected:
  RankingVerdictTest() {
    spec_.name = "text-ranking";
    spec_.shows_reference_prediction = true;
    report_.source = "q1: Where?\nd1: Here.\nd2: There.\nd3: Nowhere.";
    report_.text = "q1: d1 > d3 > d2";
    reference_.text = "q1: d1 > d3 > d2";
  }
  Status compare(const std::vector<std::vector<float>>& got,
                 const std::vector<std::vector<float>>& reference, const std::string& dtype) {
    write_matrix(outputs(), "scores", got);
    write_matrix(reference_.outputs_file, "scores", reference);
    return compare_ranking_with_reference(spec_, run_dir(), report_, reference_, dtype, row_);
  }
  task::TaskSpec spec_;
};

TEST_F(RankingVerdictTest, SameScoresPassShowingQueriesDocumentsAndBothOrders) {
  report_.throughput = 40;
  report_.throughput_unit = "pairs/s";
  ASSERT_TRUE(compare({{3, -2, 1}}, {{3, -2, 1}}, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kPass);
  EXPECT_EQ(row_.verification, "reference");
  EXPECT_EQ(row_.output_text,
            "source: q1: Where?\nd1: Here.\nd2: There.\nd3: Nowhere.\nthis run: q1: d1 > d3 > d2\n"
            "CPU reference: q1: d1 > d3 > d2\n1 queries × 3 documents; largest relative error of a "
            "query's scores against the CPU reference 0 (threshold 0.0001); 40.0 pairs/s");
}

TEST_F(RankingVerdictTest, AnotherOrderIsMismatchNamingTheQueryAndBothOrders) {
  // Within bfloat16’s relative error (0.1 of 0.25), but documents 2 and 3 swap places in query 2.
  ASSERT_TRUE(
      compare({{3, -2, 1}, {0, 0.95, 1.05}}, {{3, -2, 1}, {0, 1.05, 0.95}}, "bfloat16").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error,
            "query 2: the documents rank d3 > d2 > d1, the CPU reference's d2 > d3 > d1");
  EXPECT_EQ(row_.error_signature, "FAIL_MISMATCH | scores differ from the CPU reference");
}

TEST_F(RankingVerdictTest, ScoresFarFromTheReferencesInTheSameOrderAreMismatch) {
  ASSERT_TRUE(compare({{6, -4, 2}}, {{3, -2, 1}}, "bfloat16").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error,
            "query 1: the scores are 1 away from the CPU reference's (relative error), above the "
            "bfloat16 threshold 0.25");
}

TEST_F(RankingVerdictTest, NaNScoresAreAMismatchThatSaysSo) {
  ASSERT_TRUE(compare({{3, NAN, 1}}, {{3, -2, 1}}, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(
      row_.error,
      "the scores do not match the CPU reference's: they hold NaN or infinite values (1 of 3)");
}

TEST_F(RankingVerdictTest, MissingScoresAreErrorsNotVerdicts) {
  write_logits(outputs(), {{1, 2, 3}});  // logits, no scores
  write_matrix(reference_.outputs_file, "scores", {{1, 2, 3}});
  Status no_scores =
      compare_ranking_with_reference(spec_, run_dir(), report_, reference_, "float32", row_);
  ASSERT_FALSE(no_scores.ok());
  EXPECT_EQ(no_scores.error().message(), outputs().string() + " has no tensor scores");
  EXPECT_EQ(row_.result, VerdictResult::kCrash);
}

// --- image (one core, text-to-image) ---------------------------------------------------------

class ImageVerdictTest : public FileVerdictTest {
 protected:
  Status compare(const Image& got, const Image& reference, const std::string& dtype) {
    write_image(outputs(), got);
    write_image(reference_.outputs_file, reference);
    return compare_image_with_reference(run_dir(), report_, reference_, dtype, row_);
  }
  //! A gradient of 8 × 8 pixels from 0 to 189, all below 250.
  static Image gradient(int offset = 0) {
    return make_image(8, 8, [=](auto row, auto column) { return 3 * (8 * row + column) + offset; });
  }
  //! A checkerboard of `low` and `low + 3`, starting with `low` or `low + 3` at the corner.
  static Image checkerboard(int low, bool high_first) {
    return make_image(8, 8, [=](auto row, auto column) {
      return low + (((row + column) % 2 == 0) == high_first ? 3 : 0);
    });
  }
};

TEST_F(ImageVerdictTest, EqualImagePassesWithItsSummary) {
  report_.throughput = 0.5;
  report_.throughput_unit = "images/s";
  ASSERT_TRUE(compare(gradient(), gradient(), "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kPass);
  EXPECT_EQ(row_.verification, "reference");
  EXPECT_EQ(row_.error, std::nullopt);
  EXPECT_EQ(row_.output_text,
            "8×8 image; against the CPU reference PSNR inf dB (threshold 35), SSIM 1.0000 "
            "(threshold 0.98); 0.50 images/s");
}

TEST_F(ImageVerdictTest, PsnrUnderTheDtypesThresholdIsMismatch) {
  // Every value 5 brighter: PSNR 20·log10(255/5) = 34.2 dB, under float32's 35, over
  // bfloat16's 25; the structure, and so SSIM, barely changes.
  const double ssim = verify::ssim(tensor_of(gradient(5)), tensor_of(gradient()));
  ASSERT_GE(ssim, 0.98);
  ASSERT_TRUE(compare(gradient(5), gradient(), "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error, fmt::format("the image differs from the CPU reference's: PSNR 34.2 dB "
                                    "(threshold 35), SSIM {:.4f} (threshold 0.98) in float32",
                                    ssim));
  EXPECT_EQ(row_.error_signature, "FAIL_MISMATCH | image differ from the CPU reference");

  ASSERT_TRUE(compare(gradient(5), gradient(), "bfloat16").ok());
  EXPECT_EQ(row_.result, VerdictResult::kPass);
  EXPECT_EQ(row_.output_text,
            fmt::format("8×8 image; against the CPU reference PSNR 34.2 dB (threshold 25), SSIM "
                        "{:.4f} (threshold 0.9)",
                        ssim));
}

TEST_F(ImageVerdictTest, SsimUnderTheThresholdIsMismatchWhateverThePsnr) {
  // The checkerboard inverted: each pixel 3 away (PSNR 38.6 dB, over 35), the structure opposite.
  const Image got = checkerboard(100, true), reference = checkerboard(100, false);
  const double ssim = verify::ssim(tensor_of(got), tensor_of(reference));
  ASSERT_LT(ssim, 0.98);
  ASSERT_TRUE(compare(got, reference, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error, fmt::format("the image differs from the CPU reference's: PSNR 38.6 dB "
                                    "(threshold 35), SSIM {:.4f} (threshold 0.98) in float32",
                                    ssim));
}

TEST_F(ImageVerdictTest, BlankImageIsMismatchEvenWhenTheReferenceIsBlankToo) {
  const Image grey = make_image(8, 8, [](auto, auto) { return 128; });
  ASSERT_TRUE(compare(grey, grey, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error, "the image is blank (pixel standard deviation 0.00)");
  EXPECT_EQ(row_.error_signature, "FAIL_MISMATCH | image differ from the CPU reference");
}

TEST_F(ImageVerdictTest, NaNValuesAreMismatchBeforeBlankOrDistance) {
  report_.nan_values = 12;
  ASSERT_TRUE(compare(gradient(), gradient(), "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error, "the image holds 12 NaN values");
  report_.nan_values = 0;
  ASSERT_TRUE(compare(gradient(), gradient(), "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kPass);
}

TEST_F(ImageVerdictTest, OtherShapeIsMismatch) {
  report_.nan_values = 12;  // the shape is said first
  const Image small = make_image(4, 4, [](auto row, auto column) { return 10 * (row + column); });
  ASSERT_TRUE(compare(gradient(), small, "float32").ok());
  EXPECT_EQ(row_.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row_.error,
            "the image does not match the CPU reference's: an image of shape [8, 8, 3], the "
            "reference's [4, 4, 3]");
  EXPECT_EQ(row_.output_text,
            "8×8 image; against the CPU reference PSNR 0.0 dB (threshold 35), SSIM 0.0000 "
            "(threshold 0.98)");

  write_safetensors(outputs(), "image", "U8", {64, 3}, std::string(192, '\x10'));
  ASSERT_TRUE(compare_image_with_reference(run_dir(), report_, reference_, "float32", row_).ok());
  EXPECT_EQ(row_.error,
            "the image does not match the CPU reference's: an image of shape [64, 3], the "
            "reference's [4, 4, 3]");
  EXPECT_EQ(row_.output_text.value().substr(0, 9), "no image;");
}

TEST_F(ImageVerdictTest, MissingFilesAreErrorsNotVerdicts) {
  report_.outputs_file.clear();
  Status unnamed = compare_image_with_reference(run_dir(), report_, reference_, "float32", row_);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(unnamed.error().message(), "run.py did not name its outputs file");

  report_.outputs_file = "outputs.safetensors";
  write_image(outputs(), gradient());
  Status no_reference =
      compare_image_with_reference(run_dir(), report_, reference_, "float32", row_);
  ASSERT_FALSE(no_reference.ok());
  EXPECT_EQ(no_reference.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(no_reference.error().message(),
            reference_.outputs_file.string() + " does not exist or cannot be read");
  EXPECT_EQ(row_.result, VerdictResult::kCrash);  // untouched: no verdict
}

// --- embeddings (one core, sentence similarity) ----------------------------------------------

//! One query [1, 0] and two documents its nearest in this order, then a third, farther one.
verify::Reference embedding_reference() {
  verify::Reference reference;
  reference.embeddings = {{1, 0}, {1, 0.10}, {1, 0.11}, {0, 1}};
  reference.queries = 1;
  return reference;
}

run::RunReport embedding_report(const verify::Embeddings& batched,
                                const verify::Embeddings& alone) {
  run::RunReport report;
  report.embeddings = batched;
  report.embeddings_one_at_a_time = alone;
  return report;
}

TEST(EmbeddingsVerdictTest, EqualEmbeddingsPassWithTheirSummary) {
  const verify::Reference reference = embedding_reference();
  run::RunReport report = embedding_report(reference.embeddings, reference.embeddings);
  report.throughput = 40;
  report.throughput_unit = "sentences/s";
  dataset::VerdictRow row;
  compare_embeddings_with_reference(report, reference, "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.verification, "reference");
  EXPECT_EQ(row.error, std::nullopt);
  EXPECT_EQ(row.output_text,
            "4 sentences, 2-dimensional embeddings; lowest cosine similarity with the CPU "
            "reference 1.000000 (threshold 0.99999); 40.0 sentences/s");
}

TEST(EmbeddingsVerdictTest, CosineUnderTheDtypesThresholdIsMismatchNamingSentenceAndHow) {
  const verify::Reference reference = embedding_reference();
  verify::Embeddings turned = reference.embeddings;
  turned[3] = {0.01, 1};  // cosine 0.99995: under float32's 0.99999, over bfloat16's 0.999
  const double cosine = verify::cosine(turned[3], reference.embeddings[3]);
  dataset::VerdictRow row;
  compare_embeddings_with_reference(embedding_report(turned, reference.embeddings), reference,
                                    "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.error, fmt::format("sentence 4's embedding (encoded in batches) has cosine "
                                   "similarity {:.6f} with the CPU reference's, below the float32 "
                                   "threshold 0.99999",
                                   cosine));
  EXPECT_EQ(row.error_signature, "FAIL_MISMATCH | embeddings differ from the CPU reference");
  EXPECT_EQ(row.output_text,
            fmt::format("4 sentences, 2-dimensional embeddings; lowest cosine similarity with the "
                        "CPU reference {:.6f} (threshold 0.99999)",
                        cosine));

  compare_embeddings_with_reference(embedding_report(reference.embeddings, turned), reference,
                                    "float32", row);
  EXPECT_EQ(row.error, fmt::format("sentence 4's embedding (encoded one at a time) has cosine "
                                   "similarity {:.6f} with the CPU reference's, below the float32 "
                                   "threshold 0.99999",
                                   cosine));

  dataset::VerdictRow within;
  compare_embeddings_with_reference(embedding_report(turned, turned), reference, "bfloat16",
                                    within);
  EXPECT_EQ(within.result, VerdictResult::kPass);
}

TEST(EmbeddingsVerdictTest, OtherNearestDocumentsAreMismatch) {
  const verify::Reference reference = embedding_reference();
  verify::Embeddings swapped = reference.embeddings;
  swapped[1] = {1, 0.12};  // now farther from the query than document 2; cosine 0.9998
  dataset::VerdictRow row;
  compare_embeddings_with_reference(embedding_report(reference.embeddings, swapped), reference,
                                    "bfloat16", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.error, "query 1's nearest 3 documents are not the CPU reference's, in its order");
  EXPECT_EQ(row.error_signature, "FAIL_MISMATCH | embeddings differ from the CPU reference");
}

TEST(EmbeddingsVerdictTest, OtherCountIsMismatch) {
  const verify::Reference reference = embedding_reference();
  dataset::VerdictRow row;
  compare_embeddings_with_reference(embedding_report({{1, 0}}, reference.embeddings), reference,
                                    "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.error,
            "the embeddings encoded in batches do not match the CPU reference's: 1 embeddings, "
            "the CPU reference has 4");
  EXPECT_EQ(row.output_text,
            "4 sentences, 2-dimensional embeddings; lowest cosine similarity with the CPU "
            "reference 0.000000 (threshold 0.99999)");
  // A run that reported no embeddings encoded one at a time fails on them.
  compare_embeddings_with_reference(embedding_report(reference.embeddings, {}), reference,
                                    "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.error,
            "the embeddings encoded one at a time do not match the CPU reference's: 0 "
            "embeddings, the CPU reference has 4");
}

TEST(EmbeddingsVerdictTest, NaNOrInfInTheRunsEmbeddingsIsMismatch) {
  const verify::Reference reference = embedding_reference();
  verify::Embeddings broken = reference.embeddings;
  broken[1] = {kNaN, 0};
  dataset::VerdictRow row;
  compare_embeddings_with_reference(embedding_report(broken, reference.embeddings), reference,
                                    "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.error,
            "the embeddings encoded in batches do not match the CPU reference's: sentence 2's "
            "embedding holds NaN or infinite values (1 of 2)");
  broken[1] = {1, INFINITY};
  compare_embeddings_with_reference(embedding_report(reference.embeddings, broken), reference,
                                    "float32", row);
  EXPECT_EQ(row.error,
            "the embeddings encoded one at a time do not match the CPU reference's: sentence 2's "
            "embedding holds NaN or infinite values (1 of 2)");
}

TEST(EmbeddingsVerdictTest, NaNInTheReferencesEmbeddingsIsNotCaught) {
  // As the code stands: a NaN cosine never lowers the minimum, so a sentence whose reference
  // embedding holds NaN is skipped, and the others decide (no queries here: the nearest
  // documents of a NaN are another matter).
  verify::Reference reference = embedding_reference();
  reference.queries = 0;
  const verify::Embeddings got = reference.embeddings;
  reference.embeddings[2] = {kNaN, 0};
  dataset::VerdictRow row;
  compare_embeddings_with_reference(embedding_report(got, got), reference, "float32", row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.output_text,
            "4 sentences, 2-dimensional embeddings; lowest cosine similarity with the CPU "
            "reference 1.000000 (threshold 0.99999)");
}

// --- judge and agreement (sharded) -----------------------------------------------------------

judge::Judgement judgement(bool fluent) {
  return {fluent ? 2.5 : -1.0, 1.0, fluent, "SmolLM2-135M-Instruct@abc", R"({"bias":-0.5})"};
}

const verify::Reference kShardedReference{
    {1, 2, 3, 4}, "The cat sat on the mat.", {}, 0, {}, {}, {}};

run::RunReport sharded_report(std::optional<double> agreement) {
  run::RunReport report;
  report.tokens = {1, 2, 7, 4};
  report.text = "The cat sat in the hat.";
  report.agreement = agreement;
  report.agreement_positions = 32;
  return report;
}

TEST(ShardedVerdictTest, FluentWithAgreementAtTheThresholdPasses) {
  dataset::VerdictRow row;
  judge_sharded_run(sharded_report(verify::kAgreementThreshold), kShardedReference, judgement(true),
                    row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.verification, "judge+agreement");
  EXPECT_EQ(row.match_tokens, 2);  // information only
  EXPECT_EQ(row.judge_score, 2.5);
  EXPECT_EQ(row.judge_threshold, 1.0);
  EXPECT_EQ(row.judge_model, "SmolLM2-135M-Instruct@abc");
  EXPECT_EQ(row.judge_parts, R"({"bias":-0.5})");
  EXPECT_EQ(row.error, std::nullopt);
  EXPECT_EQ(row.error_signature, std::nullopt);
}

TEST(ShardedVerdictTest, AgreementBelowTheThresholdIsMismatchWhateverTheJudgeSays) {
  dataset::VerdictRow row;
  judge_sharded_run(sharded_report(25.0 / 32), kShardedReference, judgement(true), row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_EQ(row.verification, "judge+agreement");
  EXPECT_EQ(row.error,
            "teacher-forced agreement 0.781 below threshold 0.90: fed the CPU reference's "
            "tokens, the model's next token was the reference's at 25 of 32 positions (the judge "
            "SmolLM2-135M-Instruct@abc scored the text 2.500, at or above its threshold 1.000: "
            "fluent English)\nreference: The cat sat on the mat.\ngot:       The cat sat in the "
            "hat.");
  EXPECT_EQ(row.error_signature, "FAIL_MISMATCH | teacher-forced agreement below threshold");
  EXPECT_EQ(row.judge_score, 2.5);

  judge_sharded_run(sharded_report(25.0 / 32), kShardedReference, judgement(false), row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_NE(row.error->find("below its threshold 1.000: not fluent English)"), std::string::npos);
}

TEST(ShardedVerdictTest, AgreementWithoutPositionsCountsNone) {
  run::RunReport report = sharded_report(0.5);
  report.agreement_positions.reset();
  dataset::VerdictRow row;
  judge_sharded_run(report, kShardedReference, judgement(true), row);
  EXPECT_EQ(row.result, VerdictResult::kFailMismatch);
  EXPECT_NE(row.error->find("the reference's at 0 of 0 positions"), std::string::npos);
}

TEST(ShardedVerdictTest, NotFluentIsJudgeFailure) {
  dataset::VerdictRow row;
  judge_sharded_run(sharded_report(1.0), kShardedReference, judgement(false), row);
  EXPECT_EQ(row.result, VerdictResult::kFailJudge);
  EXPECT_EQ(row.error,
            "the judge SmolLM2-135M-Instruct@abc scored the text -1.000, below its threshold "
            "1.000: not fluent English\ngot: The cat sat in the hat.");
  EXPECT_EQ(row.error_signature, "FAIL_JUDGE");
}

TEST(ShardedVerdictTest, WithoutReferenceOrAgreementTheJudgeAloneDecides) {
  // No reference: the agreement is not evidence (it was not measured against this reference),
  // and match_tokens is not known.
  dataset::VerdictRow row;
  judge_sharded_run(sharded_report(0.1), std::nullopt, judgement(true), row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.verification, "judge");
  EXPECT_EQ(row.match_tokens, std::nullopt);

  dataset::VerdictRow unmeasured;
  judge_sharded_run(sharded_report(std::nullopt), kShardedReference, judgement(false), unmeasured);
  EXPECT_EQ(unmeasured.result, VerdictResult::kFailJudge);
  EXPECT_EQ(unmeasured.verification, "judge");
  EXPECT_EQ(unmeasured.match_tokens, 2);
}

TEST(ShardedVerdictTest, NaNAgreementIsNotBelowTheThreshold) {
  // As the code stands: NaN < threshold is false, so a NaN agreement leaves the judge to decide.
  dataset::VerdictRow row;
  judge_sharded_run(sharded_report(kNaN), kShardedReference, judgement(true), row);
  EXPECT_EQ(row.result, VerdictResult::kPass);
  EXPECT_EQ(row.verification, "judge+agreement");
}

}  // namespace
}  // namespace canrun::trial
