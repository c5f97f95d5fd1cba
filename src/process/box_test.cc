#include "process/box.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace canrun::process {
namespace {

TEST(BoxTest, TheHelperRunsTheCommandAfterTheBoxsFoldersAndLimits) {
  set_box_helper("/opt/canrun/bin/canrun");
  BoxSpec box;
  box.writable = {"/work/run", "/tmp/canrun-x"};
  box.hidden = {"/home/ada/.aws"};
  box.max_processes = 64;
  EXPECT_EQ(
      boxed_argv(box, {"/usr/bin/python3", "run.py"}),
      (std::vector<std::string>{"/opt/canrun/bin/canrun", "__box", "--rw", "/work/run", "--rw",
                                "/tmp/canrun-x", "--hide", "/home/ada/.aws", "--pids", "64",
                                "--nofile", "65536", "--", "/usr/bin/python3", "run.py"}));
}

TEST(BoxTest, ItHidesTheHubTokenAndTheUsersCloudAndSshCredentials) {
  const auto paths = credential_paths({{"HOME", "/home/ada"}, {"HF_HOME", "/data/hf"}});
  for (const char* expected : {"/data/hf/token", "/data/hf/stored_tokens", "/home/ada/.aws",
                               "/home/ada/.ssh", "/home/ada/.config/gcloud", "/home/ada/.netrc",
                               "/home/ada/.docker/config.json", "/home/ada/.git-credentials"}) {
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
