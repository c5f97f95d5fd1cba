#include "run/classify.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <regex>

namespace canrun::run {
namespace {

bool mentions_oom(std::string_view text) {
  static constexpr std::array<std::string_view, 8> kPatterns = {
      "OutOfMemoryError",   "CUDA out of memory", "out of memory",         "MemoryError",
      "Failed to allocate",  // Neuron runtime (NRT) allocation failures
      "RESOURCE_EXHAUSTED", "NRT_RESOURCE",       "Cannot allocate memory"};
  return std::any_of(kPatterns.begin(), kPatterns.end(), [&](std::string_view pattern) {
    return text.find(pattern) != std::string_view::npos;
  });
}

std::string last_error_line(std::string_view text) {
  // The last line that looks like "SomeError: message" (Python's final traceback line).
  static const std::regex kErrorLine(
      R"(^[A-Za-z_][\w.]*(Error|Exception|Failed|Interrupt|Exit)\b.*$)");
  std::string last;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line(text.substr(start, end - start));
    if (std::regex_match(line, kErrorLine)) last = line;
    start = end + 1;
  }
  if (!last.empty()) return last;
  // Otherwise the last non-empty line.
  std::string_view trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' '))
    trimmed.remove_suffix(1);
  const std::size_t newline = trimmed.rfind('\n');
  return std::string(newline == std::string_view::npos ? trimmed : trimmed.substr(newline + 1));
}

}  // namespace

std::string useful_tail(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
  // Walk back over max_lines line breaks, not counting the one that ends the text.
  std::size_t start = text.size();
  if (start > 0 && text[start - 1] == '\n') --start;
  for (std::size_t lines = 0; start > 0; --start) {
    if (text[start - 1] == '\n' && ++lines == max_lines) break;
  }
  if (text.size() - start > max_bytes) start = text.size() - max_bytes;
  return std::string(text.substr(start));
}

std::string error_signature(std::string_view error_text,
                            const std::vector<std::string>& error_types) {
  std::string line = last_error_line(error_text);
  static const std::array<std::pair<std::regex, const char*>, 7> kRules = {{
      // transformers' "has model type `x` but Transformers does not recognize this
      // architecture": one cause (the stack lacks the architecture), whichever model it is.
      {std::regex(R"(model type `[^`]*`)"), "model type `<model type>`"},
      {std::regex(R"(0x[0-9a-fA-F]+)"), "0x?"},
      {std::regex(R"((/[\w.+-]+)+/?)"), "<path>"},
      {std::regex(R"(\b(tmp|temp)[\w-]*)"), "<tmp>"},
      {std::regex(R"(\b[0-9a-f]{12,}\b)"), "<hash>"},
      {std::regex(R"(\b\d+(\.\d+)?\b)"), "N"},
      {std::regex(R"(\s+)"), " "},
  }};
  for (const auto& [pattern, replacement] : kRules)
    line = std::regex_replace(line, pattern, replacement);
  if (line.size() > 300) line.resize(300);
  if (!error_types.empty()) {
    std::string chain;
    for (const auto& type : error_types) chain += (chain.empty() ? "" : "<") + type;
    return fmt::format("{} | {}", chain, line);
  }
  return line;
}

std::optional<Classification> classify(const process::ProcessOutcome& outcome,
                                       const std::optional<RunReport>& report) {
  if (!outcome.timed_out && report && report->ok) return std::nullopt;
  Classification verdict{VerdictResult::kCrash, "", ""};
  const std::string stderr_tail = useful_tail(outcome.stderr_tail);
  if (outcome.timed_out) {
    verdict.result = VerdictResult::kTimeout;
    verdict.error =
        fmt::format("ran past its time limit of {:g} s; every process of it was killed\n{}",
                    outcome.timeout_s, stderr_tail);
    verdict.signature = "TIMEOUT";
    return verdict;
  }
  const bool rank_died = report && std::find(report->error_types.begin(), report->error_types.end(),
                                             "RankDied") != report->error_types.end();
  if (rank_died) {  // a rank of a sharded run died; rank 0 reported it
    verdict.error = useful_tail(report->error);
    verdict.signature = error_signature(report->error, report->error_types);
    return verdict;
  }
  if (report) {  // run.py reported its own failure
    const bool oom = std::any_of(report->error_types.begin(), report->error_types.end(),
                                 [](const std::string& type) { return mentions_oom(type); }) ||
                     mentions_oom(last_error_line(report->error));
    if (oom) {
      verdict.result = VerdictResult::kFailOom;
    } else if (report->stage == "load") {
      verdict.result = VerdictResult::kFailLoad;
    } else if (report->stage == "compile") {
      verdict.result = VerdictResult::kFailCompile;
    } else {
      verdict.result = VerdictResult::kFailRuntime;
    }
    verdict.error = useful_tail(report->error);
    verdict.signature = error_signature(report->error, report->error_types);
    return verdict;
  }
  // No result line: the process died.
  if (outcome.term_signal) {
    verdict.error =
        fmt::format("killed by signal {} ({}) without a result\n{}", *outcome.term_signal,
                    ::strsignal(*outcome.term_signal), stderr_tail);
    verdict.signature = fmt::format("signal {}", *outcome.term_signal);
  } else {
    verdict.error = fmt::format("exited with status {} without a result\n{}",
                                outcome.exit_code.value_or(-1), stderr_tail);
    verdict.signature = fmt::format("exit {} | {}", outcome.exit_code.value_or(-1),
                                    error_signature(outcome.stderr_tail, {}));
  }
  if (mentions_oom(last_error_line(outcome.stderr_tail))) verdict.result = VerdictResult::kFailOom;
  return verdict;
}

}  // namespace canrun::run
