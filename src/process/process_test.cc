#include "process/process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace canrun::process {
namespace {

using ::testing::HasSubstr;

ProcessSpec shell(const std::string& command) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.timeout = std::chrono::seconds(20);
  return spec;
}

bool group_is_gone(int pgid) { return ::kill(-pgid, 0) != 0 && errno == ESRCH; }

TEST(ProcessTest, CapturesOutputExitCodeEnvAndFolder) {
  auto launcher = make_posix_launcher();
  auto spec = shell("echo out; echo err >&2; echo \"$CANRUN_X\"; pwd; exit 3");
  spec.env["CANRUN_X"] = "hello \"world\"";
  spec.cwd = std::filesystem::temp_directory_path();
  auto outcome = launcher->run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_EQ(outcome->exit_code, 3);
  EXPECT_FALSE(outcome->term_signal.has_value());
  EXPECT_EQ(outcome->stdout_tail,
            "out\nhello \"world\"\n" + std::filesystem::temp_directory_path().string() + "\n");
  EXPECT_EQ(outcome->stderr_tail, "err\n");
}

TEST(ProcessTest, OnlyTheGivenEnvironmentIsSeen) {
  auto launcher = make_posix_launcher();
  ::setenv("CANRUN_SHOULD_NOT_LEAK", "1", 1);
  auto outcome = launcher->run(shell("echo \"[$CANRUN_SHOULD_NOT_LEAK]\""));
  EXPECT_EQ(outcome->stdout_tail, "[]\n");
}

TEST(ProcessTest, RelativeProgramAndFolderVariablesMeanWhatTheyMeanHere) {
  namespace fs = std::filesystem;
  const fs::path here = fs::current_path();
  const fs::path base =
      fs::temp_directory_path() / ("canrun-relative-" + std::to_string(::getpid()));
  fs::create_directories(base / "bin");
  fs::create_directories(base / "elsewhere");
  fs::copy_file("/bin/echo", base / "bin" / "say", fs::copy_options::overwrite_existing);
  fs::current_path(base);
  const fs::path expected = fs::current_path() / "cache" / "hf";
  ::setenv("HF_HOME", "cache/hf", 1);
  auto env = current_environment();
  ::unsetenv("HF_HOME");
  auto launcher = make_posix_launcher();
  ProcessSpec spec;
  spec.argv = {"bin/say", env["HF_HOME"]};
  spec.cwd = base / "elsewhere";
  spec.timeout = std::chrono::seconds(20);
  auto outcome = launcher->run(spec);
  fs::current_path(here);
  fs::remove_all(base);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_EQ(outcome->exit_code, 0) << outcome->stderr_tail;
  EXPECT_EQ(outcome->stdout_tail, expected.string() + "\n");
}

TEST(ProcessTest, TimeLimitKillsTheWholeGroup) {
  auto launcher = make_posix_launcher();
  auto spec = shell("sleep 300 & sleep 300 & trap '' TERM; sleep 300");
  spec.timeout = std::chrono::milliseconds(500);
  spec.kill_grace = std::chrono::milliseconds(300);
  auto outcome = launcher->run(spec);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_LT(outcome->wall_s, 5.0);
  EXPECT_TRUE(group_is_gone(outcome->pgid));
}

TEST(ProcessTest, LeftoverChildrenDieWithTheMainProcess) {
  auto launcher = make_posix_launcher();
  // The main process exits at once; its background child would live for 300 s.
  auto outcome = launcher->run(shell("sleep 300 > /dev/null 2>&1 & echo started"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->exit_code, 0);
  EXPECT_FALSE(outcome->timed_out);
  EXPECT_TRUE(group_is_gone(outcome->pgid));
}

TEST(ProcessTest, FloodIsBoundedAndCounted) {
  auto launcher = make_posix_launcher();
  auto spec = shell("head -c 60000000 /dev/zero | tr '\\0' 'x'; echo; echo LAST LINE");
  spec.output_limit = 4096;
  auto outcome = launcher->run(spec);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->stdout_bytes, 60000000u + 1 + 10);
  EXPECT_EQ(outcome->stdout_tail.size(), 4096u);
  EXPECT_TRUE(outcome->stdout_tail.ends_with("\nLAST LINE\n"));
}

TEST(ProcessTest, SignalIsReported) {
  auto launcher = make_posix_launcher();
  auto outcome = launcher->run(shell("kill -SEGV $$"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->term_signal, SIGSEGV);
  EXPECT_FALSE(outcome->exit_code.has_value());
}

TEST(ProcessTest, MissingProgramIsAnError) {
  auto launcher = make_posix_launcher();
  ProcessSpec spec;
  spec.argv = {"/nonexistent/python"};
  auto outcome = launcher->run(spec);
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.error().message(), HasSubstr("cannot start /nonexistent/python"));
}

TEST(TailBufferTest, KeepsTheLastBytes) {
  TailBuffer tail(5);
  tail.append("abc");
  tail.append("defgh");
  tail.append("ij");
  EXPECT_EQ(tail.total(), 10u);
  EXPECT_EQ(tail.take(), "fghij");
}

}  // namespace
}  // namespace canrun::process
