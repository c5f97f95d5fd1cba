// The page's files (web/), held in memory with a strong ETag and a gzip copy each. Only the
// names in the table are ever served: there is no path from a request to the file system.
//
// Thread safety: immutable after load; const methods may be called from many threads.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "serve/http_server.h"

namespace canrun::serve {

struct StaticAsset {
  std::string content_type;
  std::string etag;  //!< quoted, e.g. "\"3f2a...\""
  std::shared_ptr<const std::string> body;
  std::shared_ptr<const std::string> gzip_body;  //!< null when gzip would not be smaller
};

class StaticAssets {
 public:
  //! Reads from `web_dir` each file the build embeds (src/serve/CMakeLists.txt's _page_files,
  //! the one list of the page's files); the error names a missing or unreadable file.
  static Result<StaticAssets> load(const std::filesystem::path& web_dir);
  //! Builds from name → content (the embedded copy).
  static StaticAssets from_contents(const std::map<std::string, std::string>& contents);

  //! The asset at request path `path` ("/" is index.html), or nullptr.
  const StaticAsset* find(std::string_view path) const;

  //! 200 with the asset (gzip when accepted), or 304 when If-None-Match has its ETag.
  HttpResponse respond(const StaticAsset& asset, const HttpRequest& request) const;

 private:
  std::map<std::string, StaticAsset, std::less<>> by_path_;
};

//! `bytes` compressed as gzip (zlib), or an empty string if zlib fails.
std::string gzip_compress(std::string_view bytes);

}  // namespace canrun::serve
