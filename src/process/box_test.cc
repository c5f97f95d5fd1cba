#include "process/box.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace canrun::process {
namespace {

TEST(BoxTest, TheHelperRunsTheCommandAfterTheBoxsFoldersAndLimits) {
  set_box_helper("bin/canrun");
  BoxSpec box;
  box.writable = {"runs/tiny-llama", "scratch"};
  box.hidden = {"ada-home/.aws"};
  box.max_processes = 64;
  EXPECT_EQ(boxed_argv(box, {"venv/bin/python3", "run.py"}),
            (std::vector<std::string>{"bin/canrun", "__box", "--rw", "runs/tiny-llama", "--rw",
                                      "scratch", "--hide", "ada-home/.aws", "--pids", "64",
                                      "--nofile", "65536", "--", "venv/bin/python3", "run.py"}));
}

TEST(BoxTest, ItHidesTheHubTokenAndTheUsersCloudAndSshCredentials) {
  const auto paths = credential_paths({{"HOME", "ada-home"}, {"HF_HOME", "hf-home"}});
  for (const char* expected : {"hf-home/token", "hf-home/stored_tokens", "ada-home/.aws",
                               "ada-home/.ssh", "ada-home/.config/gcloud", "ada-home/.netrc",
                               "ada-home/.docker/config.json", "ada-home/.git-credentials"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), std::filesystem::path(expected)), paths.end())
        << expected;
  }
  EXPECT_TRUE(credential_paths({}).empty());
}

TEST(BoxTest, AProcessThatNamesNoHelperBoxesNothing) {
  set_box_helper("");  // a test binary cannot serve as the helper: it must not be tried as one
  EXPECT_EQ(isolation(), "none");
}

}  // namespace
}  // namespace canrun::process
