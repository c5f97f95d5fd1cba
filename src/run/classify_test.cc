#include "run/classify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>

namespace canrun::run {
namespace {

using ::testing::HasSubstr;

RunReport succeeded() {
  RunReport report;
  report.ok = true;
  return report;
}

process::ProcessOutcome exited(int code) {
  process::ProcessOutcome outcome;
  outcome.exit_code = code;
  return outcome;
}

RunReport failed(std::string stage, std::vector<std::string> types, std::string error) {
  RunReport report;
  report.ok = false;
  report.stage = std::move(stage);
  report.error_types = std::move(types);
  report.error = std::move(error);
  return report;
}

TEST(ResultLineTest, TakesTheLastResultLine) {
  auto report = parse_result_line(
      "noise\nCANRUN_RESULT {\"ok\": false}\nmore noise CANRUN_RESULT {\"ok\": false}\n"
      "CANRUN_RESULT {\"ok\": true, \"stage\": \"done\", \"tokens\": [1, 2, 3], \"text\": \"hi\", "
      "\"load_s\": 1.5, \"peak_device_memory_bytes\": 1024, \"versions\": {\"torch\": "
      "\"2.13.0\"}, \"compile_cache\": {\"hits\": 3, \"misses\": 1}}\n");
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->has_value());
  EXPECT_TRUE((*report)->ok);
  EXPECT_EQ((*report)->tokens, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ((*report)->load_s, 1.5);
  EXPECT_EQ((*report)->versions.at("torch"), "2.13.0");
  EXPECT_EQ((*report)->compile_cache, (CompileCacheCounts{3, 1}));
  // A backend that keeps no count says nothing (null), which is not zero hits.
  EXPECT_EQ((*parse_result_line("CANRUN_RESULT {\"ok\": true, \"compile_cache\": null}\n"))
                ->compile_cache,
            std::nullopt);
  EXPECT_FALSE(parse_result_line("no result here\n")->has_value());
  EXPECT_EQ(parse_result_line("CANRUN_RESULT {not json\n").error().code(), ErrorCode::kCorrupt);
}

TEST(ResultLineTest, ReadsTheTeacherForcedPass) {
  auto report = parse_result_line(
      "CANRUN_RESULT {\"ok\": true, \"tokens\": [1], \"agreement\": 0.75, "
      "\"agreement_positions\": 32, \"agreement_s\": 0.5, \"agreement_compiled_graphs\": 0}\n");
  ASSERT_TRUE(report.ok() && report->has_value());
  EXPECT_EQ((*report)->agreement, 0.75);
  EXPECT_EQ((*report)->agreement_positions, 32);
  EXPECT_EQ((*report)->agreement_s, 0.5);
  EXPECT_EQ((*report)->agreement_compiled_graphs, 0);
  // A run.py run alone (no reference given) reports no agreement: none, not zero.
  auto alone = parse_result_line("CANRUN_RESULT {\"ok\": true, \"tokens\": [1]}\n");
  ASSERT_TRUE(alone.ok() && alone->has_value());
  EXPECT_EQ((*alone)->agreement, std::nullopt);
  EXPECT_EQ((*alone)->agreement_positions, std::nullopt);
  // A share outside [0, 1] is not one.
  EXPECT_EQ((*parse_result_line("CANRUN_RESULT {\"ok\": true, \"agreement\": 1.5}\n"))->agreement,
            std::nullopt);
}

TEST(ResultLineTest, NullAmongEmbeddingsIsAValueThatWasNotFinite) {
  // run.py writes NaN and infinities as null (JSON has neither); the comparison then names them.
  auto report =
      parse_result_line("CANRUN_RESULT {\"ok\": true, \"embeddings\": [[0.5, null], [1, 2]]}\n");
  ASSERT_TRUE(report.ok() && report->has_value());
  ASSERT_EQ((*report)->embeddings.size(), 2u);
  EXPECT_EQ((*report)->embeddings[0][0], 0.5);
  EXPECT_TRUE(std::isnan((*report)->embeddings[0][1]));
  EXPECT_FALSE(
      parse_result_line("CANRUN_RESULT {\"ok\": true, \"embeddings\": [[\"NaN\"]]}\n").ok());
}

TEST(ClassifyTest, StagesAndOom) {
  EXPECT_FALSE(classify(exited(0), succeeded()).has_value());
  EXPECT_EQ(
      classify(exited(1), failed("load", {"ValueError"}, "ValueError: unknown model type"))->result,
      VerdictResult::kFailLoad);
  EXPECT_EQ(classify(exited(1), failed("compile", {"BackendCompilerFailed", "RuntimeError"}, "x"))
                ->result,
            VerdictResult::kFailCompile);
  EXPECT_EQ(classify(exited(1), failed("generate", {"RuntimeError"}, "RuntimeError: boom"))->result,
            VerdictResult::kFailRuntime);
  EXPECT_EQ(
      classify(exited(1), failed("compile", {"BackendCompilerFailed", "OutOfMemoryError"}, "x"))
          ->result,
      VerdictResult::kFailOom);
  EXPECT_EQ(
      classify(exited(1), failed("generate", {"RuntimeError"},
                                 "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"))
          ->result,
      VerdictResult::kFailOom);
  EXPECT_EQ(classify(exited(1), failed("generate", {"RuntimeError"},
                                       "RuntimeError: NRT: Failed to allocate 1 GiB"))
                ->result,
            VerdictResult::kFailOom);
}

TEST(ClassifyTest, DeathsAndTimeouts) {
  process::ProcessOutcome killed;
  killed.term_signal = SIGKILL;
  auto crash = classify(killed, std::nullopt);
  EXPECT_EQ(crash->result, VerdictResult::kCrash);
  EXPECT_THAT(crash->error, HasSubstr("killed by signal 9"));
  EXPECT_EQ(classify(exited(0), std::nullopt)->result, VerdictResult::kCrash);
  process::ProcessOutcome late = exited(0);
  late.timed_out = true;
  late.timeout_s = 30;
  auto timeout = classify(late, succeeded());
  EXPECT_EQ(timeout->result, VerdictResult::kTimeout);
  EXPECT_THAT(timeout->error, HasSubstr("time limit of 30 s"));
}

TEST(ErrorSignatureTest, EqualFailuresGroup) {
  const std::string a =
      "Traceback (most recent call last):\n  File \"/tmp/tmpab12/run.py\", line 10\n"
      "RuntimeError: tensor at 0x7f3a2b1c has 4096 elements, expected 8192 in /opt/u/x.py\n";
  const std::string b =
      "Traceback (most recent call last):\n  File \"/tmp/tmpzz99/run.py\", line 12\n"
      "RuntimeError: tensor at 0x55aa00ff has 1024 elements, expected 2048 in /srv/y.py\n";
  EXPECT_EQ(error_signature(a, {"RuntimeError"}), error_signature(b, {"RuntimeError"}));
  EXPECT_EQ(error_signature(a, {"RuntimeError"}),
            "RuntimeError | RuntimeError: tensor at 0x? has N elements, expected N in <path>");
  EXPECT_NE(error_signature(a, {}), error_signature("ValueError: other\n", {}));
}

TEST(ErrorSignatureTest, ArchitecturesTheStackLacksAreOneCause) {
  const auto unknown = [](const std::string& model_type) {
    return error_signature("ValueError: The checkpoint you are trying to load has model type `" +
                               model_type +
                               "` but Transformers does not recognize this "
                               "architecture.\n",
                           {"ValueError", "KeyError"});
  };
  EXPECT_EQ(unknown("nanochat"), unknown("jais2"));
  EXPECT_EQ(unknown("nanochat"),
            "ValueError<KeyError | ValueError: The checkpoint you are trying to load has model "
            "type `<model type>` but Transformers does not recognize this architecture.");
}

TEST(UsefulTailTest, KeepsTheLastLines) {
  std::string text;
  for (int line = 0; line < 100; ++line) text += "line " + std::to_string(line) + "\n";
  const std::string tail = useful_tail(text, 3);
  EXPECT_EQ(tail, "line 97\nline 98\nline 99\n");
}

}  // namespace
}  // namespace canrun::run
