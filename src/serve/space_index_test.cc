#include "serve/space_index.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/atomic_file.h"
#include "core/test_temp_dir.h"
#include "dataset/dataset.h"
#include "dataset/test_rows.h"
#include "task/task.h"

namespace canrun::serve {
namespace {

using dataset::VerdictRow;
using dataset::testing::full_row;
using nlohmann::json;

VerdictRow row_on(std::string model, std::string compiler_version, std::string result) {
  VerdictRow row = full_row(std::move(model));
  row.compiler_version = std::move(compiler_version);
  row.result = *parse_verdict_result(result);
  if (row.result != VerdictResult::kPass) {
    row.error = "RuntimeError: boom";
    row.error_signature = "boom";
  }
  return row;
}

std::shared_ptr<const StackVerdicts> stack_of(std::vector<VerdictRow> rows) {
  auto key = dataset::stack_key_of(rows.front());
  EXPECT_TRUE(key.ok());
  return std::make_shared<const StackVerdicts>(*key, std::move(rows));
}

RankingSnapshot ranking(std::string sort, std::vector<std::string> ids) {
  RankingSnapshot snapshot;
  snapshot.task = "text-generation";
  snapshot.sort = *hub::parse_ranking_sort(sort);
  snapshot.fetched_at = "2026-12-02T15:00:00Z";
  std::int64_t downloads = 1'000'000;
  for (auto& id : ids) {
    RankedModel model;
    model.id = std::move(id);
    model.downloads = downloads -= 1000;
    model.likes = 10;
    model.trending_score = 5.5;
    snapshot.models.push_back(std::move(model));
  }
  return snapshot;
}

//! Two neuron stacks: 2.9.1 (older) and 2.16.372.0 (newer); Qwen regresses on the newer one.
std::shared_ptr<const SpaceIndex> sample_index() {
  IndexInputs inputs;
  inputs.stacks.push_back(stack_of({row_on("Qwen/Qwen3-0.6B", "2.9.1", "PASS"),
                                    row_on("google/gemma-3-1b-it", "2.9.1", "FAIL_COMPILE")}));
  inputs.stacks.push_back(stack_of({row_on("Qwen/Qwen3-0.6B", "2.16.372.0", "FAIL_COMPILE"),
                                    row_on("google/gemma-3-1b-it", "2.16.372.0", "PASS")}));
  inputs.rankings.push_back(
      ranking("downloads", {"google/gemma-3-1b-it", "Qwen/Qwen3-0.6B", "meta-llama/Llama-3.2-1B",
                            "openai-community/gpt2"}));
  inputs.rankings.push_back(ranking("trending", {"openai-community/gpt2", "Qwen/Qwen3-0.6B"}));
  inputs.catalog.selected["text-generation"] = {{"Qwen/Qwen3-0.6B", ""},
                                                {"openai-community/gpt2", "<b>small</b>"}};
  inputs.catalog.exclusion = [](const ModelId& id) -> std::optional<CatalogExclusion> {
    if (id.owner() == "meta-llama") return CatalogExclusion{"gated", "Needs a token."};
    return std::nullopt;
  };
  inputs.prefetch_templates["neuron"] = "sync neuronxcc-{compiler_version} /tmp/cache";
  return SpaceIndex::build(std::move(inputs));
}

json models(const SpaceIndex& index, ModelsQuery query) {
  auto result = index.models_json(query);
  EXPECT_TRUE(result.ok()) << result.error().message();
  return result.ok() ? *result : json();
}

TEST(SpaceIndex, VersionsAreNewestFirstByNumber) {
  const auto index = sample_index();
  const json versions = index->versions_json();
  ASSERT_EQ(versions["stacks"].size(), 2u);
  EXPECT_EQ(versions["stacks"][0]["compiler_version"], "2.16.372.0");
  EXPECT_EQ(versions["stacks"][1]["compiler_version"], "2.9.1");
  EXPECT_EQ(versions["default"]["compiler_version"], "2.16.372.0");
  EXPECT_EQ(versions["tasks"], json({"text-generation"}));
}

// The page learns from /api/versions what it needs of each task, so a new task needs no edit
// of web/: every registered task, in the registry's order, whatever the dataset holds.
TEST(SpaceIndex, VersionsDescribeEveryRegisteredTaskForThePage) {
  const json details = sample_index()->versions_json()["task_details"];
  ASSERT_EQ(details.size(), task::tasks().size());
  std::vector<std::string> names;
  for (const json& detail : details) names.push_back(detail["name"]);
  EXPECT_EQ(names, task::task_names());
  EXPECT_EQ(details[0], json({{"name", "text-generation"},
                              {"library", "transformers"},
                              {"comparison", "tokens"},
                              {"display", "text"},
                              {"generates_text", true},
                              {"speed_meaning",
                               "Run time, first token and decode tokens/s measure 32 greedy tokens "
                               "at batch 1 with a static cache, after compiling; the speedup "
                               "compares them with the same model run eagerly in the same process, "
                               "on the same inputs."}}));
  for (const json& detail : details) {
    SCOPED_TRACE(detail["name"].get<std::string>());
    const task::TaskSpec* spec = task::find_task(detail["name"].get<std::string>());
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(detail["generates_text"], task::generates_text(*spec));
    EXPECT_EQ(detail["speed_meaning"], task::speed_meaning(*spec));
    EXPECT_EQ(detail["display"], task::to_string(spec->display));
  }
  const auto image = std::find_if(details.begin(), details.end(), [](const json& detail) {
    return detail["name"] == "text-to-image";
  });
  ASSERT_NE(image, details.end());
  EXPECT_EQ((*image)["generates_text"], false);
  EXPECT_EQ((*image)["display"], "image");
  EXPECT_EQ((*image)["comparison"], "image");
  EXPECT_EQ((*image)["library"], "diffusers");
}

TEST(SpaceIndex, SelectedViewKeepsTheCuratorsOrderAndSaysNotTested) {
  const auto index = sample_index();
  const json out = models(*index, {});
  EXPECT_EQ(out["view"], "selected");
  ASSERT_EQ(out["models"].size(), 2u);
  EXPECT_EQ(out["models"][0]["id"], "Qwen/Qwen3-0.6B");
  EXPECT_EQ(out["models"][0]["status"], "FAIL_COMPILE");  // newest stack by default
  EXPECT_EQ(out["models"][0]["downloads"], 998'000);
  EXPECT_EQ(out["models"][1]["status"], "not tested");
  EXPECT_EQ(out["models"][1]["note"], "<b>small</b>");
}

TEST(SpaceIndex, DownloadsViewJoinsRankingsWithVerdictsAndExclusions) {
  const auto index = sample_index();
  ModelsQuery query;
  query.view = View::kDownloads;
  query.compiler_version = "2.9.1";
  const json out = models(*index, query);
  ASSERT_EQ(out["total"], 4);
  EXPECT_EQ(out["models"][0]["rank"], 1);
  EXPECT_EQ(out["models"][0]["status"], "FAIL_COMPILE");
  EXPECT_EQ(out["models"][1]["status"], "PASS");
  EXPECT_EQ(out["models"][2]["status"], "EXCLUDED");
  EXPECT_EQ(out["models"][2]["exclusion_reason"], "gated");
  EXPECT_EQ(out["models"][2]["exclusion_why"], "Needs a token.");
  EXPECT_EQ(out["models"][3]["status"], "not tested");
}

// Untested ranked models get the plan the planner would choose on the selected stack, from the
// Hub's parameter counts and what that stack's transformers offers; tested, excluded or
// unlisted ones get none.
TEST(SpaceIndex, UntestedRankedModelsGetAPredictedPlanForTheStack) {
  IndexInputs inputs;
  inputs.stacks.push_back(stack_of({row_on("Qwen/Qwen3-0.6B", "2.16.372.0", "PASS")}));
  RankingSnapshot downloads =
      ranking("downloads", {"Qwen/Qwen3-0.6B", "org/small", "org/big-llama", "org/big-gptj",
                            "org/huge", "org/unlisted-weights", "org/big-unprobed"});
  const auto list = [&](std::size_t idx, std::int64_t bf16, std::string model_type) {
    downloads.models[idx].parameters_by_dtype["BF16"] = bf16;
    downloads.models[idx].model_type = std::move(model_type);
  };
  list(0, 600'000'000, "qwen3");
  list(1, 1'000'000'000, "llama");      // 2 GB: one core
  list(2, 70'000'000'000, "llama");     // 140 GB: 8 cores of 22 GiB, TP
  list(3, 20'000'000'000, "gptj");      // 40 GB: no TP plan
  list(4, 1'000'000'000'000, "llama");  // 2 TB: too large
  list(6, 20'000'000'000, "mistral");   // never probed
  inputs.rankings.push_back(std::move(downloads));
  inputs.topologies["neuron"] = backend::Topology{4, 16, 24.0, 2.0, {1, 2, 4, 8, 16}, 16};
  const std::string version = full_row().library_version;
  inputs.parallel_support[{version, "llama"}] = {true, true, false, version, std::nullopt};
  inputs.parallel_support[{version, "gptj"}] = {true, false, false, version, std::nullopt};
  const auto index = SpaceIndex::build(std::move(inputs));
  ModelsQuery query;
  query.view = View::kDownloads;
  const json out = models(*index, query);
  ASSERT_EQ(out["models"].size(), 7u);
  const auto predicted = [&](std::size_t idx) { return out["models"][idx]["predicted"]; };
  EXPECT_TRUE(predicted(0).is_null());  // tested: its verdict, not a prediction
  EXPECT_EQ(predicted(1)["cores"], 1);
  EXPECT_EQ(predicted(1)["parallelism"], "none");
  EXPECT_EQ(predicted(2)["cores"], 8);
  EXPECT_EQ(predicted(2)["parallelism"], "tp");
  EXPECT_EQ(predicted(2)["weights_bytes"], 140'000'000'000);
  EXPECT_EQ(predicted(3)["exclusion"], "no_parallel_plan");
  EXPECT_TRUE(predicted(3)["cores"].is_null());
  EXPECT_EQ(predicted(4)["exclusion"], "too_large");
  EXPECT_TRUE(predicted(5).is_null());  // the Hub listed no parameter counts
  EXPECT_EQ(predicted(6)["cores"], 2);
  EXPECT_TRUE(predicted(6)["parallelism"].is_null());
  EXPECT_NE(predicted(6)["why"].get<std::string>().find("never probed"), std::string::npos);
  for (std::size_t idx = 1; idx < 7; ++idx) EXPECT_EQ(out["models"][idx]["status"], "not tested");

  // The model page of an untested model says the same.
  const auto page = index->model_json(*ModelId::parse("org/big-llama"), {});
  ASSERT_TRUE(page.ok()) << page.error().message();
  EXPECT_EQ((*page)["predicted"]["cores"], 8);
  EXPECT_TRUE((*index->model_json(*ModelId::parse("Qwen/Qwen3-0.6B"), {}))["predicted"].is_null());
}

TEST(SpaceIndex, SearchIsACaseInsensitiveSubstringAndPagesCount) {
  const auto index = sample_index();
  ModelsQuery query;
  query.view = View::kDownloads;
  query.search = "QWEN3";
  json out = models(*index, query);
  ASSERT_EQ(out["total"], 1);
  EXPECT_EQ(out["models"][0]["id"], "Qwen/Qwen3-0.6B");
  query.search = "";
  query.offset = 1;
  query.limit = 2;
  out = models(*index, query);
  EXPECT_EQ(out["total"], 4);
  ASSERT_EQ(out["models"].size(), 2u);
  EXPECT_EQ(out["models"][0]["rank"], 2);
}

TEST(SpaceIndex, UnknownTaskOrVersionIsAnErrorNamingTheParameter) {
  const auto index = sample_index();
  ModelsQuery query;
  query.task = "text-to-speech";
  auto result = index->models_json(query);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(result.error().has_reason(reason::kBadParameter));
  EXPECT_EQ(result.error().subjects(), std::vector<std::string>{"task"});
  query = {};
  query.compiler_version = "9.9";
  result = index->models_json(query);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().subjects(), std::vector<std::string>{"compiler_version"});
  EXPECT_NE(result.error().message().find("2.16.372.0"), std::string::npos);
}

// The Tested view sorts by speedup over eager, largest first, unknown last; each entry carries
// the figures of how well it ran, and the answer the stack's summary of the task's rows.
TEST(SpaceIndex, TestedViewSortsBySpeedupAndTheAnswerSummarizesTheStack) {
  std::vector<VerdictRow> rows;
  for (const auto& [model, speedup] :
       {std::pair<std::string, double>{"org/slow", 0.5}, {"org/fast", 2.0}, {"org/none", 0}}) {
    VerdictRow row = row_on(model, "2.16.372.0", "PASS");
    if (speedup > 0) row.speedup = speedup;
    rows.push_back(std::move(row));
  }
  rows[1].long_agreement = 0.5;
  rows[1].drifts_after = 7;
  rows.push_back(row_on("org/broken", "2.16.372.0", "FAIL_COMPILE"));
  VerdictRow other_task = row_on("org/encoder", "2.16.372.0", "FAIL_RUNTIME");
  other_task.task = "text-classification";
  rows.push_back(std::move(other_task));
  IndexInputs inputs;
  inputs.stacks.push_back(stack_of(rows));
  const auto index = SpaceIndex::build(std::move(inputs));

  ModelsQuery query;
  query.view = View::kTested;
  query.task = "text-generation";
  query.sort = TestedSort::kSpeedup;
  const json out = models(*index, query);
  EXPECT_EQ(out["sort"], "speedup");
  std::vector<std::string> ids;
  for (const json& entry : out["models"]) ids.push_back(entry["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"org/fast", "org/slow", "org/broken", "org/none"}));
  EXPECT_EQ(out["models"][0]["speedup"], 2.0);
  EXPECT_EQ(out["models"][0]["drifts_after"], 7);
  EXPECT_EQ(out["models"][0]["long_agreement"], 0.5);
  EXPECT_EQ(out["models"][0]["compile_s"], 180.0);
  EXPECT_TRUE(out["models"][3]["speedup"].is_null());
  EXPECT_TRUE(out["models"][3]["memory_ratio"].is_null());
  // The task's rows only: the text-classification failure is not among them.
  const json& summary = out["summary"];
  EXPECT_EQ(summary["tested"], 4);
  EXPECT_EQ(summary["passed"], 3);
  EXPECT_EQ(summary["with_baseline"], 2);
  EXPECT_DOUBLE_EQ(summary["geomean_speedup"].get<double>(), 1.0);  // sqrt(0.5 × 2)
  EXPECT_EQ(summary["drifting"], 1);
  EXPECT_EQ(summary["alarms"], json::array({"pass rate 75.0 % < 90 %", "compile 180 s > 120 s"}));
  // The model page's verdict has every column of how well it ran.
  const json page = *index->model_json(*ModelId::parse("org/fast"), {});
  EXPECT_EQ(page["verdict"]["speedup"], 2.0);
  EXPECT_EQ(page["verdict"]["drifts_after"], 7);
  for (const char* column :
       {"eager_throughput", "eager_ttft_s", "eager_peak_memory_bytes", "eager_note", "memory_ratio",
        "memory_measure", "long_tokens", "long_decode_tokens_per_s"}) {
    EXPECT_TRUE(page["verdict"].contains(column)) << column;
  }
  EXPECT_EQ(parse_sort("speedup"), TestedSort::kSpeedup);
  EXPECT_EQ(sort_name(TestedSort::kSpeedup), "speedup");

  // Another task: its own rows; no stack: nothing.
  query.view = View::kSelected;
  query.task = "text-classification";
  EXPECT_EQ(models(*index, query)["summary"]["tested"], 1);
  EXPECT_EQ(models(*index, query)["summary"]["passed"], 0);
  IndexInputs empty;
  empty.rankings.push_back(ranking("downloads", {"org/fast"}));
  const json nothing = models(*SpaceIndex::build(std::move(empty)), {});
  EXPECT_EQ(nothing["summary"]["tested"], 0);
  EXPECT_TRUE(nothing["summary"]["pass_rate"].is_null());
}

TEST(SpaceIndex, ModelPageHasHistoryWithTheRegressionMarked) {
  const auto index = sample_index();
  const auto id = ModelId::parse("Qwen/Qwen3-0.6B");
  auto result = index->model_json(*id, {});
  ASSERT_TRUE(result.ok());
  const json out = *result;
  EXPECT_EQ(out["status"], "FAIL_COMPILE");
  EXPECT_EQ(out["verdict"]["run_py"], "import torch\nprint('hello')\n");
  EXPECT_EQ(out["prefetch_command"], "sync neuronxcc-2.16.372.0 /tmp/cache");
  ASSERT_EQ(out["history"].size(), 2u);
  EXPECT_EQ(out["history"][0]["compiler_version"], "2.16.372.0");
  EXPECT_TRUE(out["history"][0]["regression"]);
  EXPECT_TRUE(out["history"][0]["current"]);
  EXPECT_FALSE(out["history"][1]["regression"]);

  const json gemma = *index->model_json(*ModelId::parse("google/gemma-3-1b-it"), {});
  EXPECT_TRUE(gemma["history"][0]["fixed"]);
}

TEST(SpaceIndex, EveryStatusComesWithItsDisplayClass) {
  const auto index = sample_index();
  ModelsQuery query;
  query.view = View::kDownloads;
  query.compiler_version = "2.9.1";
  const json out = models(*index, query);
  std::vector<std::pair<std::string, std::string>> statuses;
  for (const json& model : out["models"])
    statuses.emplace_back(model["status"], model["status_class"]);
  EXPECT_EQ(statuses, (std::vector<std::pair<std::string, std::string>>{
                          {"FAIL_COMPILE", "fail"},
                          {"PASS", "pass"},
                          {"EXCLUDED", "excluded"},  // from the catalog, without a row
                          {"not tested", "untested"}}));
  const json page = *index->model_json(*ModelId::parse("Qwen/Qwen3-0.6B"), {});
  EXPECT_EQ(page["status_class"], "fail");
  EXPECT_EQ(page["history"][0]["status_class"], "fail");
  EXPECT_EQ(page["history"][1]["status_class"], "pass");
  const json gpt2 = *index->model_json(*ModelId::parse("openai-community/gpt2"), {});
  EXPECT_EQ(gpt2["status"], "not tested");
  EXPECT_EQ(gpt2["status_class"], "untested");
}

TEST(SpaceIndex, HistoryFollowsTheRegressionRule) {
  // PASS → REFERENCE_FAIL or a curator's exclusion is unverified; PASS → too_large regresses.
  auto on = [](std::string model, std::string compiler_version, std::string result,
               std::optional<std::string> exclusion_reason = std::nullopt) {
    VerdictRow row = row_on(std::move(model), std::move(compiler_version), std::move(result));
    row.exclusion_reason = std::move(exclusion_reason);
    return row;
  };
  IndexInputs inputs;
  inputs.stacks.push_back(
      stack_of({on("org/reference", "1.0", "PASS"), on("org/curated", "1.0", "PASS"),
                on("org/grown", "1.0", "PASS")}));
  inputs.stacks.push_back(stack_of({on("org/reference", "2.0", "REFERENCE_FAIL"),
                                    on("org/curated", "2.0", "EXCLUDED", "low_priority"),
                                    on("org/grown", "2.0", "EXCLUDED", "too_large")}));
  const auto index = SpaceIndex::build(std::move(inputs));
  auto newest = [&](const char* model) {
    return (*index->model_json(*ModelId::parse(model), {}))["history"][0];
  };
  for (const char* model : {"org/reference", "org/curated"}) {
    EXPECT_FALSE(newest(model)["regression"]) << model;
    EXPECT_TRUE(newest(model)["unverified"]) << model;
  }
  EXPECT_EQ(newest("org/reference")["status_class"], "warn");
  EXPECT_TRUE(newest("org/grown")["regression"]);
  EXPECT_FALSE(newest("org/grown")["unverified"]);
  EXPECT_EQ(newest("org/grown")["status_class"], "excluded");
}

// Which logs and images are kept is known from the build: a query links and serves them
// without looking at the disk, and only the bytes are read when asked for.
TEST(SpaceIndex, KeptLogsAndImagesAreKnownFromTheBuild) {
  canrun::testing::TempDir temp("space-index");
  const std::filesystem::path root = temp.path() / "dataset";
  const dataset::DatasetDir data(root);
  VerdictRow failure = row_on("org/failed", "2.16.372.0", "FAIL_COMPILE");
  VerdictRow painter = row_on("org/painter", "2.16.372.0", "PASS");
  painter.task = "text-to-image";
  const std::filesystem::path png = temp.path() / "image.png";
  ASSERT_TRUE(write_file_atomically(png, "PNG bytes").ok());
  ASSERT_TRUE(dataset::name_output_files(painter, {{"image", png}}).ok());
  ASSERT_TRUE(data.record_images(painter, {{"image", png}}).ok());
  ASSERT_TRUE(data.record_log(failure, "the run's output").ok());
  std::vector<VerdictRow> rows = {failure, painter};
  const auto key = *dataset::stack_key_of(failure);
  IndexInputs inputs;
  KeptFiles kept = KeptFiles::find(root, key, rows);
  inputs.stacks.push_back(std::make_shared<const StackVerdicts>(key, rows, std::move(kept)));
  const auto index = SpaceIndex::build(std::move(inputs));

  const json page = *index->model_json(*ModelId::parse("org/failed"), {});
  EXPECT_EQ(page["log_url"],
            "/api/log/org/failed?backend=neuron&compiler_version=2.16.372.0"
            "&library_version=5.18.0&task=text-generation");
  EXPECT_TRUE(page["images"].is_null());
  const QueryParams failed_row = {{"task", "text-generation"}};
  EXPECT_EQ(*index->log_text(*ModelId::parse("org/failed"), failed_row), "the run's output");
  const json painted = *index->model_json(*ModelId::parse("org/painter"), {});
  EXPECT_TRUE(painted["log_url"].is_null());
  EXPECT_EQ(painted["images"],
            json({{"image",
                   "/api/image/org/painter?backend=neuron&compiler_version=2.16.372.0"
                   "&library_version=5.18.0&task=text-to-image&role=image"}}));
  const QueryParams painted_image = {{"task", "text-to-image"}, {"role", "image"}};
  EXPECT_EQ(*index->image_bytes(*ModelId::parse("org/painter"), painted_image), "PNG bytes");
  auto no_role = index->image_bytes(*ModelId::parse("org/painter"), {{"task", "text-to-image"}});
  ASSERT_FALSE(no_role.ok());
  EXPECT_TRUE(no_role.error().has_reason(reason::kNotFound));

  // Gone from the disk: the page still links what the build found (it does not look), and the
  // read answers as if it had never been kept.
  std::filesystem::remove_all(root);
  EXPECT_EQ((*index->model_json(*ModelId::parse("org/failed"), {}))["log_url"], page["log_url"]);
  auto gone = index->log_text(*ModelId::parse("org/failed"), failed_row);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(gone.error().has_reason(reason::kNotFound));
  EXPECT_NE(gone.error().message().find("no log kept for org/failed"), std::string::npos);
  auto image_gone = index->image_bytes(*ModelId::parse("org/painter"), painted_image);
  ASSERT_FALSE(image_gone.ok());
  EXPECT_EQ(image_gone.error().code(), ErrorCode::kNotFound);
}

TEST(SpaceIndex, UnknownModelIs404AndBackendWithoutCacheSaysSo) {
  const auto index = sample_index();
  auto result = index->model_json(*ModelId::parse("nobody/nothing"), {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(result.error().has_reason(reason::kNotFound));
  EXPECT_EQ(index->prefetch_command("cpu", "1.0"), std::nullopt);
}

}  // namespace
}  // namespace canrun::serve
