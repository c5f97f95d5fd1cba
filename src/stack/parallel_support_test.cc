#include "stack/parallel_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <vector>

#include "core/atomic_file.h"
#include "core/toml_file.h"
#include "stack/stack.h"

namespace canrun::stack {
namespace {

// The golden table's tp_plan / ep_plan columns are what the installed transformers says; one
// warm-up asks about all of its model types at once and caches each answer.
TEST(ParallelSupportTest, AgreesWithTheGoldenTableAndCaches) {
  const auto cache =
      std::filesystem::temp_directory_path() / ("canrun-probe-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  auto launcher = process::make_posix_launcher();
  const StackPython python(CANRUN_PYTHON, cache, *launcher);
  auto library = probe_library_version(python);
  ASSERT_TRUE(library.ok()) << library.error().message();
  const std::string library_version = *library;

  const auto text =
      read_file(std::filesystem::path(CANRUN_SOURCE_DIR) / "src/plan/golden_plans.toml");
  auto root = parse_toml(*text, "golden_plans.toml");
  ASSERT_TRUE(root.ok());
  std::vector<std::string> model_types;
  for (const toml::node& node : *(*root)["case"].as_array()) {
    model_types.push_back((*node.as_table())["model_type"].value_or(std::string()));
  }
  warm_parallel_support(python, library_version, model_types);
  // From here on, cached: a Python that does not exist is never asked.
  const StackPython missing("/nonexistent/python", cache, *launcher);
  std::set<std::string> probed;
  for (const toml::node& node : *(*root)["case"].as_array()) {
    const toml::table& row = *node.as_table();
    const std::string model_type = row["model_type"].value_or(std::string());
    if (!probed.insert(model_type).second) continue;
    auto support = probe_parallel_support(missing, library_version, model_type);
    ASSERT_TRUE(support.ok()) << support.error().message();
    EXPECT_TRUE(support->known_model_type) << model_type;
    EXPECT_EQ(support->tp_plan, row["tp_plan"].value_or(false)) << model_type;
    EXPECT_EQ(support->ep_plan, row["ep_plan"].value_or(false)) << model_type;
    EXPECT_TRUE(std::filesystem::exists(cache / ("transformers-" + library_version) / "parallel" /
                                        (model_type + ".json")));
  }
  auto unknown = probe_parallel_support(python, library_version, "canrun-imaginary");
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->known_model_type);
  auto cached = probe_parallel_support(missing, library_version, "llama");
  ASSERT_TRUE(cached.ok()) << cached.error().message();
  EXPECT_TRUE(cached->tp_plan);
  EXPECT_EQ(probe_parallel_support(python, library_version, "../x").error().code(),
            ErrorCode::kInvalidArgument);
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace canrun::stack
