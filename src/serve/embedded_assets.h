// The page's files (web/) compiled into the binary: name → bytes. Generated at build time by
// embed_assets.cmake.
#pragma once

#include <map>
#include <string>

namespace canrun::serve {

std::map<std::string, std::string> embedded_page_files();

}  // namespace canrun::serve
