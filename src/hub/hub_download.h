// Downloading repo files into the HF cache (config.json, tokenizer files; weights only when a
// test runs), with conditional requests: a file already cached for the revision is asked for
// with If-None-Match: "<etag>", and a 304 answer keeps the cached copy.
//
// Thread safety: as HubClient (one thread at a time per client).
#pragma once

#include <filesystem>
#include <string_view>

#include "core/model_id.h"
#include "core/result.h"
#include "hub/hf_cache.h"
#include "hub/hub_client.h"

namespace canrun::hub {

//! What a download did.
struct CachedFile {
  std::filesystem::path path;  //!< snapshots/<commit>/<file> in the cache
  std::string commit;          //!< the commit the file belongs to
  bool fetched = false;        //!< false: the cached copy was used (offline, commit, or 304)
};

//! The file at `revision`, from the cache when it is there and cannot have changed (a commit,
//! or offline), else from the Hub. Offline and not cached is kUnavailable naming the file.
//! The Hub's answer must carry X-Repo-Commit and an ETag (X-Linked-Etag for LFS files).
Result<CachedFile> download_to_cache(HubClient& client, const HfCache& cache, const ModelId& id,
                                     const Revision& revision, std::string_view filename);

}  // namespace canrun::hub
