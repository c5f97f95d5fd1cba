// Python source literals for values canrun places into run.py. Every value goes through
// these, so no input (a model id, a prompt, a profile field) can end a string early or add
// a line of code: quotes, backslashes, newlines, NUL and non-ASCII are all escaped.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace canrun::recipe {

//! A double-quoted Python str literal holding exactly `text`; only printable ASCII appears
//! raw, everything else as \\xNN, \\uNNNN or \\UNNNNNNNN. kInvalidArgument for bad UTF-8.
Result<std::string> python_string(std::string_view text);

//! ["a", "b"]
Result<std::string> python_string_list(const std::vector<std::string>& items);

//! {"key": True, ...}
Result<std::string> python_bool_dict(const std::map<std::string, bool>& items);

//! Text safe inside a comment or docstring: printable ASCII other than '\\' and '"'; any
//! other byte becomes '?'.
std::string docstring_text(std::string_view text);

}  // namespace canrun::recipe
