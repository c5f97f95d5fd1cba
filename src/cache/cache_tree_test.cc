#include "cache/cache_tree.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "core/test_temp_dir.h"

namespace canrun::cache {
namespace {

namespace fs = std::filesystem;

constexpr char kVersion[] = "neuronxcc-2.16.372.0+4a9b2326";

using canrun::testing::write_file;

TEST(CacheTreeTest, EntryIsTheFirstModuleFolderOrTheFileItself) {
  EXPECT_EQ(entry_of("neuronxcc-2.16/MODULE_1+2/model.neff"), "neuronxcc-2.16/MODULE_1+2");
  EXPECT_EQ(entry_of("neuronxcc-2.16/MODULE_1+2/sub/MODULE_x/f"), "neuronxcc-2.16/MODULE_1+2");
  EXPECT_EQ(entry_of("MODULE_1+2/model.done"), "MODULE_1+2");
  EXPECT_EQ(entry_of("inductor-2.13/fxgraph/ab/cd"), "inductor-2.13/fxgraph/ab/cd");
  // A file named MODULE_* is a file, not a folder of an entry.
  EXPECT_EQ(entry_of("neuronxcc-2.16/MODULE_notes"), "neuronxcc-2.16/MODULE_notes");
}

TEST(CacheTreeTest, CompiledGraphsLiveUnderTheCacheUnlessCanrunCompileCacheNamesAFolder) {
  ::unsetenv("CANRUN_COMPILE_CACHE");
  EXPECT_EQ(compiler_cache_dir("/c", "cpu", "inductor", "2.13.0"),
            "/c/compile/cpu/inductor-2.13.0");
  ::setenv("CANRUN_COMPILE_CACHE", "/shared/graphs", 1);
  EXPECT_EQ(compiler_cache_dir("/c", "cpu", "inductor", "2.13.0"),
            "/shared/graphs/cpu/inductor-2.13.0");
  EXPECT_EQ(backend_cache_dir("/c", "neuron"), "/shared/graphs/neuron");
  // Relative, it is taken from where canrun was started, as CANRUN_CACHE is.
  ::setenv("CANRUN_COMPILE_CACHE", "graphs", 1);
  EXPECT_EQ(compile_cache_root("/c"), fs::current_path() / "graphs");
  ::setenv("CANRUN_COMPILE_CACHE", "", 1);
  EXPECT_EQ(compile_cache_root("/c"), "/c/compile");
  ::unsetenv("CANRUN_COMPILE_CACHE");
}

TEST(CacheTreeTest, ReferencesLiveUnderTheCacheUnlessCanrunReferenceCacheNamesAFolder) {
  ::unsetenv("CANRUN_REFERENCE_CACHE");
  ::setenv("CANRUN_COMPILE_CACHE", "/shared/graphs", 1);  // each variable moves its own tree
  EXPECT_EQ(reference_cache_root("/c"), "/c/references");
  ::setenv("CANRUN_REFERENCE_CACHE", "/shared/references", 1);
  EXPECT_EQ(reference_cache_root("/c"), "/shared/references");
  EXPECT_EQ(compile_cache_root("/c"), "/shared/graphs");
  ::setenv("CANRUN_REFERENCE_CACHE", "refs", 1);
  EXPECT_EQ(reference_cache_root("/c"), fs::current_path() / "refs");
  ::setenv("CANRUN_REFERENCE_CACHE", "", 1);
  EXPECT_EQ(reference_cache_root("/c"), "/c/references");
  ::unsetenv("CANRUN_REFERENCE_CACHE");
  ::unsetenv("CANRUN_COMPILE_CACHE");
}

TEST(CacheTreeTest, ModuleEntriesAreCompleteOnlyWithModelDone) {
  const auto states = entry_states({
      "v/MODULE_done/model.done",
      "v/MODULE_done/model.neff",
      "v/MODULE_failed/model.log",
      "v/MODULE_failed/model.hlo_module.pb",
      "v/MODULE_running/model.hlo_module.pb",
      "v/MODULE_nested/sub/model.done",  // not at the entry's top: does not count
      "inductor/fxgraph/ab/entry",
  });
  EXPECT_EQ(states.at("v/MODULE_done"), EntryState::kComplete);
  EXPECT_EQ(states.at("v/MODULE_failed"), EntryState::kFailed);
  EXPECT_EQ(states.at("v/MODULE_running"), EntryState::kIncomplete);
  EXPECT_EQ(states.at("v/MODULE_nested"), EntryState::kIncomplete);
  EXPECT_EQ(states.at("inductor/fxgraph/ab/entry"), EntryState::kComplete);
  EXPECT_EQ(states.size(), 5u);
}

// TorchNeuron's cache: hash-sharded NEFFs, each written to a temp file and renamed into place.
TEST(CacheTreeTest, NativeNeffsAreCompleteWhenThereAndTempFilesAreWritesInProgress) {
  constexpr char kNeff[] = "3f/a2/3fa2c0de.neff";
  const auto states = entry_states({
      kNeff,
      "3f/a2/.tmp.Xq81zP",            // TorchNeuron's cache (mkstemp beside the NEFF)
      "9b/01/tmpk2j4x1a7.tmp",        // torch-neuronx's Python helper (NamedTemporaryFile)
      "inductor/fxgraph/.12.34.tmp",  // TorchInductor's write_atomic
      "v/MODULE_a/.hidden",           // inside a MODULE_ entry, model.done decides
      "v/MODULE_a/model.done",
  });
  EXPECT_EQ(states.at(kNeff), EntryState::kComplete);
  EXPECT_EQ(states.at("3f/a2/.tmp.Xq81zP"), EntryState::kIncomplete);
  EXPECT_EQ(states.at("9b/01/tmpk2j4x1a7.tmp"), EntryState::kIncomplete);
  EXPECT_EQ(states.at("inductor/fxgraph/.12.34.tmp"), EntryState::kIncomplete);
  EXPECT_EQ(states.at("v/MODULE_a"), EntryState::kComplete);
  EXPECT_EQ(not_complete_reason("3f/a2/.tmp.Xq81zP"), "a write in progress");
  EXPECT_EQ(not_complete_reason("v/MODULE_b"), "no model.done");
  EXPECT_FALSE(is_write_in_progress("v/MODULE_a/.hidden"));
  EXPECT_FALSE(is_write_in_progress("3f/a2/3fa2c0de.neff"));
}

TEST(CacheTreeTest, TheNodeLocalTierIsUnderCanrunsOwnCacheEvenWithASharedCompileCache) {
  ::setenv("CANRUN_COMPILE_CACHE", "/shared/graphs", 1);
  EXPECT_EQ(local_compiler_cache_dir("/c", "neuron", "neuronx-cc", "2.21.0"),
            "/c/compile-local/neuron/neuronx-cc-2.21.0");
  ::unsetenv("CANRUN_COMPILE_CACHE");
  // Beside the compile caches, not in them: stats and sync of compile/<backend> never see it.
  EXPECT_EQ(backend_cache_dir("/c", "neuron"), "/c/compile/neuron");
}

TEST(CacheTreeTest, ListsRegularFilesSortedWithSizesAndLeavesPartialCopiesOut) {
  testing::TempDir dir("cache-list");
  write_file(dir.path() / kVersion / "MODULE_b" / "model.neff", "12345");
  write_file(dir.path() / kVersion / "MODULE_a" / "model.done", "");
  write_file(dir.path() / kVersion / "MODULE_a" / ".canrun-partial-77-model.neff", "half");
  fs::create_symlink(dir.path() / kVersion, dir.path() / "link");
  const auto files = list_cache_files(dir.path());
  ASSERT_TRUE(files.ok()) << files.error().message();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, std::string(kVersion) + "/MODULE_a/model.done");
  EXPECT_EQ((*files)[1].path, std::string(kVersion) + "/MODULE_b/model.neff");
  EXPECT_EQ((*files)[1].size, 5);
  EXPECT_GT((*files)[1].mtime_ms, 1'600'000'000'000);
}

TEST(CacheTreeTest, ListingNamesAMissingFolderOrAFile) {
  testing::TempDir dir("cache-list-bad");
  const auto missing = list_cache_files(dir.path() / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("nope"), std::string::npos);
  write_file(dir.path() / "file", "x");
  const auto file = list_cache_files(dir.path() / "file");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(file.error().message().find("not a folder"), std::string::npos);
}

TEST(CacheTreeTest, StatsCountEntriesAndBytesPerTopLevelFolder) {
  const std::vector<CacheFile> files = {
      {"neuronxcc-2.15/MODULE_a/model.done", 0, 0},
      {"neuronxcc-2.15/MODULE_a/model.neff", 100, 0},
      {"neuronxcc-2.16/MODULE_b/model.log", 10, 0},
      {"neuronxcc-2.16/MODULE_c/model.neff", 50, 0},
      {"neuronxcc-2.16/MODULE_d/model.done", 0, 0},
      {"inductor-2.13/fxgraph/x", 7, 0},
      {"inductor-2.13/triton/y", 3, 0},
      {"MODULE_top/model.done", 1, 0},
  };
  const auto stats = cache_stats(files, "neff_cache");
  ASSERT_EQ(stats.size(), 4u);
  EXPECT_EQ(stats[0].version, "inductor-2.13");
  EXPECT_EQ(stats[0].entries, 2u);
  EXPECT_EQ(stats[0].complete, 2u);
  EXPECT_EQ(stats[0].bytes, 10);
  EXPECT_EQ(stats[1].version, "neff_cache");
  EXPECT_EQ(stats[1].entries, 1u);
  EXPECT_EQ(stats[2].version, "neuronxcc-2.15");
  EXPECT_EQ(stats[2].complete, 1u);
  EXPECT_EQ(stats[2].bytes, 100);
  EXPECT_EQ(stats[3].version, "neuronxcc-2.16");
  EXPECT_EQ(stats[3].entries, 3u);
  EXPECT_EQ(stats[3].complete, 1u);
  EXPECT_EQ(stats[3].failed, 1u);
  EXPECT_EQ(stats[3].incomplete, 1u);
  EXPECT_EQ(stats[3].bytes, 60);
}

TEST(CacheTreeTest, StatsOfATorchNeuronCacheOnDisk) {
  // Written as TorchNeuron writes it: the root holds ab/cd/ shards, no version folder; a compile
  // is writing its NEFF right now.
  testing::TempDir dir("neff_cache");
  const fs::path root = dir.path() / "neff_cache";
  write_file(root / "3f" / "a2" / "3fa2c0de77.neff", std::string(300, 'N'));
  write_file(root / "3f" / "a2" / "3fa2ffee01.neff", std::string(200, 'N'));
  write_file(root / "07" / "c1" / "07c1aa9e3b.neff", std::string(100, 'N'));
  write_file(root / "07" / "c1" / ".tmp.Hq27aZ", std::string(40, 'n'));
  const auto files = list_cache_files(root);
  ASSERT_TRUE(files.ok()) << files.error().message();
  auto stats = cache_stats(*files, "neff_cache");
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].version, "neff_cache");
  EXPECT_EQ(stats[0].entries, 4u);
  EXPECT_EQ(stats[0].complete, 3u);
  EXPECT_EQ(stats[0].incomplete, 1u);
  EXPECT_EQ(stats[0].bytes, 640);

  // In canrun's cache, the same files under its folder for the compiler version, beside an
  // XLA-era cache: one row per version.
  const fs::path backend = dir.path() / "compile" / "neuron";
  fs::create_directories(backend);
  fs::rename(root, backend / "neuronx-cc-2.21.0");
  write_file(backend / "neuronxcc-2.16.372.0+4a9b2326" / "MODULE_1+a" / "model.done", "");
  const auto canruns = list_cache_files(backend);
  ASSERT_TRUE(canruns.ok()) << canruns.error().message();
  stats = cache_stats(*canruns, "neuron");
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].version, "neuronx-cc-2.21.0");
  EXPECT_EQ(stats[0].complete, 3u);
  EXPECT_EQ(stats[0].incomplete, 1u);
  EXPECT_EQ(stats[1].version, "neuronxcc-2.16.372.0+4a9b2326");
  EXPECT_EQ(stats[1].complete, 1u);
}

}  // namespace
}  // namespace canrun::cache
