#include "core/parallelism.h"

#include <fmt/format.h>

#include "core/text.h"

namespace canrun {

std::string_view to_string(Parallelism parallelism) {
  switch (parallelism) {
    case Parallelism::kTensor:
      return "tp";
    case Parallelism::kExpert:
      return "ep";
    case Parallelism::kNone:
      break;
  }
  return "none";
}

std::optional<Parallelism> parse_parallelism(std::string_view text) {
  for (const Parallelism each : {Parallelism::kNone, Parallelism::kTensor, Parallelism::kExpert}) {
    if (to_string(each) == text) return each;
  }
  return std::nullopt;
}

Result<Parallelism> parse_parallelism(std::string_view text, std::string_view what) {
  if (const auto parsed = parse_parallelism(text)) return *parsed;
  return invalid_argument(
      fmt::format("{} {} is not none, tp or ep", what, quote_for_message(text)));
}

}  // namespace canrun
