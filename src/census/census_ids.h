// The ids of the census's checkpoints, for whoever reads a census dataset without running one
// (the Space): a type's one-core id and its sharded runs' second id.
#pragma once

#include <string_view>

namespace canrun::census {

//! The id organisations of the census's checkpoints: one core, and the sharded runs' second id.
inline constexpr std::string_view kOrg = "canrun-census";
inline constexpr std::string_view kShardedOrg = "canrun-census-sharded";

//! Whether `owner` (a model id's organisation) is one of the census's.
constexpr bool is_census_owner(std::string_view owner) {
  return owner == kOrg || owner == kShardedOrg;
}

}  // namespace canrun::census
