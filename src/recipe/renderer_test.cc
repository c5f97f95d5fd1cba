#include "recipe/renderer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "recipe/python_literal.h"

namespace canrun::recipe {
namespace {

using ::testing::HasSubstr;

backend::BackendProfile cpu_profile() {
  backend::BackendProfile profile;
  profile.name = "cpu";
  profile.description = "Host CPU";
  profile.torch_device = "cpu";
  profile.compile_backend = "inductor";
  profile.dtype = "float32";
  profile.peak_memory = "rss";
  profile.packages = {"torch", "transformers"};
  return profile;
}

//! Runs `command` (a shell command line: variables, then a program) on a file holding `text`,
//! and returns what it prints.
std::string run_file(const std::string& command, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("canrun-recipe-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << text;
  std::string out;
  FILE* pipe = ::popen((command + " " + path.string() + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  ::pclose(pipe);
  std::filesystem::remove(path);
  return out;
}

//! Runs the venv's Python on `script` and returns what it prints.
std::string run_python(const std::string& script) {
  return run_file(std::string(CANRUN_PYTHON), script);
}

TEST(PythonLiteralTest, EscapesEverythingButPrintableAscii) {
  EXPECT_EQ(*python_string("plain"), "\"plain\"");
  EXPECT_EQ(*python_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\x0a\"");
  EXPECT_EQ(*python_string("é😀"), "\"\\u00e9\\U0001f600\"");
  EXPECT_EQ(*python_string(std::string("\0", 1)), "\"\\x00\"");
  EXPECT_FALSE(python_string("\xff").ok());
  EXPECT_EQ(docstring_text("a\"\"\"b\\\nc"), "a???b??c");
}

TEST(PythonLiteralTest, PythonReadsBackExactlyTheValue) {
  const std::string hostile = "x\"\"\"; import os; os.system('id') #\n\\\x01 é 😀 '''";
  const std::string script = "value = " + *python_string(hostile) +
                             "\nimport sys\nsys.stdout.buffer.write(value.encode('utf-8'))\n";
  EXPECT_EQ(run_python(script), hostile);
}

TEST(RendererTest, FillsEveryPlaceholderAndIsValidPython) {
  RecipeRequest request;
  request.model = "Qwen/Qwen3-0.6B";
  request.model_id = "Qwen/Qwen3-0.6B";
  request.prompt = "It said \"\"\"hi\"\"\"\nthen: '''";
  auto script = render_recipe(request, cpu_profile());
  ASSERT_TRUE(script.ok()) << script.error().message();
  EXPECT_EQ(script->find("{{"), std::string::npos);
  EXPECT_THAT(*script, HasSubstr("MODEL = \"Qwen/Qwen3-0.6B\""));
  EXPECT_THAT(*script, HasSubstr("COMPILE_BACKEND = \"inductor\""));
  EXPECT_THAT(*script, HasSubstr("NEW_TOKENS = 32"));
  EXPECT_THAT(*script, Not(HasSubstr("trust_remote_code=True")));
  // Parse it, and read the constants back as Python sees them.
  const std::string check = *script + R"(
import ast, sys
ast.parse(open(__file__).read())
sys.stdout.write(repr((MODEL, REVISION, PROMPT, NEW_TOKENS, COMPILE_BACKEND, DTYPE)))
)";
  const std::string out = run_python(check.substr(0, check.find("if __name__ == \"__main__\":")) +
                                     check.substr(check.find("\nimport ast, sys")));
  EXPECT_EQ(out,
            "('Qwen/Qwen3-0.6B', 'main', 'It said \"\"\"hi\"\"\"\\nthen: \\'\\'\\'', 32, "
            "'inductor', 'float32')");
}

TEST(RendererTest, EagerWhenTheProfileHasNoBackend) {
  auto profile = cpu_profile();
  profile.compile_backend.clear();
  RecipeRequest request;
  request.model = request.model_id = "org/model";
  EXPECT_THAT(*render_recipe(request, profile), HasSubstr("COMPILE_BACKEND = None"));
}

TEST(RendererTest, HowWellSettingsFollowTheRequestAndTheTask) {
  RecipeRequest request;
  request.model = request.model_id = "org/model";
  auto profile = cpu_profile();
  profile.eager_max_s = 90;
  std::string script = *render_recipe(request, profile);
  EXPECT_THAT(script, HasSubstr("PERF = True\n"));
  EXPECT_THAT(script, HasSubstr("EAGER_MAX_S = 90\n"));
  EXPECT_THAT(script, HasSubstr("LONG_TOKENS = 128\n"));
  request.perf = false;
  request.long_tokens = 0;
  script = *render_recipe(request, profile);
  EXPECT_THAT(script, HasSubstr("PERF = False\n"));
  EXPECT_THAT(script, HasSubstr("LONG_TOKENS = 0\n"));
  // A task without a long generation gets none, whatever was asked.
  request.long_tokens = 64;
  request.task = "fill-mask";
  EXPECT_THAT(*render_recipe(request, profile), HasSubstr("LONG_TOKENS = 0\n"));
  request.task = "text-generation";
  request.long_tokens = 32;  // not more than --tokens
  EXPECT_THAT(render_recipe(request, profile).error().message(),
              HasSubstr("--long-tokens 32 must be 0 (off) or more than --tokens 32"));
}

TEST(RendererTest, RefusesUnknownTaskAndBadValues) {
  RecipeRequest request;
  request.model = request.model_id = "org/model";
  request.task = "text-to-speech";
  EXPECT_THAT(render_recipe(request, cpu_profile()).error().message(),
              HasSubstr("no recipe for task \"text-to-speech\"; tasks with a recipe: "));
  request.task = "text-generation";
  request.prompt = "\xc3";
  EXPECT_THAT(render_recipe(request, cpu_profile()).error().message(),
              HasSubstr("prompt: \"\\xc3\" is not valid UTF-8"));
  request.prompt = "ok";
  request.new_tokens = 0;
  EXPECT_THAT(render_recipe(request, cpu_profile()).error().message(),
              HasSubstr("--tokens 0 is out of range"));
}

TEST(RendererTest, ShardedPlanNeedsAParallelismAndAPinningRule) {
  RecipeRequest request;
  request.model = request.model_id = "org/model";
  backend::BackendProfile profile = cpu_profile();
  profile.distributed_backend = "gloo";
  profile.pinning_env = "OMP_NUM_THREADS";
  profile.pinning_syntax = "count";
  request.cores = 2;
  request.parallelism = Parallelism::kTensor;
  auto script = render_recipe(request, profile);
  ASSERT_TRUE(script.ok()) << script.error().message();
  EXPECT_THAT(*script, HasSubstr("CORES = 2\n"));
  EXPECT_THAT(*script, HasSubstr("PARALLELISM = \"tp\""));
  EXPECT_THAT(*script, HasSubstr("DISTRIBUTED_BACKEND = \"gloo\""));
  EXPECT_THAT(*script, HasSubstr("PIN_ENV, PIN_SYNTAX = \"OMP_NUM_THREADS\", \"count\""));

  request.parallelism = Parallelism::kNone;
  EXPECT_THAT(render_recipe(request, profile).error().message(),
              HasSubstr("2 core(s) with parallelism none"));
  request.cores = 1;
  request.parallelism = Parallelism::kExpert;
  EXPECT_THAT(render_recipe(request, profile).error().message(),
              HasSubstr("1 core(s) with parallelism ep"));
  request.cores = 4;
  profile.pinning_env.clear();
  EXPECT_THAT(render_recipe(request, profile).error().message(),
              HasSubstr("backend cpu cannot run 4 ranks"));
}

backend::BackendProfile sharding_profile() {
  backend::BackendProfile profile = cpu_profile();
  profile.distributed_backend = "gloo";
  profile.pinning_env = "OMP_NUM_THREADS";
  profile.pinning_syntax = "count";
  return profile;
}

TEST(RendererTest, OneCoreScriptHoldsNothingAboutRanks) {
  RecipeRequest request;
  request.model = request.model_id = "org/model";
  const std::string script = *render_recipe(request, cpu_profile());
  for (const char* rank_word : {"RANK", "rank", "CORES", "PARALLELISM", "PIN_", "distributed",
                                "sharding", "torchrun", "MASTER_"}) {
    EXPECT_THAT(script, Not(HasSubstr(rank_word)));
  }
  // Settings, then main(), then the helpers it calls; the entry point last.
  const auto settings = script.find("LONG_TOKENS = 128\n");
  const auto main = script.find("\n\n\ndef main():\n");
  ASSERT_NE(settings, std::string::npos);
  EXPECT_EQ(main, settings + std::string_view("LONG_TOKENS = 128").size());
  EXPECT_LT(main, script.find("def generate("));
  EXPECT_THAT(script.substr(script.rfind("\n\n\n") + 3), ::testing::StartsWith("if __name__"));
}

TEST(RendererTest, ShardedScriptStartsItsRanks) {
  RecipeRequest request;
  request.model = request.model_id = "org/model";
  request.cores = 2;
  request.parallelism = Parallelism::kTensor;
  const std::string script = *render_recipe(request, sharding_profile());
  EXPECT_THAT(script, HasSubstr("start_ranks()"));
  EXPECT_THAT(script, HasSubstr("def rank_pinning(rank):"));
  EXPECT_THAT(script, HasSubstr("init_process_group(DISTRIBUTED_BACKEND)"));
  EXPECT_EQ(script.find("def load("), script.rfind("def load(")) << "one load(), the sharded one";
  EXPECT_THAT(script.substr(script.rfind("\n\n\n") + 3), ::testing::StartsWith("if __name__"));
}

TEST(RendererTest, EveryTaskRendersValidPythonOnOneCoreAndSharded) {
  ASSERT_THAT(recipe_tasks(), ::testing::Contains("text-generation"));
  for (const std::string& task : recipe_tasks()) {
    for (const int cores : {1, 2}) {
      SCOPED_TRACE(task + " on " + std::to_string(cores) + " core(s)");
      RecipeRequest request;
      request.model = request.model_id = "org/model";
      request.task = task;
      request.cores = cores;
      request.parallelism = cores == 1 ? Parallelism::kNone : Parallelism::kTensor;
      auto script = render_recipe(request, sharding_profile());
      ASSERT_TRUE(script.ok()) << script.error().message();
      EXPECT_THAT(*script, HasSubstr("PROMPT = " + *python_string(default_prompt(task))));
      EXPECT_EQ(run_python("import ast\nast.parse(" + *python_string(*script) + ")\nprint('ok')"),
                "ok\n");
    }
  }
}

// The model page shows the prefetch command and run.py for `python3 run.py`: both must name the
// same cache folder, in a shell where the cache variable is unset and in one where it is set.
TEST(RendererTest, RunAloneUsesTheCacheFolderThePrefetchCommandFills) {
  auto neuron =
      backend::load_profile(std::filesystem::path(CANRUN_SOURCE_DIR) / "backends" / "neuron.toml");
  ASSERT_TRUE(neuron.ok()) << neuron.error().message();
  RecipeRequest request;
  request.model = request.model_id = "org/model";
  const auto script = render_recipe(request, *neuron);
  ASSERT_TRUE(script.ok()) << script.error().message();
  // run.py's settings, as `python3 run.py` runs them before anything else, then its cache folder.
  const auto main = script->find("\n\n\ndef main():\n");
  ASSERT_NE(main, std::string::npos);
  const std::string settings = script->substr(0, main) + "\nprint(os.environ.get(CACHE_ENV))\n";
  // The folder the command syncs into, as the shell expands its last argument.
  const std::string shell = "set -- " + neuron->prefetch_command("2.16.372.0+4a9b2326") +
                            "\nfor last; do :; done\necho \"$last\"\n";
  const std::string python(CANRUN_PYTHON);
  const std::string unset = "env -u TORCH_NEURONX_NEFF_CACHE_DIR ";
  EXPECT_EQ(run_file(unset + python, settings), "/tmp/neff_cache\n");
  EXPECT_EQ(run_file(unset + "sh", shell), "/tmp/neff_cache\n");
  const std::string set = "env TORCH_NEURONX_NEFF_CACHE_DIR=/fsx/neff ";
  EXPECT_EQ(run_file(set + python, settings), "/fsx/neff\n");
  EXPECT_EQ(run_file(set + "sh", shell), "/fsx/neff\n");
  // A profile without a default folder leaves the variable to whoever runs the script.
  EXPECT_THAT(*render_recipe(request, cpu_profile()),
              HasSubstr("CACHE_ENV, CACHE_DIR = None, None\n"));
}

}  // namespace
}  // namespace canrun::recipe
