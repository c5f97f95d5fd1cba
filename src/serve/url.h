// Decoding and checking of request targets: the server hands the API only text that is
// well-formed UTF-8 without NUL, and a path without "." or ".." segments.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace canrun::serve {

//! "%41b+c" → "Ab+c" (with plus_as_space, "Ab c"). The error names the bad escape or says
//! the result is not UTF-8 or holds a NUL or control byte.
Result<std::string> percent_decode(std::string_view text, bool plus_as_space);

struct RequestTarget {
  std::string path;                          //!< decoded, starts with '/'
  std::map<std::string, std::string> query;  //!< decoded; a repeated name is an error
};

//! Splits "/a/b?x=1&y=2" and decodes both parts. Errors: no leading '/', bad escapes, invalid
//! UTF-8, a "." or ".." path segment, a repeated query parameter.
Result<RequestTarget> parse_target(std::string_view target);

//! `text` with every byte outside [A-Za-z0-9-._~] percent-encoded (for building URLs in tests
//! and the page's links).
std::string percent_encode(std::string_view text);

}  // namespace canrun::serve
