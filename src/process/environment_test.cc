#include "process/environment.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/test_temp_dir.h"

namespace canrun::process {
namespace {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

TEST(EnvironmentTest, CredentialsAreSecretsAndLookalikesAreNot) {
  for (const char* name :
       {"HF_TOKEN", "hf_token", "HUGGING_FACE_HUB_TOKEN", "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_WEB_IDENTITY_TOKEN_FILE", "GITHUB_TOKEN",
        "OPENAI_API_KEY", "DB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "CANRUN_UPLOAD_TOKEN",
        "MY_SECRET_THING"}) {
    EXPECT_TRUE(is_secret_name(name)) << name;
  }
  for (const char* name : {"PATH", "TOKENIZERS_PARALLELISM", "KEYBOARD", "HF_HOME", "MONKEY",
                           "OMP_NUM_THREADS", "KEY_MAP", "SECRETARY"}) {
    EXPECT_FALSE(is_secret_name(name)) << name;
  }
}

TEST(EnvironmentTest, ARunGetsTheAllowListAndNoSecret) {
  const Env from = {{"PATH", "bin"},
                    {"HOME", "ada-home"},
                    {"HF_TOKEN", "hf_abc"},
                    {"HF_TOKEN_PATH", "ada-home/token"},
                    {"AWS_SECRET_ACCESS_KEY", "xyz"},
                    {"AWS_REGION", "us-east-1"},
                    {"OMP_NUM_THREADS", "2"},
                    {"CUDA_VISIBLE_DEVICES", "0"},
                    {"NEURON_RT_VISIBLE_CORES", "0-3"},
                    {"PYTHONPATH", "backend-src"},
                    {"CANRUN_FAULT_DIMS", "1"},
                    {"CANRUN_UPLOAD_TOKEN", "t"},
                    {"SSH_AUTH_SOCK", "agent.sock"},
                    {"DATABASE_URL", "postgres://u:p@h/db"}};
  const Env env = environment_for(Audience::kRun, from);
  const Env expected = {{"PATH", "bin"},
                        {"OMP_NUM_THREADS", "2"},
                        {"CUDA_VISIBLE_DEVICES", "0"},
                        {"NEURON_RT_VISIBLE_CORES", "0-3"},
                        {"PYTHONPATH", "backend-src"},
                        {"CANRUN_FAULT_DIMS", "1"},
                        // HOME is not passed, so the cache huggingface_hub would find is named.
                        {"HF_HOME", "ada-home/.cache/huggingface"},
                        {"HF_HUB_OFFLINE", "1"},
                        {"HF_TOKEN_PATH", "/dev/null"},
                        {"HF_STORED_TOKENS_PATH", "/dev/null"}};
  EXPECT_EQ(env, expected);
}

TEST(EnvironmentTest, HfHomeIsResolvedAsTheHubLibraryDoes) {
  EXPECT_EQ(environment_for(Audience::kRun, {{"HF_HOME", "hf-home"}, {"HOME", "h"}}).at("HF_HOME"),
            "hf-home");
  EXPECT_EQ(environment_for(Audience::kRun, {{"XDG_CACHE_HOME", "xdg-cache"}, {"HOME", "h"}})
                .at("HF_HOME"),
            "xdg-cache/huggingface");
  EXPECT_FALSE(environment_for(Audience::kRun, {}).contains("HF_HOME"));
}

TEST(EnvironmentTest, ToolsThatFetchGetTheirCredentialsOnly) {
  const Env from = {{"HOME", "ada-home"},
                    {"HF_TOKEN", "hf_abc"},
                    {"HF_ENDPOINT", "http://hub"},
                    {"https_proxy", "http://proxy:3128"},
                    {"PIP_INDEX_URL", "http://i"},
                    {"AWS_SECRET_ACCESS_KEY", "xyz"},
                    {"PATH", "bin"}};
  const Env hf = environment_for(Audience::kHf, from);
  EXPECT_EQ(hf.at("HF_TOKEN"), "hf_abc");
  EXPECT_EQ(hf.at("HF_ENDPOINT"), "http://hub");
  EXPECT_EQ(hf.at("HOME"), "ada-home");
  EXPECT_EQ(hf.at("https_proxy"), "http://proxy:3128");
  EXPECT_FALSE(hf.contains("PIP_INDEX_URL"));
  EXPECT_FALSE(hf.contains("AWS_SECRET_ACCESS_KEY"));

  const Env pip = environment_for(Audience::kPip, from);
  EXPECT_EQ(pip.at("PIP_INDEX_URL"), "http://i");
  EXPECT_EQ(pip.at("HOME"), "ada-home");
  EXPECT_FALSE(pip.contains("HF_TOKEN"));
  EXPECT_FALSE(pip.contains("AWS_SECRET_ACCESS_KEY"));
}

TEST(EnvironmentTest, PassEnvAddsNamesAndPrefixesButNeverASecret) {
  const Env from = {{"CANRUN_PASS_ENV", "MY_SETTING, AWS_*"},
                    {"MY_SETTING", "1"},
                    {"MY_OTHER", "2"},
                    {"AWS_REGION", "us-east-1"},
                    {"AWS_SECRET_ACCESS_KEY", "xyz"}};
  const Env env = environment_for(Audience::kRun, from);
  EXPECT_EQ(env.at("MY_SETTING"), "1");
  EXPECT_EQ(env.at("AWS_REGION"), "us-east-1");
  EXPECT_FALSE(env.contains("MY_OTHER"));
  EXPECT_FALSE(env.contains("AWS_SECRET_ACCESS_KEY"));
}

TEST(EnvironmentTest, PassedNamesAreVariableNamesAndNotSecrets) {
  const auto names = passed_names(" A , B_* ,,");
  ASSERT_TRUE(names.ok()) << names.error().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"A", "B_*"}));
  for (const char* bad : {"1A", "A-B", "A*B", "*"}) {
    const auto refused = passed_names(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message().find(std::string("\"") + bad + "\" is not a variable"),
              std::string::npos)
        << refused.error().message();
  }
  const auto secret = passed_names("OK,HF_TOKEN");
  ASSERT_FALSE(secret.ok());
  EXPECT_NE(secret.error().message().find("\"HF_TOKEN\" names a secret"), std::string::npos)
      << secret.error().message();
}

TEST(EnvironmentTest, OwnFoldersAreTheRunsAndTheTemporaryOneGoesWithIt) {
  testing::TempDir dir("env");
  Env env = {{"HOME", "ada-home"}};
  fs::path tmp;
  {
    auto own = OwnFolders::make(dir.path() / "run", env);
    ASSERT_TRUE(own.ok()) << own.error().message();
    EXPECT_EQ(env.at("HOME"), (dir.path() / "run" / "home").string());
    EXPECT_TRUE(fs::is_directory(env.at("HOME")));
    tmp = env.at("TMPDIR");
    EXPECT_TRUE(fs::is_directory(tmp));
    EXPECT_LT(tmp.string().size(), 64U);  // room for a socket's name below it
    (void)!std::ofstream(tmp / "scratch").put('x');
  }
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_TRUE(fs::is_directory(dir.path() / "run" / "home"));
}

TEST(EnvironmentTest, AKilledCanrunsTemporaryFoldersAreSweptAndALiveOnesAreNot) {
  testing::TempDir temp("scratch-sweep");
  const pid_t gone = ::fork();  // a process that has ended: its pid names no process now
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  const fs::path dead = temp.path() / fmt::format("{}{}-AbC123", kScratchPrefix, gone);
  const fs::path live = temp.path() / fmt::format("{}{}-XyZ789", kScratchPrefix, ::getpid());
  const fs::path other = temp.path() / "canrun-cache-list-1";
  for (const fs::path& folder : {dead, live, other}) fs::create_directories(folder / "sub");
  sweep_own_folders(temp.path());
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

}  // namespace
}  // namespace canrun::process
