// A request's query parameters as the Space's API reads them: one parameter's value, the 400
// errors that name the parameters at fault, and the checks every API request starts with (no
// parameter its route does not take; the model id a model route's path names).
//
// Errors are the core Error: kInvalidArgument with reason::kBadParameter and the parameters at
// fault as its subjects, which the service turns into an HTTP 400 that names them.
//
// Thread safety: free functions of their arguments.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"

namespace canrun::serve {

//! A request's decoded query parameters: name → value.
using QueryParams = std::map<std::string, std::string>;

//! The value of parameter `name`; empty when not given.
std::string param_of(const QueryParams& params, std::string_view name);

//! The parameters `names` are wrong, as `message` says: a 400 that names them.
Error bad_parameters(std::string message, std::vector<std::string> names);

//! "a, b, c" for a message listing the known values; "none" when there are none.
std::string known_list(const std::vector<std::string>& names);

//! An error naming every parameter of `params` that `allowed` does not list ("`route` takes no
//! parameters" when it lists none).
Status check_parameters(const QueryParams& params, const std::vector<std::string_view>& allowed,
                        std::string_view route);

//! Parameter `name`'s value `text` as a whole number from 0 to `max`.
Result<std::size_t> parse_count(const std::string& name, const std::string& text, std::size_t max);

//! The model id that follows `prefix` in `path` (/api/model/<org>/<name>); a bad one is an
//! error naming the parameter "model".
Result<ModelId> model_id_after(std::string_view path, std::string_view prefix);

}  // namespace canrun::serve
