#include "serve/static_assets.h"

#include <fmt/format.h>
#include <zlib.h>

#include "core/atomic_file.h"
#include "serve/embedded_assets.h"

namespace canrun::serve {
namespace {

std::string content_type_of(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

//! FNV-1a, 64 bits: stable across runs, enough to tell versions of a file apart.
std::string fingerprint(std::string_view bytes) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const char byte : bytes) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 1099511628211ull;
  }
  return fmt::format("\"{:016x}-{:x}\"", hash, bytes.size());
}

}  // namespace

std::string gzip_compress(std::string_view bytes) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return {};
  }
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return result == Z_STREAM_END ? out : std::string();
}

StaticAssets StaticAssets::from_contents(const std::map<std::string, std::string>& contents) {
  StaticAssets assets;
  for (const auto& [name, content] : contents) {
    StaticAsset asset;
    asset.content_type = content_type_of(name);
    asset.etag = fingerprint(content);
    asset.body = std::make_shared<const std::string>(content);
    if (std::string packed = gzip_compress(content);
        !packed.empty() && packed.size() < content.size()) {
      asset.gzip_body = std::make_shared<const std::string>(std::move(packed));
    }
    assets.by_path_.emplace("/" + name, asset);
    if (name == "index.html") assets.by_path_.emplace("/", std::move(asset));
  }
  return assets;
}

Result<StaticAssets> StaticAssets::load(const std::filesystem::path& web_dir) {
  std::map<std::string, std::string> contents;
  for (const auto& [name, embedded] : embedded_page_files()) {
    auto text = read_file(web_dir / name);
    if (!text.ok()) return text.error().with_context("page asset");
    contents.emplace(name, std::move(*text));
  }
  return from_contents(contents);
}

const StaticAsset* StaticAssets::find(std::string_view path) const {
  const auto found = by_path_.find(path);
  return found == by_path_.end() ? nullptr : &found->second;
}

HttpResponse StaticAssets::respond(const StaticAsset& asset, const HttpRequest& request) const {
  HttpResponse response;
  response.content_type = asset.content_type;
  response.headers = {{"ETag", asset.etag},
                      {"Cache-Control", "no-cache"},
                      {"Vary", "Accept-Encoding"},
                      {"X-Content-Type-Options", "nosniff"}};
  if (asset.content_type.starts_with("text/html")) {
    response.headers.emplace_back(
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  }
  // If-None-Match may list several tags, or *.
  if (!request.if_none_match.empty() &&
      (request.if_none_match == "*" ||
       request.if_none_match.find(asset.etag) != std::string::npos)) {
    response.status = 304;
    response.body = std::make_shared<const std::string>();
    return response;
  }
  if (request.accepts_gzip && asset.gzip_body) {
    response.headers.emplace_back("Content-Encoding", "gzip");
    response.body = asset.gzip_body;
  } else {
    response.body = asset.body;
  }
  return response;
}

}  // namespace canrun::serve
