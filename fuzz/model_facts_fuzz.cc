// libFuzzer target: JSON text → ModelFacts (the Hub's model info, config.json) and → a
// rankings page entry / snapshot. Any input must map or give a Result error; never a crash,
// a sanitizer report or an uncaught exception (nlohmann throws on a wrong get<>).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "hub/model_facts.h"
#include "hub/rankings.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto facts = canrun::hub::facts_from_model_info_text(text, "fuzz");
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) {
    canrun::hub::ModelFacts config_facts;
    (void)canrun::hub::apply_config(json, config_facts).ok();
    (void)canrun::hub::facts_to_json(config_facts)
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto ranked = canrun::hub::ranked_model_from_json(json, "fuzz");
    if (ranked.ok()) (void)canrun::hub::ranked_model_to_json(*ranked).dump();
  }
  if (facts.ok()) {
    (void)canrun::hub::facts_to_json(*facts).dump(-1, ' ', false,
                                                  nlohmann::json::error_handler_t::replace);
  }
  auto snapshot = canrun::hub::snapshot_from_json_text(text, "fuzz");
  if (snapshot.ok()) (void)canrun::hub::snapshot_to_json(*snapshot).dump();
  return 0;
}
