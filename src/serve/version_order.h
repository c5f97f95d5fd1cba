// Newest-first ordering of version strings, part by part: "2.16.372.0" is newer than "2.9.1",
// a release is newer than its pre-releases ("5.0.0" > "5.0.0rc1"), and a local label after
// '+' only breaks ties ("2.16.372.0+4a9b2326" vs "2.16.372.0").
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace canrun::serve {

//! <0 when `a` is older than `b`, 0 when the same, >0 when newer.
int compare_versions(std::string_view a, std::string_view b);

}  // namespace canrun::serve
