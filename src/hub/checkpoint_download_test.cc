// Whole-checkpoint downloads over an in-memory Hub (real bytes, real Range and ETag logic, an
// interruption on demand) into an HF cache in a temp dir; and HubClient::get_streamed's retry
// rule. The same paths over real HTTP, with huggingface_hub and transformers reading the
// result, are tests/campaign/test_fetch.py.
#include "hub/checkpoint_download.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <deque>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/test_temp_dir.h"

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

std::string hex_digest(const EVP_MD* kind, std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, kind, nullptr);
  std::string out;
  for (unsigned int idx = 0; idx < length; ++idx) out += fmt::format("{:02x}", digest[idx]);
  return out;
}
std::string sha256(std::string_view bytes) { return hex_digest(EVP_sha256(), bytes); }
std::string git_sha1(std::string_view bytes) {
  return hex_digest(
      EVP_sha1(), fmt::format("blob {}", bytes.size()) + std::string(1, '\0') + std::string(bytes));
}

//! The Hub's file and tree endpoints for one repo at one commit, in memory.
class MemoryHub final : public HttpTransport {
 public:
  std::map<std::string, std::string> files;               // path → bytes (*.safetensors are LFS)
  std::map<std::string, std::deque<std::uint64_t>> cuts;  // path → drop after n body bytes
  std::map<std::string, std::string> size_header_override;  // path → X-Linked-Size sent
  std::map<std::string, std::string> tampered;  // path → bytes sent under the real file's headers
  bool ignore_range = false;
  std::vector<HttpRequest> requests;

  Result<HttpResponse> get(const HttpRequest& request) override {
    requests.push_back(request);
    const std::string tree_prefix = "http://hub/api/models/org/m/tree/" + kCommit;
    if (request.url.starts_with(tree_prefix)) {
      nlohmann::json entries = nlohmann::json::array();
      for (const auto& [path, bytes] : files) {
        nlohmann::json entry{
            {"type", "file"}, {"path", path}, {"size", bytes.size()}, {"oid", git_sha1(bytes)}};
        if (path.ends_with(".safetensors")) {
          entry["lfs"] = {{"oid", sha256(bytes)}, {"size", bytes.size()}};
        }
        entries.push_back(entry);
      }
      entries.push_back(
          {{"type", "directory"}, {"path", "sub"}, {"oid", std::string(40, '0')}, {"size", 0}});
      return HttpResponse{200, {}, entries.dump(), request.url, {}};
    }
    return HttpResponse{404, {}, "", request.url, {}};
  }

  Result<HttpResponse> get_streamed(const HttpRequest& request, BodySink& sink) override {
    requests.push_back(request);
    const std::string prefix = "http://hub/org/m/resolve/" + kCommit + "/";
    if (!request.url.starts_with(prefix)) return HttpResponse{404, {}, "", request.url, {}};
    const std::string path = request.url.substr(prefix.size());
    const auto file = files.find(path);
    if (file == files.end()) return HttpResponse{404, {}, "", request.url, {}};
    const std::string& bytes = file->second;
    const bool lfs = path.ends_with(".safetensors");
    const std::string etag = lfs ? sha256(bytes) : git_sha1(bytes);
    HttpResponse head{
        200, {{"x-repo-commit", kCommit}, {"etag", "\"" + etag + "\""}}, "", request.url, {}};
    if (lfs) {
      head.headers["x-linked-etag"] = "\"" + etag + "\"";
      head.headers["x-linked-size"] = std::to_string(bytes.size());
    }
    if (size_header_override.contains(path)) {
      head.headers["x-linked-size"] = size_header_override[path];
    }
    std::uint64_t first = 0;
    for (const auto& [name, value] : request.headers) {
      if (name == "Range" && !ignore_range) first = std::stoull(value.substr(6));
    }
    if (first > 0) {
      head.status = 206;
      head.headers["content-range"] =
          fmt::format("bytes {}-{}/{}", first, bytes.size() - 1, bytes.size());
    }
    head.headers["content-length"] = std::to_string(bytes.size() - first);
    CANRUN_RETURN_IF_ERROR(sink.begin(head));
    const std::string& sent = tampered.contains(path) ? tampered[path] : bytes;
    std::string_view body = std::string_view(sent).substr(first);
    auto& cut = cuts[path];
    if (!cut.empty()) {
      const std::uint64_t keep = cut.front();
      cut.pop_front();
      CANRUN_RETURN_IF_ERROR(sink.write(body.substr(0, keep)));
      return Error(ErrorCode::kUnavailable, "Transferred a partial file");
    }
    if (!body.empty()) CANRUN_RETURN_IF_ERROR(sink.write(body));
    return head;
  }
};

struct Harness {
  testing::TempDir dir;
  HfCache cache{dir.path() / "hub"};
  MemoryHub* hub = nullptr;
  std::unique_ptr<HubClient> client;

  //! `name` tells apart the temp folders of two harnesses in one test.
  explicit Harness(std::map<std::string, std::string> files, bool offline = false,
                   std::string_view name = "checkpoint-download")
      : dir(name) {
    auto transport = std::make_unique<MemoryHub>();
    transport->files = std::move(files);
    hub = transport.get();
    HubConfig config;
    config.endpoint = "http://hub";
    config.offline = offline;
    client =
        std::make_unique<HubClient>(config, std::move(transport), [](std::chrono::milliseconds) {});
  }
  CheckpointManifest manifest() {
    auto tree = fetch_repo_tree(*client, *ModelId::parse("org/m"), kCommit);
    EXPECT_TRUE(tree.ok()) << tree.error().message();
    return CheckpointManifest{*ModelId::parse("org/m"), kCommit, Revision::main_branch(),
                              tree.ok() ? *tree : std::vector<RepoFile>{}};
  }
  std::vector<std::string> ranges_asked(const std::string& path) const {
    std::vector<std::string> out;
    for (const auto& request : hub->requests) {
      if (!request.url.ends_with("/" + path)) continue;
      std::string range = "-";
      for (const auto& [name, value] : request.headers) {
        if (name == "Range") range = value;
      }
      out.push_back(range);
    }
    return out;
  }
};

std::string weights(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t idx = 0; idx < size; ++idx) bytes[idx] = static_cast<char>(idx * 7 + 3);
  return bytes;
}

TEST(CheckpointDownload, LaysOutTheCacheAsHuggingfaceHubDoes) {
  Harness harness({{"config.json", "{\"model_type\":\"llama\"}"},
                   {"model.safetensors", weights(10'000)},
                   {"sub/extra.json", "{}"}});
  const auto manifest = harness.manifest();
  ASSERT_EQ(manifest.files.size(), 3u);  // the tree's directory entry is left out
  std::vector<DownloadProgress> progress;
  CheckpointDownloadOptions options;
  options.progress = [&](const DownloadProgress& now) { progress.push_back(now); };
  auto done = download_checkpoint(*harness.client, harness.cache, manifest, options);
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->bytes_fetched, manifest.total_bytes());
  const fs::path repo = harness.cache.repo_dir(*ModelId::parse("org/m"));
  EXPECT_EQ(done->snapshot, repo / "snapshots" / kCommit);
  const fs::path link = done->snapshot / "model.safetensors";
  EXPECT_EQ(fs::read_symlink(link), fs::path("../../blobs") / sha256(weights(10'000)));
  EXPECT_EQ(fs::read_symlink(done->snapshot / "sub" / "extra.json"),
            fs::path("../../../blobs") / git_sha1("{}"));
  EXPECT_EQ(*read_file(link), weights(10'000));
  EXPECT_EQ(*read_file(repo / "refs" / "main"), kCommit);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().bytes_done, manifest.total_bytes());
  EXPECT_EQ(progress.back().bytes_total, manifest.total_bytes());

  // Again: everything is there, nothing is asked for.
  const std::size_t asked = harness.hub->requests.size();
  auto again = download_checkpoint(*harness.client, harness.cache, manifest);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->bytes_fetched, 0u);
  EXPECT_EQ(again->bytes_reused, manifest.total_bytes());
  EXPECT_EQ(harness.hub->requests.size(), asked);
}

TEST(CheckpointDownload, AnInterruptedTransferContinuesWithARangeRequest) {
  Harness harness({{"model.safetensors", weights(50'000)}});
  harness.hub->cuts["model.safetensors"] = {20'000, 5'000};
  auto done = download_checkpoint(*harness.client, harness.cache, harness.manifest());
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_THAT(harness.ranges_asked("model.safetensors"),
              ElementsAre("-", "bytes=20000-", "bytes=25000-"));
  EXPECT_EQ(done->resumed_transfers, 2);
  EXPECT_EQ(done->bytes_fetched, 50'000u);
  EXPECT_EQ(*read_file(done->snapshot / "model.safetensors"), weights(50'000));
}

TEST(CheckpointDownload, ATransferThatMakesNoProgressStopsAndKeepsThePartialFile) {
  Harness harness({{"model.safetensors", weights(50'000)}});
  harness.hub->cuts["model.safetensors"] = {20'000, 0};
  auto done = download_checkpoint(*harness.client, harness.cache, harness.manifest());
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(done.error().message(), HasSubstr("stopped at byte 20000 of 50000"));
  const fs::path partial =
      harness.cache.blob_path(*ModelId::parse("org/m"), sha256(weights(50'000))).string() +
      ".incomplete";
  EXPECT_EQ(fs::file_size(partial), 20'000u);

  // The next call continues it.
  auto resumed = download_checkpoint(*harness.client, harness.cache, harness.manifest());
  ASSERT_TRUE(resumed.ok()) << resumed.error().message();
  EXPECT_EQ(resumed->bytes_reused, 20'000u);
  EXPECT_EQ(*read_file(resumed->snapshot / "model.safetensors"), weights(50'000));
  EXPECT_FALSE(fs::exists(partial));
}

TEST(CheckpointDownload, AServerThatIgnoresRangeIsReadFromTheStart) {
  Harness harness({{"model.safetensors", weights(30'000)}});
  harness.hub->cuts["model.safetensors"] = {10'000};
  harness.hub->ignore_range = true;
  auto done = download_checkpoint(*harness.client, harness.cache, harness.manifest());
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(*read_file(done->snapshot / "model.safetensors"), weights(30'000));
}

TEST(CheckpointDownload, WrongBytesAreAnErrorNamingTheFileAndThePartialIsDeleted) {
  Harness harness({{"model.safetensors", weights(4'000)}});
  auto manifest = harness.manifest();
  harness.hub->tampered["model.safetensors"] = weights(4'000);
  harness.hub->tampered["model.safetensors"][100] ^= 1;
  auto done = download_checkpoint(*harness.client, harness.cache, manifest);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(done.error().message(), HasSubstr("\"model.safetensors\" of org/m"));
  EXPECT_THAT(done.error().message(), HasSubstr("sha256"));
  const fs::path blob =
      harness.cache.blob_path(*ModelId::parse("org/m"), manifest.files[0].blob_name());
  EXPECT_FALSE(fs::exists(blob));
  EXPECT_FALSE(fs::exists(blob.string() + ".incomplete"));
}

TEST(CheckpointDownload, ASizeTheHeadersDisagreeOnIsAnError) {
  Harness harness({{"model.safetensors", weights(4'000)}});
  harness.hub->size_header_override["model.safetensors"] = "3999";
  auto done = download_checkpoint(*harness.client, harness.cache, harness.manifest());
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(done.error().message(), HasSubstr("3999 bytes, its tree 4000"));
}

TEST(CheckpointDownload, OfflineAnswersFromTheCacheOrSaysWhatIsMissing) {
  Harness online({{"config.json", "{}"}, {"model.safetensors", weights(1'000)}});
  const auto manifest = online.manifest();
  ASSERT_TRUE(download_checkpoint(*online.client, online.cache, manifest).ok());

  Harness offline({}, true, "checkpoint-download-offline");
  auto cached = download_checkpoint(*offline.client, online.cache, manifest);
  ASSERT_TRUE(cached.ok()) << cached.error().message();
  EXPECT_EQ(cached->bytes_fetched, 0u);
  auto missing = download_checkpoint(*offline.client, offline.cache, manifest);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().has_reason(reason::kNotCached));
  EXPECT_THAT(missing.error().message(), HasSubstr("\"config.json\" of org/m"));
  EXPECT_TRUE(offline.hub->requests.empty());
}

TEST(CheckpointDownload, ATreeEntryThatEscapesTheRepoIsRefused) {
  Harness harness(std::map<std::string, std::string>{{"../../etc/passwd", "x"}});
  auto tree = fetch_repo_tree(*harness.client, *ModelId::parse("org/m"), kCommit);
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(tree.error().message(), HasSubstr("the tree of org/m"));
}

TEST(CheckpointDownload, OtherWeightFormatsAreLeftOutBesideSafetensors) {
  const auto named = [](std::vector<std::string> paths) {
    std::vector<RepoFile> files;
    for (auto& path : paths) files.push_back(RepoFile{std::move(path), 1, "b", std::nullopt});
    return files;
  };
  const auto paths = [](const std::vector<RepoFile>& files) {
    std::vector<std::string> out;
    for (const auto& file : files) out.push_back(file.path);
    return out;
  };
  EXPECT_THAT(
      paths(files_for_loading(
          named({"config.json", "model.safetensors", "pytorch_model.bin", "flax_model.msgpack",
                 "onnx/model.onnx", "tokenizer.json", "1_Pooling/config.json"}))),
      ElementsAre("config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json"));
  // Without safetensors the other formats are all there is: kept.
  EXPECT_THAT(paths(files_for_loading(named({"config.json", "pytorch_model.bin"}))),
              ElementsAre("config.json", "pytorch_model.bin"));
}

// --- HubClient::get_streamed ---------------------------------------------------------------------

class RecordingSink final : public BodySink {
 public:
  std::vector<long> heads;
  std::string body;
  Status begin(const HttpResponse& head) override {
    heads.push_back(head.status);
    return ok_status();
  }
  Status write(std::string_view bytes) override {
    body += bytes;
    return ok_status();
  }
};

//! Answers get_streamed from a script: a status with a body, or a body cut by an error.
class ScriptedStream final : public HttpTransport {
 public:
  struct Step {
    long status;
    std::string body;
    bool cut = false;
  };
  std::deque<Step> script;
  int calls = 0;
  Result<HttpResponse> get(const HttpRequest&) override { return internal_error("unused"); }
  Result<HttpResponse> get_streamed(const HttpRequest& request, BodySink& sink) override {
    ++calls;
    const Step step = script.front();
    script.pop_front();
    HttpResponse head{step.status, {}, "", request.url, {}};
    CANRUN_RETURN_IF_ERROR(sink.begin(head));
    CANRUN_RETURN_IF_ERROR(sink.write(step.body));
    if (step.cut) return Error(ErrorCode::kUnavailable, "connection reset");
    return head;
  }
};

TEST(HubClientStreamed, AnErrorPageNeverReachesTheSinkAndIsRetried) {
  auto transport = std::make_unique<ScriptedStream>();
  transport->script = {{503, "<html>busy</html>"}, {200, "the file"}};
  ScriptedStream* stream = transport.get();
  HubClient client(HubConfig{}, std::move(transport), [](std::chrono::milliseconds) {});
  RecordingSink sink;
  auto response = client.get_streamed("/org/m/resolve/main/f", {}, sink);
  ASSERT_TRUE(response.ok()) << response.error().message();
  EXPECT_EQ(stream->calls, 2);
  EXPECT_THAT(sink.heads, ElementsAre(200));
  EXPECT_EQ(sink.body, "the file");
}

TEST(HubClientStreamed, ABodyCutShortIsNotRetriedOverWhatTheSinkHas) {
  auto transport = std::make_unique<ScriptedStream>();
  transport->script = {{200, "the fi", true}, {200, "the file"}};
  ScriptedStream* stream = transport.get();
  HubClient client(HubConfig{}, std::move(transport), [](std::chrono::milliseconds) {});
  RecordingSink sink;
  auto response = client.get_streamed("/org/m/resolve/main/f", {}, sink);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(stream->calls, 1);
  EXPECT_EQ(sink.body, "the fi");
}

TEST(HubClientStreamed, GatedAndNotFoundKeepTheirReasons) {
  for (const auto& [status, wanted] :
       {std::pair<long, std::string_view>{401, reason::kGated}, {404, reason::kNotFound}}) {
    auto transport = std::make_unique<ScriptedStream>();
    transport->script = {{status, "{\"error\":\"no\"}"}};
    HubClient client(HubConfig{}, std::move(transport), [](std::chrono::milliseconds) {});
    RecordingSink sink;
    auto response = client.get_streamed("/org/m/resolve/main/f", {}, sink);
    ASSERT_FALSE(response.ok());
    EXPECT_TRUE(response.error().has_reason(wanted)) << status;
    EXPECT_TRUE(sink.body.empty());
  }
}

}  // namespace
}  // namespace canrun::hub
