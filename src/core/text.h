// Small text helpers shared by every stage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace canrun {

//! `text` in double quotes for an error message, safe to print on a terminal: quotes,
//! backslashes, control bytes and non-ASCII bytes are escaped (\n, \", \x00, ...), and text
//! longer than `max_chars` is cut with "..." and its full length said.
std::string quote_for_message(std::string_view text, std::size_t max_chars = 80);

//! The parts of a comma-separated list ("a,b,,c" → a, b, c): empty parts are left out.
std::vector<std::string> split_list(std::string_view text);

//! quote_for_message for paths and locations, whole (up to 1,024 characters): their ends are
//! what tell them apart.
std::string quote_whole(std::string_view text);

//! Like quote_for_message, but well-formed UTF-8 characters stay as they are (for showing
//! generated text); control bytes, quotes, backslashes and malformed bytes are escaped.
std::string quote_for_display(std::string_view text, std::size_t max_bytes = 200);

//! Describe one byte as a user would want to read it: 'a', '"', newline (0x0a), NUL (0x00).
std::string describe_byte(unsigned char byte);

//! Whether `text` is well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace canrun

namespace canrun {

//! `text` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string make_valid_utf8(std::string_view text);

//! The largest position <= `pos` that does not fall inside a UTF-8 sequence of `text`.
std::size_t utf8_boundary_at_or_before(std::string_view text, std::size_t pos);

//! `text` when it holds at most `max_bytes`; else its last `max_bytes` (from a character
//! boundary) after a line "[canrun: N bytes cut from the start]": the end of a log or a
//! traceback says what went wrong.
std::string keep_tail(std::string text, std::size_t max_bytes);

}  // namespace canrun

namespace canrun {

//! Bytes for people: "512 B", "1.5 KiB", "23.9 GiB".
std::string format_bytes(std::int64_t bytes);

//! FNV-1a, 64 bits: a stable (not secure) digest for cache file names and keys.
std::uint64_t fnv1a(std::string_view text);

//! `text` with ASCII letters lower-cased (other bytes as they are): model ids, module names.
std::string ascii_lower(std::string_view text);

}  // namespace canrun
