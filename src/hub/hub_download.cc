#include "hub/hub_download.h"

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/text.h"
#include "hub/checkpoint_files.h"

namespace canrun::hub {
namespace {

//! An ETag header value as huggingface_hub names blobs: W/ and quotes removed.
std::string blob_name(std::string etag) {
  if (etag.starts_with("W/")) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

}  // namespace

Result<CachedFile> download_to_cache(HubClient& client, const HfCache& cache, const ModelId& id,
                                     const Revision& revision, std::string_view filename) {
  CANRUN_RETURN_IF_ERROR(check_repo_filename(filename));
  const auto cached = cache.cached_file(id, revision, filename);
  if (cached && (revision.is_commit() || client.config().offline)) {
    return CachedFile{*cached, *cache.commit_of(id, revision), false};
  }
  if (client.config().offline) {
    return Error(ErrorCode::kUnavailable,
                 fmt::format("HF_HUB_OFFLINE is set and {} of {} at {} is not in the HF cache {}",
                             quote_for_message(filename), id.str(), revision.str(),
                             quote_for_message(cache.root().string())));
  }
  std::vector<std::pair<std::string, std::string>> headers;
  const auto cached_etag = cache.cached_etag(id, revision, filename);
  if (cached_etag) headers.emplace_back("If-None-Match", fmt::format("\"{}\"", *cached_etag));
  const std::string url = resolve_url(client.config(), id, revision.str(), filename);
  CANRUN_ASSIGN_OR_RETURN(HttpResponse response, client.get(url, std::move(headers)));
  const auto commit = response.header("x-repo-commit");
  if (response.status == 304 && cached) {
    const std::string old_commit = *cache.commit_of(id, revision);
    if (!commit || *commit == old_commit) return CachedFile{*cached, old_commit, false};
    // Same bytes, new commit (the branch moved without touching this file): link it there too.
    CANRUN_ASSIGN_OR_RETURN(const std::string bytes, read_file(*cached));
    CANRUN_ASSIGN_OR_RETURN(auto path,
                            cache.store(id, revision, *commit, filename, *cached_etag, bytes));
    return CachedFile{std::move(path), *commit, false};
  }
  if (response.status != 200) {
    return corrupt(
        fmt::format("GET {}: HTTP {} where the file was expected", url, response.status));
  }
  const auto etag = response.header("x-linked-etag").has_value() ? response.header("x-linked-etag")
                                                                 : response.header("etag");
  if (!commit || !etag) {
    return corrupt(fmt::format("GET {}: the answer lacks {}; cannot place it in the HF cache", url,
                               commit ? "an ETag" : "X-Repo-Commit"));
  }
  CANRUN_ASSIGN_OR_RETURN(
      auto path, cache.store(id, revision, *commit, filename, blob_name(*etag), response.body));
  return CachedFile{std::move(path), *commit, true};
}

}  // namespace canrun::hub
