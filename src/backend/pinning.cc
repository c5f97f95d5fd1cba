#include "backend/pinning.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <thread>

#include "core/text.h"

namespace canrun::backend {
namespace {

//! Threads this process may run on (what os.sched_getaffinity(0) counts in run.py).
int host_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

//! A non-negative decimal of ASCII digits only, that fits an int.
std::optional<int> parse_number(std::string_view text) {
  int value = 0;
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  while (true) {
    const auto at = text.find(separator);
    items.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return items;
    text.remove_prefix(at + 1);
  }
}

// "range": "A-B" (or "A"), contiguous and increasing; each rank gets a contiguous slice.
std::optional<std::string> range_value(CoreRange cores) {
  if (cores.count == 1) return std::to_string(cores.first);
  return fmt::format("{}-{}", cores.first, cores.first + cores.count - 1);
}
std::optional<std::vector<std::string>> range_ids(std::string_view given) {
  const auto dash = given.find('-');
  const auto first = parse_number(given.substr(0, dash));
  const auto last = dash == std::string_view::npos ? first : parse_number(given.substr(dash + 1));
  // No machine has 65536 cores: a wider range is a mistake, not a list to build.
  if (!first || !last || *last - *first >= 65536) return std::nullopt;
  std::vector<std::string> ids;  // empty when decreasing: it names no core
  for (int core = *first; core <= *last; ++core) ids.push_back(std::to_string(core));
  return ids;
}
std::string range_write(const std::vector<std::string>& slice) {
  return slice.size() == 1 ? slice.front() : fmt::format("{}-{}", slice.front(), slice.back());
}

// "list": comma-separated ids, numbers or names (CUDA takes GPU-<uuid> and MIG-<uuid> too);
// each rank gets a slice.
std::optional<std::string> list_value(CoreRange cores) {
  std::string list;
  for (int core = cores.first; core < cores.first + cores.count; ++core)
    list += fmt::format("{}{}", list.empty() ? "" : ",", core);
  return list;
}
std::optional<std::vector<std::string>> list_ids(std::string_view given) {
  std::vector<std::string> ids;
  for (const std::string_view id : split(given, ',')) {
    if (id.empty() || std::any_of(id.begin(), id.end(), [](unsigned char c) {
          return std::isspace(c) || std::iscntrl(c);
        })) {
      return std::nullopt;
    }
    ids.emplace_back(id);
  }
  return ids;
}
std::string list_write(const std::vector<std::string>& slice) {
  return fmt::format("{}", fmt::join(slice, ","));
}

// "count": a number of threads. The host decides which; the ranks share them evenly.
std::optional<std::string> count_value(CoreRange) { return std::nullopt; }

struct PinningRule {
  std::string_view syntax;
  std::string_view form;  //!< what a value looks like, for messages
  //! The value that gives a process `cores`; nullopt where the host decides.
  std::optional<std::string> (*value)(CoreRange cores);
  //! The ids a value names, in order; nullopt when it is not of `form`. None for "count": its
  //! value is a number that every rank shares, not a set of ids each rank gets a slice of.
  std::optional<std::vector<std::string>> (*ids)(std::string_view given);
  //! How one rank's slice of ids is written.
  std::string (*write)(const std::vector<std::string>& slice);
};

// clang-format off
const PinningRule kRules[] = {
//  syntax   form, for messages           value        ids        write
    {"count", "a thread count (N > 0)",  count_value, nullptr,   nullptr},
    {"range", "a core range (N or A-B)", range_value, range_ids, range_write},
    {"list",  "a list of ids (N,M,...)", list_value,  list_ids,  list_write},
};
// clang-format on

const PinningRule* find_rule(std::string_view syntax) {
  for (const PinningRule& rule : kRules) {
    if (rule.syntax == syntax) return &rule;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string_view> pinning_syntaxes() {
  std::vector<std::string_view> names;
  for (const PinningRule& rule : kRules) names.push_back(rule.syntax);
  return names;
}

bool is_pinning_syntax(std::string_view syntax) { return find_rule(syntax) != nullptr; }

std::optional<std::string> pinning_value(const BackendProfile& profile, CoreRange cores) {
  const PinningRule* rule = find_rule(profile.pinning_syntax);
  if (rule == nullptr || profile.pinning_env.empty()) return std::nullopt;
  return rule->value(cores);
}

Result<std::string> rank_share(std::string_view syntax, std::string_view given, int cores,
                               int rank) {
  const PinningRule* rule = find_rule(syntax);
  if (rule == nullptr) {
    return invalid_argument(fmt::format("pinning syntax {} is not {}", quote_for_message(syntax),
                                        fmt::join(pinning_syntaxes(), ", ")));
  }
  if (cores < 1 || rank < 0 || rank >= cores) {
    return invalid_argument(fmt::format("rank {} of {} ranks does not exist", rank, cores));
  }
  auto malformed = [&] {
    return invalid_argument(
        fmt::format("pinning value {} is not {}", quote_for_message(given), rule->form));
  };
  if (rule->ids == nullptr) {  // count: threads, shared evenly, at least one each
    int threads = host_threads();
    if (!given.empty()) {
      const auto number = parse_number(given);
      if (!number || *number < 1) return malformed();
      threads = *number;
    }
    return std::to_string(std::max(1, threads / cores));
  }
  // Unset: the first `cores` cores, written as canrun would write them.
  const std::string value = given.empty() ? *rule->value(CoreRange{0, cores}) : std::string(given);
  const auto ids = rule->ids(value);
  if (!ids) return malformed();
  const std::size_t share = ids->size() / static_cast<std::size_t>(cores);
  if (share == 0) {
    return invalid_argument(
        fmt::format("pinning value {} gives fewer than the {} cores this plan needs",
                    quote_for_message(value), cores));
  }
  const auto begin = ids->begin() + static_cast<std::ptrdiff_t>(share * rank);
  return rule->write(std::vector<std::string>(begin, begin + static_cast<std::ptrdiff_t>(share)));
}

}  // namespace canrun::backend
