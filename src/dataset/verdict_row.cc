#include "dataset/verdict_row.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ranges>

#include "core/model_id.h"
#include "core/text.h"
#include "dataset/schema.h"

namespace canrun::dataset {
namespace {

Error column_error(const VerdictRow& row, std::string_view column, const std::string& why) {
  return invalid_argument(fmt::format("row {} ({}): column {} {}",
                                      quote_for_message(row.model_id, 100), row.task, column, why));
}

std::optional<std::string> neuronx_cc_of(const VerdictRow& row) {
  if (row.compiler != "neuronx-cc") return std::nullopt;
  return row.compiler_version;
}

std::optional<std::int32_t> neuron_cores_of(const VerdictRow& row) {
  if (row.backend != "neuron") return std::nullopt;
  return row.cores;
}

//! "none", or distinct parts of the box (process/box.h) in their order: "user,net,mount,pid,pids".
bool is_isolation(std::string_view text) {
  if (text == "none") return true;
  constexpr std::array<std::string_view, 5> kParts = {"user", "net", "mount", "pid", "pids"};
  std::size_t next = 0;  // parts come in kParts' order, each once
  for (const auto part : std::views::split(text, ',')) {
    const std::string_view name(part.begin(), part.end());
    const auto found =
        std::find(kParts.begin() + static_cast<std::ptrdiff_t>(next), kParts.end(), name);
    if (found == kParts.end()) return false;
    next = static_cast<std::size_t>(found - kParts.begin()) + 1;
  }
  return !text.empty();
}

}  // namespace

Result<StackKey> stack_key_of(const VerdictRow& row) {
  // A library on top of transformers (sentence-transformers, diffusers) files its rows under
  // the stack's transformers, so stacks that differ only there keep their own rows.
  if (row.library != kBaseLibrary) {
    const auto stack = nlohmann::json::parse(row.stack, nullptr, false);
    const auto base = stack.is_object() ? stack.find(kBaseLibrary) : stack.end();
    if (stack.is_object() && base != stack.end() && base->is_string()) {
      return StackKey::make(row.backend, row.compiler, row.compiler_version,
                            std::string(kBaseLibrary), base->get<std::string>());
    }
  }
  return StackKey::make(row.backend, row.compiler, row.compiler_version, row.library,
                        row.library_version);
}

void fill_neuron_columns(VerdictRow& row) {
  row.neuronx_cc = neuronx_cc_of(row);
  row.neuron_cores = neuron_cores_of(row);
}

Status check_row(const VerdictRow& row) {
  if (auto id = ModelId::parse(row.model_id); !id.ok()) {
    return column_error(row, "model_id", id.error().message());
  }
  if (row.revision) {
    if (auto revision = Revision::parse(*row.revision); !revision.ok()) {
      return column_error(row, "revision", revision.error().message());
    }
  }
  if (row.task.empty()) return column_error(row, "task", "is empty");
  if (row.device.empty()) return column_error(row, "device", "is empty");
  if (auto key = stack_key_of(row); !key.ok())
    return column_error(row, "stack key", key.error().message());
  const bool excluded = row.result == VerdictResult::kExcluded;
  if (excluded && (!row.exclusion_reason || row.exclusion_reason->empty())) {
    return column_error(row, "exclusion_reason", "is empty but the result is EXCLUDED");
  }
  if (!excluded && row.exclusion_reason) {
    return column_error(row, "exclusion_reason",
                        fmt::format("is set but the result is {}", to_string(row.result)));
  }
  if (row.parallelism && *row.parallelism != "none" && *row.parallelism != "tp" &&
      *row.parallelism != "ep") {
    return column_error(
        row, "parallelism",
        fmt::format("is {}, not none, tp or ep", quote_for_message(*row.parallelism)));
  }
  for (const ColumnSpec& column : verdict_columns()) {
    Status status = std::visit(
        [&](auto member) -> Status {
          const auto& value = row.*member;
          using Value = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<Value, std::optional<double>> ||
                        std::is_same_v<Value, std::optional<std::int32_t>> ||
                        std::is_same_v<Value, std::optional<std::int64_t>>) {
            // The judge's scores are log-likelihoods: any finite number.
            const bool signed_ok = column.name == "judge_score" || column.name == "judge_threshold";
            if (value && !std::isfinite(static_cast<double>(*value))) {
              return column_error(row, column.name,
                                  fmt::format("is {}; it must be a finite number", *value));
            }
            if (value && *value < 0 && !signed_ok) {
              return column_error(row, column.name,
                                  fmt::format("is {}; it must be a finite number >= 0", *value));
            }
          }
          return ok_status();
        },
        column.member);
    CANRUN_RETURN_IF_ERROR(status);
  }
  if (row.cores && *row.cores < 1) return column_error(row, "cores", "must be at least 1");
  const auto stack = nlohmann::json::parse(row.stack, nullptr, /*allow_exceptions=*/false);
  if (!stack.is_object() ||
      !std::all_of(stack.begin(), stack.end(), [](const auto& v) { return v.is_string(); })) {
    return column_error(row, "stack",
                        fmt::format("is {}, not a JSON object of name → version strings",
                                    quote_for_message(row.stack, 60)));
  }
  if (row.canrun_version.empty()) return column_error(row, "canrun_version", "is empty");
  if (row.isolation && !is_isolation(*row.isolation)) {
    return column_error(row, "isolation",
                        fmt::format("is {}; it must be none or parts of user,net,mount,pid,pids",
                                    quote_for_message(*row.isolation, 60)));
  }
  // The derived columns agree with the ones they come from (fill_neuron_columns).
  const auto text = [](const auto& value) {
    return value ? fmt::format("{}", *value) : std::string("null");
  };
  const auto neuronx_cc = neuronx_cc_of(row);
  if (row.neuronx_cc != neuronx_cc) {
    return column_error(row, "neuronx_cc",
                        fmt::format("is {}; with compiler {} it must be {}", text(row.neuronx_cc),
                                    row.compiler, text(neuronx_cc)));
  }
  const auto neuron_cores = neuron_cores_of(row);
  if (row.neuron_cores != neuron_cores) {
    return column_error(row, "neuron_cores",
                        fmt::format("is {}; with backend {} it must be {}", text(row.neuron_cores),
                                    row.backend, text(neuron_cores)));
  }
  return ok_status();
}

void apply_storage_policy(VerdictRow& row) {
  for (const ColumnSpec& column : verdict_columns()) {
    std::visit(
        [&](auto member) {
          auto& value = row.*member;
          using Value = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<Value, std::string>) {
            value = make_valid_utf8(value);
          } else if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
            if (value) *value = make_valid_utf8(*value);
          } else if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
            for (auto& item : value) item = make_valid_utf8(item);
          }
        },
        column.member);
  }
  if (row.error) row.error = keep_tail(std::move(*row.error), kMaxErrorBytes);
  fill_neuron_columns(row);
  if (row.output_text && row.output_text->size() > kMaxOutputTextBytes) {
    const std::string& text = *row.output_text;
    const std::size_t end = utf8_boundary_at_or_before(text, kMaxOutputTextBytes);
    row.output_text = fmt::format("{}\n[canrun: {} bytes cut]",
                                  std::string_view(text).substr(0, end), text.size() - end);
  }
}

}  // namespace canrun::dataset
